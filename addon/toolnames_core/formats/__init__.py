"""One adapter per wire format, and the table that finds the adapter for an API."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import RequestView
from toolnames_core.model import format_path

# (status, headers, body) of the answer a blocked request gets instead of the provider's.
BlockResponse = tuple[int, dict[str, str], bytes]


@dataclass(frozen=True, slots=True)
class WireFormat:
    api: str
    title: str
    read_request: Callable[[dict], RequestView]
    block_response: Callable[[str, Finding], BlockResponse]


FORMATS: dict[str, WireFormat] = {}


def register(fmt: WireFormat) -> WireFormat:
    FORMATS[fmt.api] = fmt
    return fmt


def type_name(value: object) -> str:
    """Name a JSON value's type the way a JSON user would."""
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def malformed(where: JsonPath, expected: str, value: object, code: str = "tool-malformed") -> Finding:
    path = format_path(where)
    return Finding(code, "error", path, f"{path} is {type_name(value)}, expected {expected}")


# Importing an adapter registers it; the table is complete once this package is imported.
from toolnames_core.formats import openai_chat  # noqa: E402,F401

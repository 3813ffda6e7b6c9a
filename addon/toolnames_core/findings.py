"""The finding makers adapters and sessions share: a malformed part, a malformed choice, and
how a JSON value is named and shown in their messages."""

from __future__ import annotations

import json

from toolnames_core import codes
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import Severity
from toolnames_core.model import format_path

__all__ = ["bad_choice", "malformed", "shown", "type_name"]


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


def malformed(
    where: JsonPath, expected: str, value: object, code: str = codes.TOOL_MALFORMED
) -> Finding:
    path = format_path(where)
    return Finding(code, "error", path, f"{path} is {type_name(value)}, expected {expected}")


def shown(value: object) -> str:
    """A short JSON rendering of a value for a message; never raises, even on deep nesting."""
    try:
        return json.dumps(value)[:120]
    except (RecursionError, ValueError):
        return type_name(value)


def bad_choice(where: JsonPath, value: object, why: str, severity: Severity = "error") -> Finding:
    """A ``choice-malformed`` finding: the path, the value as sent, and what was expected."""
    path = format_path(where)
    return Finding(codes.CHOICE_MALFORMED, severity, path, f"{path} {shown(value)}: {why}")

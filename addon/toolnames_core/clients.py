"""Which client sent a request, from its headers: the first thing a user needs to know to
find the code to fix.

Each signature below was read from the headers the client really sends (captured from the
SDKs against a local listener, as the tests do): the openai and anthropic Python SDKs send
``User-Agent: OpenAI/Python 3.57.0`` / ``Anthropic/Python 2.14.0`` and Stainless'
``x-stainless-*`` headers; google-genai sends ``x-goog-api-client: google-genai-sdk/3.6.1
gl-python/3.13.0``; boto3 ``Boto3/1.44.8 md/Botocore#1.44.8 … lang/python#3.13.0``; the
Vercel AI SDK ``ai-sdk/openai-compatible/2.0.62 ai-sdk/provider-utils/4.0.40
runtime/node.js/v20.20.2`` (the provider Mastra's model router speaks through),
``ai-sdk/openai/3.0.141 …`` or ``ai/6.0.326 …``. A client none of them matches is named by
its User-Agent, shortened; one without any is not named.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from toolnames_core.names import escape_text

__all__ = ["CLIENT_HEADERS", "SIGNATURES", "ClientSignature", "client_label"]

_UA_SHOWN = 60


class ClientSignature(NamedTuple):
    """A client known by a header: ``pattern`` captures its version."""

    name: str
    header: str  # lower case
    pattern: re.Pattern


# First match wins: the AI SDK's provider packages before its core "ai/" token, which a
# request from them may carry too.
SIGNATURES: list[ClientSignature] = [
    ClientSignature("openai Python SDK", "user-agent", re.compile(r"^OpenAI/Python (\S+)")),
    ClientSignature("anthropic Python SDK", "user-agent", re.compile(r"^Anthropic/Python (\S+)")),
    ClientSignature("google-genai SDK", "x-goog-api-client", re.compile(r"google-genai-sdk/(\S+)")),
    ClientSignature("boto3", "user-agent", re.compile(r"^Boto3/(\S+)")),
    ClientSignature(
        "Vercel AI SDK ai-sdk/openai-compatible (Mastra's model router uses it)",
        "user-agent",
        re.compile(r"(?:^|\s)ai-sdk/openai-compatible/(\S+)"),
    ),
    ClientSignature(
        "Vercel AI SDK ai-sdk/openai", "user-agent", re.compile(r"(?:^|\s)ai-sdk/openai/(\S+)")
    ),
    ClientSignature("Vercel AI SDK", "user-agent", re.compile(r"(?:^|\s)ai/(\d\S*)")),
]

# Every header client_label reads (lower case): the label depends on their values alone.
CLIENT_HEADERS: tuple[str, ...] = tuple(
    dict.fromkeys(
        [
            *(sig.header for sig in SIGNATURES),
            "x-stainless-lang",
            "x-stainless-package-version",
            "x-stainless-runtime",
            "x-stainless-runtime-version",
            "user-agent",
            "x-goog-api-client",
        ]
    )
)

# Where each client family says what it runs on.
_RUNTIMES = [
    re.compile(r"(?:^|\s)runtime/([\w.-]+)/(\S+)"),  # AI SDK: runtime/node.js/v20.20.2
    re.compile(r"(?:^|\s)gl-(python)/(\S+)"),  # google-genai: gl-python/3.13.0
    re.compile(r"(?:^|\s)lang/(python)#(\S+)"),  # boto3: lang/python#3.13.0
]


def client_label(header: Callable[[str], str]) -> str | None:
    """``openai Python SDK 3.57.0 (CPython 3.13.0)``: the client that sent a request, from
    ``header(name)``, which gives a header's value ("" if absent) for a lower-case name of
    ``CLIENT_HEADERS``."""
    for sig in SIGNATURES:
        found = sig.pattern.search(header(sig.header))
        if found:
            return _with_runtime(f"{sig.name} {found[1]}", header)
    lang, version = header("x-stainless-lang"), header("x-stainless-package-version")
    if lang:
        # Another SDK Stainless generated (openai-node, anthropic-sdk-typescript, …).
        return _with_runtime(f"a Stainless SDK for {lang} {version}".rstrip(), header)
    agent = header("user-agent")
    if agent:
        shown = agent if len(agent) <= _UA_SHOWN else agent[: _UA_SHOWN - 1] + "…"
        return f"User-Agent {escape_text(shown)}"
    return None


def _with_runtime(label: str, header: Callable[[str], str]) -> str:
    runtime, runtime_version = header("x-stainless-runtime"), header("x-stainless-runtime-version")
    if runtime:
        return escape_text(f"{label} ({runtime} {runtime_version})".replace(" )", ")"))
    for name in ("user-agent", "x-goog-api-client"):
        for pattern in _RUNTIMES:
            found = pattern.search(header(name))
            if found:
                return escape_text(f"{label} ({found[1]} {found[2]})")
    return escape_text(label)

"""AWS Bedrock Converse: ``/model/{modelId}/converse`` and ``/converse-stream`` (docs/providers.md §7).

Besides the shared findings, this format adds one of its own:

- ``history-without-tools`` (error): ``messages`` hold a ``toolUse`` or ``toolResult`` block
  but the request has no ``toolConfig``. Bedrock refuses the whole request ("The toolConfig
  field must be defined when using toolUse and toolResult content blocks.", observed in
  langgenius/dify #17545). It can happen when a client drops its tools for one turn while the
  history still holds tool blocks; the AI SDK, for one, empties the tools for tool choice
  "none", since Converse has no "none" (docs/providers.md §7). The finding points at the first
  such block.
"""

from __future__ import annotations

import json
import re
from typing import Any
from typing import TypedDict

from toolnames_core import codes
from toolnames_core.findings import bad_choice
from toolnames_core.findings import malformed
from toolnames_core.findings import shown
from toolnames_core.formats.base import BlockResponse
from toolnames_core.formats.base import Shapes
from toolnames_core.formats.base import WireFormat
from toolnames_core.formats.base import read_once
from toolnames_core.framings import AWS_EVENT_STREAM
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import format_path

API = "bedrock-converse"

# botocore's rest-json parser takes the error code from this header, up to the first ':'
# (botocore/parsers.py _inject_error_code), so boto3 raises client.exceptions.ValidationException.
# Bedrock's own answers carry the Coral namespace after the colon.
_ERROR_TYPE = "ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/"

# docs/providers.md §7, observed (langgenius/dify #17545).
_NEEDS_TOOL_CONFIG = (
    "The toolConfig field must be defined when using toolUse and toolResult content blocks."
)


def _read_tools(tools: object, view: RequestView) -> None:
    if not isinstance(tools, list):
        view.problems.append(malformed(("toolConfig", "tools"), "an array", tools))
        return
    if not tools:
        # docs/providers.md §7, observed (Portkey-AI/gateway #1124): "Value at 'toolConfig.tools'
        # failed to satisfy constraint: Member must have length greater than or equal to 1".
        view.problems.append(
            Finding(
                codes.TOOL_MALFORMED,
                "error",
                "toolConfig.tools",
                "toolConfig.tools is empty; Bedrock needs at least one tool when toolConfig is set",
            )
        )
        return
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            view.problems.append(malformed(("toolConfig", "tools", i), "an object", tool))
            continue
        # Tool is a union: toolSpec is the named tool; cachePoint (and any member added
        # later) names nothing, so it is skipped without a word.
        if "toolSpec" not in tool:
            continue
        spec = tool["toolSpec"]
        where = ("toolConfig", "tools", i, "toolSpec", "name")
        if not isinstance(spec, dict):
            view.problems.append(malformed(where[:-1], "an object", spec))
        elif not isinstance(spec.get("name"), str):
            view.problems.append(malformed(where, "a string", spec.get("name")))
        else:
            view.tools.append(NameRef(spec["name"], where))


def _read_tool_choice(choice: object, view: RequestView) -> None:
    # docs/providers.md §7: a union of {"auto": {}}, {"any": {}} and {"tool": {"name": "X"}}; no "none".
    where = ("toolConfig", "toolChoice")
    expected = (
        'expected exactly one of {"auto": {}}, {"any": {}} or {"tool": {"name": "<tool name>"}}'
    )
    if not isinstance(choice, dict) or len(choice) != 1:
        view.problems.append(bad_choice(where, choice, expected))
        return
    ((kind, value),) = choice.items()
    if kind in ("auto", "any") and isinstance(value, dict):
        mode = "auto" if kind == "auto" else "required"
        view.choices.append(Choice(mode, where, sent=shown(choice)))
    elif kind == "tool" and isinstance(value, dict) and isinstance(value.get("name"), str):
        ref = NameRef(value["name"], (*where, "tool", "name"))
        view.choices.append(Choice("named", where, (ref,)))
    else:
        view.problems.append(bad_choice(where, choice, expected))


def _read_history(messages: object, view: RequestView) -> JsonPath | None:
    """Names of toolUse blocks; returns the path of the first toolUse or toolResult block."""
    first: JsonPath | None = None
    if not isinstance(messages, list):
        return None
    for i, message in enumerate(messages):
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                continue
            for kind in ("toolUse", "toolResult"):
                if kind in block and first is None:
                    first = ("messages", i, "content", j, kind)
            if "toolUse" not in block:
                continue
            # docs/providers.md §7: Bedrock validates history names too
            # ("Value at 'messages.73.member.content.2.member.toolUse.name' failed to satisfy ...").
            use = block["toolUse"]
            where = ("messages", i, "content", j, "toolUse", "name")
            if not isinstance(use, dict):
                view.problems.append(malformed(where[:-1], "an object", use))
            elif not isinstance(use.get("name"), str):
                view.problems.append(malformed(where, "a string", use.get("name")))
            else:
                view.history.append(NameRef(use["name"], where))
    return first


def read_request(body: dict) -> RequestView:
    # Converse streams by endpoint (/converse-stream), not by a body field.
    view = RequestView(API)
    config = body.get("toolConfig")
    if config is not None:
        view.tools_given = True
        if not isinstance(config, dict):
            view.problems.append(malformed(("toolConfig",), "an object", config))
        else:
            # The fast reader hands the same decoded list again for the same bytes of
            # toolConfig (readers.py): its names are read once (base.read_once).
            read_once(_read_tools, config.get("tools"), view)
            if config.get("toolChoice") is not None:
                _read_tool_choice(config["toolChoice"], view)
    first_block = _read_history(body.get("messages"), view)
    if first_block is not None and config is None:
        path = format_path(first_block)
        view.problems.append(
            Finding(
                codes.HISTORY_WITHOUT_TOOLS,
                "error",
                path,
                f"{path} is a {first_block[-1]} block but the request has no toolConfig; "
                f'Bedrock rejects it: "{_NEEDS_TOOL_CONFIG}"',
            )
        )
    return view


def block_response(message: str, finding: Finding) -> BlockResponse:
    # Bedrock's error answer: the type in a header, the text in {"message": ...}. boto3 raises
    # ValidationException for it from converse() and converse_stream() alike (checked with
    # botocore 1.44.8); the stream's error arrives before any event, as a plain JSON answer.
    headers = {"content-type": "application/json", "x-amzn-ErrorType": _ERROR_TYPE}
    return BlockResponse(400, headers, json.dumps({"message": message}).encode())


def _tool_use_name(block: object, where: JsonPath, out: list[NameRef]) -> None:
    use = block.get("toolUse") if isinstance(block, dict) else None
    if isinstance(use, dict) and isinstance(use.get("name"), str):
        out.append(NameRef(use["name"], (*where, "toolUse", "name")))


def read_calls(body: dict) -> list[NameRef]:
    """docs/providers.md §7: output.message.content[] holds {"toolUse": {"toolUseId", "name", "input"}}."""
    out: list[NameRef] = []
    output = body.get("output") if isinstance(body, dict) else None
    message = output.get("message") if isinstance(output, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        for i, block in enumerate(content):
            _tool_use_name(block, ("output", "message", "content", i), out)
    return out


class StreamCollector:
    """The calls of one /converse-stream answer, an AWS event stream.

    Each event arrives as ``{<:event-type>: <payload>}``; a call's name is only in
    ``contentBlockStart`` (docs/providers.md §7). A call's path is ``events[N]`` (N counting from 0
    the events given to the collector) followed by the path inside that dict:
    ``events[3].contentBlockStart.start.toolUse.name``.
    """

    def __init__(self) -> None:
        self._events = 0
        self._calls: list[NameRef] = []

    def event(self, data: dict) -> None:
        start = data.get("contentBlockStart") if isinstance(data, dict) else None
        block = start.get("start") if isinstance(start, dict) else None
        _tool_use_name(block, ("events", self._events, "contentBlockStart", "start"), self._calls)
        self._events += 1

    def calls(self) -> list[NameRef]:
        return list(self._calls)


# What the functions above read, for the fast reader (formats/base.py Shapes): toolSpec
# and toolUse names, the choice, and whether a block is a toolResult (not what it holds);
# schemas, inputs, results and text are skipped.


class _Named(TypedDict, total=False):
    name: Any


class _Present(TypedDict, total=False):
    """An object whose presence is read, never its content."""


class _Tool(TypedDict, total=False):
    toolSpec: _Named | None


class _Config(TypedDict, total=False):
    tools: list[_Tool] | None
    toolChoice: Any


class _Block(TypedDict, total=False):
    toolUse: _Named | None
    toolResult: _Present | None


class _Message(TypedDict, total=False):
    content: list[_Block] | None


class _Request(TypedDict, total=False):
    toolConfig: _Config | None
    messages: list[_Message] | None


class _Output(TypedDict, total=False):
    message: _Message | None


class _Answer(TypedDict, total=False):
    output: _Output | None


class _Start(TypedDict, total=False):
    toolUse: _Named | None


class _Event(TypedDict, total=False):
    """An event's payload; the collector gets it under its :event-type."""

    start: _Start | None


SHAPES = Shapes(_Request, _Answer | list[_Answer], _Event)

FORMAT = WireFormat(
    api=API,
    title="AWS Bedrock Converse",
    # The id is matched greedily: formats match the decoded path, and an ARN holds a '/'.
    path=re.compile(r"/model/.+/converse(?:-stream)?\Z"),
    # docs/providers.md §7. boto3 escapes ':' and '/' of model ids and ARNs.
    example_paths=(
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
        "/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream",
        "/model/us.anthropic.claude-3-7-sonnet-20250219-v1:0/converse",
        "/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2F"
        "us.anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse",
    ),
    path_text=".../model/<id>/converse",
    rule="bedrock",
    read_request=read_request,
    offer_keys=("toolConfig",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=AWS_EVENT_STREAM,
    shapes=SHAPES,
    block_response=block_response,
    aws_verdicts=True,
)

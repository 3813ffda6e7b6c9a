"""Google Gemini API and Vertex AI ``:generateContent`` / ``:streamGenerateContent`` (docs/providers.md §6).

The REST front end parses JSON into protobuf, so every field may be spelled in
lowerCamelCase (``functionDeclarations``, what the SDKs send) or in the proto's
snake_case (``function_declarations``). Each ``where`` path records the key the
client actually used, so fix mode splices the value under the right key. The
google-genai SDK mixes them in one object on Vertex:
``{"functionCallingConfig": {"allowed_function_names": [...], "mode": "ANY"}}``
(tests/fixtures/sdk/gemini-vertex-tool-config-any.json).

A ``functionCallingConfig`` in a request that declares no functions is reported as
``choice-without-tools`` at warning level only: the Gemini API rejects it for Gemini 2.5 and
older, while Vertex and Gemini 3 accept it.
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
from toolnames_core.framings import SSE
from toolnames_core.model import Choice
from toolnames_core.model import Finding
from toolnames_core.model import JsonPath
from toolnames_core.model import NameRef
from toolnames_core.model import RequestView
from toolnames_core.model import format_path

API = "gemini"

# FunctionCallingConfig.Mode (docs/providers.md §6). Proto3 JSON also accepts an enum's number;
# VALIDATED's number is not confirmed, so only the documented 0-3 are read as numbers.
_MODES = ("MODE_UNSPECIFIED", "AUTO", "ANY", "NONE", "VALIDATED")
_MODE_NUMBERS = {0: "MODE_UNSPECIFIED", 1: "AUTO", 2: "ANY", 3: "NONE"}


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(word.title() for word in rest)


def _members(
    obj: dict,
    snake: str,
    where: JsonPath,
    view: RequestView | None,
    code: str = codes.TOOL_MALFORMED,
) -> list[tuple[str, object]]:
    """(key, value) of a field under each spelling present; JSON null counts as unset, as in proto3."""
    found = [(key, obj[key]) for key in (_camel(snake), snake) if obj.get(key) is not None]
    if len(found) == 2 and view is not None:
        path = format_path((*where, found[0][0]))
        view.problems.append(
            Finding(
                code,
                "warning",
                path,
                f"{path} and its snake_case spelling {snake!r} are both set; "
                "Google may reject the request or read only one of them",
            )
        )
    return found


def _read_tools(tools: object, view: RequestView) -> int:
    """Offered function declarations; returns how many declaration entries there are, readable or not."""
    view.tools_given = True
    if not isinstance(tools, list):
        view.problems.append(malformed(("tools",), "an array", tools))
        return 0
    declared = 0
    for i, tool in enumerate(tools):
        if not isinstance(tool, dict):
            view.problems.append(malformed(("tools", i), "an object", tool))
            continue
        # A Tool without declarations is a built-in (googleSearch, codeExecution, urlContext,
        # ...): chosen by being present, never by name, so there is nothing to check.
        for key, decls in _members(tool, "function_declarations", ("tools", i), view):
            if not isinstance(decls, list):
                view.problems.append(malformed(("tools", i, key), "an array", decls))
                continue
            declared += len(decls)
            for j, decl in enumerate(decls):
                where = ("tools", i, key, j, "name")
                if not isinstance(decl, dict):
                    view.problems.append(malformed(where[:-1], "an object", decl))
                elif not isinstance(decl.get("name"), str):
                    view.problems.append(malformed(where, "a string", decl.get("name")))
                else:
                    view.tools.append(NameRef(decl["name"], where))
    return declared


def _read_mode(config: dict, where: JsonPath, view: RequestView) -> str | None:
    mode = config.get("mode")
    if mode is None:
        return "AUTO"  # docs/providers.md §6: AUTO is the default
    if isinstance(mode, int) and not isinstance(mode, bool) and mode in _MODE_NUMBERS:
        mode = _MODE_NUMBERS[mode]
    if isinstance(mode, str) and mode.upper() in _MODES:
        return "AUTO" if mode.upper() == "MODE_UNSPECIFIED" else mode.upper()
    view.problems.append(
        bad_choice((*where, "mode"), mode, 'expected "AUTO", "ANY", "NONE" or "VALIDATED"')
    )
    return None


def _read_allowed(config: dict, where: JsonPath, view: RequestView) -> tuple[list[NameRef], bool]:
    """The allowedFunctionNames entries as NameRefs, and whether the field is set at all."""
    refs: list[NameRef] = []
    given = False
    for key, names in _members(
        config, "allowed_function_names", where, view, codes.CHOICE_MALFORMED
    ):
        if not isinstance(names, list):
            view.problems.append(
                bad_choice((*where, key), names, "expected an array of function names")
            )
            continue
        given = given or bool(names)
        for k, name in enumerate(names):
            if isinstance(name, str):
                refs.append(NameRef(name, (*where, key, k)))
            else:
                view.problems.append(
                    bad_choice((*where, key, k), name, "expected a function name (a string)")
                )
    return refs, given


def _read_tool_config(body: dict, declared: int, view: RequestView) -> None:
    for tc_key, tool_config in _members(body, "tool_config", (), view, codes.CHOICE_MALFORMED):
        if not isinstance(tool_config, dict):
            view.problems.append(bad_choice((tc_key,), tool_config, "expected an object"))
            continue
        for fc_key, config in _members(
            tool_config, "function_calling_config", (tc_key,), view, codes.CHOICE_MALFORMED
        ):
            where = (tc_key, fc_key)
            if not isinstance(config, dict):
                view.problems.append(bad_choice(where, config, "expected an object"))
                continue
            mode = _read_mode(config, where, view)
            names, names_given = _read_allowed(config, where, view)
            if mode is None:
                continue
            if names_given and mode in ("AUTO", "NONE"):
                # docs/providers.md §6: "This should only be set when the Mode is ANY or VALIDATED."
                # What the API does otherwise is not known, so the names are not checked.
                view.problems.append(
                    bad_choice(
                        where,
                        config,
                        f"allowed function names only apply with mode ANY or VALIDATED, not {mode}",
                        "warning",
                    )
                )
                names = []
            if names:
                choice = Choice("allowed", where, tuple(names))
            else:
                choice = Choice(
                    {"AUTO": "auto", "ANY": "required", "NONE": "none", "VALIDATED": "auto"}[mode],
                    where,
                    sent=f"mode {shown(mode)}",
                )
            if declared == 0 and choice.mode != "none":
                # Observed (pydantic-ai PR #5791, AstrBot PR #7407): the Gemini API answers
                # "Function calling config is set without function_declarations." for Gemini
                # 2.5 and older; Vertex and Gemini 3 accept it. Hence a warning, not an error.
                path = format_path(where)
                view.problems.append(
                    Finding(
                        codes.CHOICE_WITHOUT_TOOLS,
                        "warning",
                        path,
                        f"{path} is set but the request declares no functions; the Gemini API rejects "
                        'this for Gemini 2.5 and older ("Function calling config is set without '
                        'function_declarations.")',
                    )
                )
                continue
            view.choices.append(choice)


def _read_history(contents: object, view: RequestView) -> None:
    # docs/providers.md §6: functionCall parts sit in role "model" turns and functionResponse parts
    # in the turn after. Both carry the tool's name; every role is read, since a misplaced part
    # is checked by the provider all the same. A missing name is allowed: Vertex's streamed
    # arguments (streamFunctionCallArguments) produce functionCall parts without one.
    if not isinstance(contents, list):
        return
    for i, content in enumerate(contents):
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            for snake in ("function_call", "function_response"):
                for key, call in _members(part, snake, ("contents", i, "parts", j), view):
                    where = ("contents", i, "parts", j, key)
                    if not isinstance(call, dict):
                        view.problems.append(malformed(where, "an object", call))
                    elif isinstance(call.get("name"), str):
                        view.history.append(NameRef(call["name"], (*where, "name")))
                    elif call.get("name") is not None:
                        view.problems.append(malformed((*where, "name"), "a string", call["name"]))


def read_request(body: dict) -> RequestView:
    # Gemini streams by endpoint (:streamGenerateContent), not by a body field.
    view = RequestView(API)
    tools = body.get("tools")
    declared = 0 if tools is None else read_once(_read_tools, tools, view)
    _read_tool_config(body, declared, view)
    _read_history(body.get("contents"), view)
    return view


def block_response(message: str, finding: Finding) -> BlockResponse:
    # docs/providers.md §6: Google's error shape; google-genai raises ClientError(400, INVALID_ARGUMENT)
    # for it, on generate_content and generate_content_stream alike.
    error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
    return BlockResponse(
        400,
        {"content-type": "application/json; charset=UTF-8"},
        json.dumps({"error": error}).encode(),
    )


# Response side (docs/providers.md §6). A call's path is where its name sits in the response,
# e.g. candidates[0].content.parts[1].functionCall.name. In a stream, the path starts with
# events[N], N counting from 0 the events given to the collector, followed by the path inside
# that event (one GenerateContentResponse): events[3].candidates[0].content.parts[0].functionCall.name.


def _calls_in(response: object, prefix: JsonPath, out: list[NameRef]) -> None:
    candidates = response.get("candidates") if isinstance(response, dict) else None
    if not isinstance(candidates, list):
        return
    for i, candidate in enumerate(candidates):
        content = candidate.get("content") if isinstance(candidate, dict) else None
        parts = content.get("parts") if isinstance(content, dict) else None
        if not isinstance(parts, list):
            continue
        for j, part in enumerate(parts):
            if not isinstance(part, dict):
                continue
            for key, call in _members(part, "function_call", (), None):
                # Only present names: Vertex's continuation parts of streamed arguments have none.
                if isinstance(call, dict) and isinstance(call.get("name"), str):
                    where = (*prefix, "candidates", i, "content", "parts", j, key, "name")
                    out.append(NameRef(call["name"], where))


def read_calls(body: dict) -> list[NameRef]:
    out: list[NameRef] = []
    if isinstance(body, list):
        # :streamGenerateContent without ?alt=sse answers one JSON array of responses.
        for n, response in enumerate(body):
            _calls_in(response, (n,), out)
    else:
        _calls_in(body, (), out)
    return out


class StreamCollector:
    """The calls of one ``?alt=sse`` stream, whose every ``data:`` is a GenerateContentResponse."""

    def __init__(self) -> None:
        self._events = 0
        self._calls: list[NameRef] = []

    def event(self, data: dict) -> None:
        _calls_in(data, ("events", self._events), self._calls)
        self._events += 1

    def calls(self) -> list[NameRef]:
        return list(self._calls)


# What the functions above read, for the fast reader (formats/base.py Shapes): declarations'
# names in both spellings, the tool config, function calls and responses by name; schemas,
# arguments, results and text are skipped.


class _Named(TypedDict, total=False):
    name: Any


class _Tool(TypedDict, total=False):
    functionDeclarations: list[_Named] | None
    function_declarations: list[_Named] | None


class _Part(TypedDict, total=False):
    functionCall: _Named | None
    function_call: _Named | None
    functionResponse: _Named | None
    function_response: _Named | None


class _Content(TypedDict, total=False):
    parts: list[_Part] | None


class _Request(TypedDict, total=False):
    tools: list[_Tool] | None
    toolConfig: Any
    tool_config: Any
    contents: list[_Content] | None


class _Candidate(TypedDict, total=False):
    content: _Content | None


class _Answer(TypedDict, total=False):
    candidates: list[_Candidate] | None


SHAPES = Shapes(_Request, _Answer | list[_Answer], _Answer)

FORMAT = WireFormat(
    api=API,
    title="Gemini API / Vertex AI generateContent",
    path=re.compile(r":(?:stream)?[gG]enerateContent$"),
    # The Gemini API and Vertex AI (docs/providers.md §6), as google-genai sends them.
    example_paths=(
        "/v1beta/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
        "/v1/models/gemini-2.5-flash:generateContent",
        "/v1beta/models/gemini-2.5-flash:generateContent?key=AIza-test",
        "/v1beta/tunedModels/my-model:generateContent",
        "/v1beta1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
        "/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse",
        "/v1/projects/p/locations/us-central1/endpoints/1234567890:generateContent",
    ),
    path_text="...:generateContent",
    rule="gemini",
    read_request=read_request,
    offer_keys=("tools",),
    read_calls=read_calls,
    stream_collector=StreamCollector,
    framing=SSE,
    shapes=SHAPES,
    block_response=block_response,
)

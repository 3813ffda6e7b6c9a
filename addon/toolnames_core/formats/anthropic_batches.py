"""Anthropic's Message Batches, ``POST /v1/messages/batches`` (docs/providers.md §5).

A batch is ``{"requests": [{"custom_id": …, "params": <a Messages body>}, …]}``: each
``params`` is read by the Messages adapter on its own, and its findings, fixes and names are
pathed inside it (``requests[2].params.tools[0].name``). Each params is checked alone (the
view's ``parts``): a tool two requests both offer is no duplicate, and a choice names a tool
of its own request.

The answer is the batch object, which names no tool. The results come later, as JSONL from
the batch's ``results_url``: toolnames does not read them, and fix mode's aliases are not
given back there (docs/usage.md says so). Anthropic validates each ``params`` only when the
batch has been processed, so the 200 of the create call is no verdict on the names
(``validates_later``).
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any
from typing import TypedDict

from toolnames_core.findings import malformed
from toolnames_core.formats import anthropic_messages
from toolnames_core.formats.base import Shapes
from toolnames_core.model import JsonPath
from toolnames_core.model import RequestView

__all__ = ["API", "FORMAT", "read_request"]

API = "anthropic-batches"


def _part(params: dict, prefix: JsonPath) -> RequestView:
    part = anthropic_messages.read_request(params)
    part.api = API
    part.move_under(prefix)
    return part


def read_request(body: dict) -> RequestView:
    view = RequestView(API)
    requests = body.get("requests")
    if requests is None:
        return view
    if not isinstance(requests, list):
        view.problems.append(malformed(("requests",), "an array", requests))
        return view
    for i, request in enumerate(requests):
        if not isinstance(request, dict):
            view.problems.append(malformed(("requests", i), "an object", request))
            continue
        params = request.get("params")
        if not isinstance(params, dict):
            view.problems.append(malformed(("requests", i, "params"), "an object", params))
            continue
        part = _part(params, ("requests", i, "params"))
        view.parts.append(part)
        # The whole batch holds every part's names: fix mode renames them all at once.
        view.tools += part.tools
        view.history += part.history
        view.choices += part.choices
        view.tools_given |= part.tools_given
        view.streaming |= part.streaming
    return view


# What read_request reads, for the fast reader (formats/base.py Shapes): each request's
# params as the Messages adapter reads it; the answer and events name no tool.
_Params = anthropic_messages.FORMAT.shapes.request


class _Request(TypedDict, total=False):
    params: _Params | None


class _Batch(TypedDict, total=False):
    requests: list[_Request] | None


class _Answer(TypedDict, total=False):
    type: Any


SHAPES = Shapes(_Batch, _Answer, _Answer)

# Messages' record (its rule, choice keys and block answer) but for where it is, how a batch
# is read, and what its answer holds: a batch object, which names no tool and never streams.
FORMAT = dataclasses.replace(
    anthropic_messages.FORMAT,
    api=API,
    title="Anthropic Message Batches",
    path=re.compile(r"/v1/messages/batches\Z"),
    example_paths=("/v1/messages/batches", "/v1/messages/batches?beta=true"),
    path_text=".../v1/messages/batches",
    read_request=read_request,
    offer_keys=("requests",),
    # The batch object names no tool: nothing to read or give back in it.
    read_calls=lambda body: [],
    stream_collector=None,
    framing=None,
    shapes=SHAPES,
    validates_later=True,
)

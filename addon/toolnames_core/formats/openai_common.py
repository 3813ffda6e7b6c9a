"""What the OpenAI adapters share: the parallel-call wrapper (docs/providers.md §1.3).

OpenAI's models dispatch parallel calls internally through a wrapper, which sometimes comes
back as a call of its own: ``multi_tool_use.parallel`` (vercel/ai PR #19098 saw it named
plain ``parallel``), its arguments a JSON text whose ``tool_uses`` name the calls inside as
``recipient_name: "functions.<name>"``. The Chat Completions and Responses adapters read
those inner calls; the response checks and the view say a wrapper is not a tool.
"""

from __future__ import annotations

import json

from toolnames_core.model import NameRef

__all__ = ["PARALLEL_WRAPPERS", "is_parallel_wrapper", "unwrap_parallel", "with_unwrapped"]

PARALLEL_WRAPPERS = ("multi_tool_use.parallel", "parallel")


def unwrap_parallel(call: NameRef, arguments: object) -> list[NameRef]:
    """The calls inside a parallel wrapper; ``arguments`` is its JSON text (or parsed value)."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return []
    uses = arguments.get("tool_uses") if isinstance(arguments, dict) else None
    if not isinstance(uses, list):
        return []
    base = (*call.where[:-1], "arguments", "tool_uses")
    inner = []
    for i, use in enumerate(uses):
        recipient = use.get("recipient_name") if isinstance(use, dict) else None
        if isinstance(recipient, str):
            name = recipient.removeprefix("functions.")
            inner.append(NameRef(name, (*base, i, "recipient_name"), "function"))
    return inner


def with_unwrapped(found: list[tuple[NameRef, object]]) -> list[NameRef]:
    """Each (call, arguments) as its call, followed by the calls inside a parallel wrapper."""
    out = []
    for ref, args in found:
        out.append(ref)
        if ref.name in PARALLEL_WRAPPERS:
            out += unwrap_parallel(ref, args)
    return out


def is_parallel_wrapper(name: str, offered_names: set[str]) -> bool:
    """OpenAI's wrapper, unless a tool of that name was offered (then it is that tool)."""
    return name in PARALLEL_WRAPPERS and name not in offered_names

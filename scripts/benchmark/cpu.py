"""(a) CPU per request, in process: Exchange.check_request, the addon's request hook and a
whole flow's hooks, against json.loads of the same body; and fix mode renaming every tool of
the body (named as MCP clients name them) and restoring the call in its answer, against
json.loads of that body."""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import json
import statistics
import timeit
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field

from mitmproxy import http
from mitmproxy.test import tflow
from mitmproxy.test import tutils

from benchmark.workload import CHAT_PATH
from benchmark.workload import PROVIDER_RESPONSE_HEADERS
from benchmark.workload import SDK_REQUEST_HEADERS
from benchmark.workload import Case
from benchmark.workload import chat_answer
from benchmark.workload import earlier_requests
from benchmark.workload import mcp_name
from benchmark.workload import mcp_named
from benchmark.workload import renaming_requests
from benchmark.workload import stream_chunks
from harness.inprocess import running
from harness.load import progress
from toolnames_core import READERS
from toolnames_core import Exchange
from toolnames_core import Reader
from toolnames_core import choose_rule
from toolnames_core import format_for

__all__ = [
    "FIX_GROWING",
    "FIX_RENAMING",
    "GROWING_ROUNDS",
    "JSON_GROWING",
    "STREAM_FIX",
    "STREAM_OBSERVE",
    "CpuRow",
    "bench_cpu",
    "chat_flow",
    "in_turn",
    "loads_in_turn",
    "other_reader",
    "renamed_flows",
    "renewer",
    "streamed_answer",
    "time_interleaved",
]

# The column of fix mode's renaming: a whole flow, every tool aliased and the answer restored,
# each request asking its conversation's last question otherwise (renaming_requests).
FIX_RENAMING = "fix: rename + restore"
# The same over a conversation that grows a round each request, as a chat client resends it
# (each request shares all but its last round and its tail with the one before), and
# json.loads of the same bodies in the same turns.
FIX_GROWING = "fix: rename + restore, growing"
JSON_GROWING = "json.loads, growing"
# How many of a long conversation's last rounds it is sent at, in turn.
GROWING_ROUNDS = 12
# The columns of a streamed answer through the tap, per chunk: observed (it calls the app's own
# name), and in fix mode (it calls the alias, given back in the stream).
STREAM_OBSERVE = "stream, observe"
STREAM_FIX = "stream, fix"
# The exchange check_request is timed on: Chat Completions to OpenAI, looked up once.
CHAT = format_for("POST", "/v1/chat/completions")
CHAT_RULE = choose_rule(CHAT, "api.openai.com")


@dataclass
class CpuRow:
    case: Case
    # name -> seconds per call, one entry per repeat
    samples: dict[str, list[float]] = field(default_factory=dict)

    def best(self, name: str) -> float:
        return min(self.samples[name])

    def median(self, name: str) -> float:
        return statistics.median(self.samples[name])

    def ratio(self, name: str) -> float:
        return self.best(name) / self.best("json.loads")

    def paired_median(self, name: str) -> float:
        """The median of ``name``'s ratio to json.loads within each repeat (the functions take
        turns, so a repeat's figures share the machine's mood)."""
        pairs = zip(self.samples[name], self.samples["json.loads"], strict=True)
        return statistics.median(t / j for t, j in pairs)

    @property
    def stream_ratio(self) -> float | None:
        """Restoring names in a stream against observing it, per chunk (the same chunks but
        for the name), timed together."""
        if STREAM_FIX not in self.samples:
            return None
        return self.best(STREAM_FIX) / self.best(STREAM_OBSERVE)

    @property
    def renaming_ratio(self) -> float | None:
        """Fix mode's renaming against json.loads of its own (MCP-named) body, timed together."""
        if FIX_RENAMING not in self.samples:
            return None
        return self.best(FIX_RENAMING) / self.best("json.loads, MCP-named")

    @property
    def growing_ratio(self) -> float | None:
        """Fix mode's renaming of a conversation growing a round each request, against
        json.loads of the same requests, timed together."""
        if FIX_GROWING not in self.samples:
            return None
        return self.best(FIX_GROWING) / self.best(JSON_GROWING)


def _calibrate(fn: Callable[[], object], min_time: float) -> int:
    number = 1
    while True:
        took = timeit.Timer(fn).timeit(number)
        if took >= min_time or number >= 1 << 20:
            return number
        number = max(number * 2, int(number * min_time / max(took, 1e-9) * 1.2))


def time_interleaved(
    fns: dict[str, Callable[[], object]], min_time: float, repeats: int
) -> dict[str, list[float]]:
    """Seconds per call of each function, ``repeats`` times, the functions taking turns so
    that a noisy neighbour slows them all alike."""
    numbers = {name: _calibrate(fn, min_time) for name, fn in fns.items()}
    samples: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            # timeit turns the garbage collector off; a parsed body's objects are its work too.
            timer = timeit.Timer(fn, setup="gc.enable()", globals={"gc": gc})
            samples[name].append(timer.timeit(numbers[name]) / numbers[name])
    return samples


def _fields(headers: tuple[tuple[str, str], ...]) -> list[tuple[bytes, bytes]]:
    return [(name.encode(), value.encode()) for name, value in headers]


def chat_flow(raw: bytes, call: str | None = None) -> tuple[http.HTTPFlow, http.Response]:
    """A live flow of the openai SDK's request with ``raw``, and an answer to give it: text,
    or a call to the tool named ``call``."""
    request = tutils.treq(
        method=b"POST",
        scheme=b"https",
        host="api.openai.com",
        port=443,
        path=CHAT_PATH.encode(),
        headers=http.Headers(_fields(SDK_REQUEST_HEADERS)),
    )
    request.content = raw
    response = tutils.tresp(content=chat_answer(call))
    content_length = response.headers["content-length"]
    response.headers = http.Headers(_fields(PROVIDER_RESPONSE_HEADERS))
    response.headers["content-length"] = content_length
    flow = tflow.tflow(req=request, live=True)
    return flow, response


def renewer(flow: http.HTTPFlow, response: http.Response) -> Callable[[], None]:
    """What puts ``flow`` back as it came off the wire, its answer not yet arrived, so that
    fix mode's whole flow can run again: the request's and the answer's bytes and header
    fields as they are now. mitmproxy's HTTP layer hands a hook a request whose body and
    headers it read, and never sets a body through ``Message.content``; doing so here (two
    walks of the headers and a length per message) charged fix mode a sixth of a 10-tool
    flow that no proxy pays."""
    request = flow.request
    sent, sent_fields = request.raw_content, request.headers.fields
    answer, answer_fields = response.raw_content, response.headers.fields

    def renew() -> None:
        flow.response = None
        request.raw_content, request.headers.fields = sent, sent_fields
        response.raw_content, response.headers.fields = answer, answer_fields

    return renew


@contextlib.contextmanager
def renamed_flows(bodies: Sequence[bytes]) -> Iterator[Callable[[], None]]:
    """Fix mode over a whole flow of each of ``bodies`` in turn (the same tools in each,
    every one needing an alias), to run again and again: the request as it came renamed, the
    answer's call of the first tool (by its alias) given back. A flow of its own each, as a
    proxy gets them: each call runs the next body's flow, and after the last the first
    again. Each is checked once, through the hooks: the call was given back."""
    with running(toolnames_mode="fix") as (_, tn):
        flow, _ = chat_flow(bodies[0])
        tn.request(flow)
        alias = json.loads(flow.request.content)["tools"][0]["function"]["name"]
        runs = [_renaming_run(tn, *chat_flow(body, call=alias)) for body in bodies]
        yield in_turn(runs)


def _renaming_run(tn, flow: http.HTTPFlow, response: http.Response) -> Callable[[], None]:
    renew = renewer(flow, response)

    def renaming() -> None:
        renew()
        tn.request(flow)
        flow.response = response
        tn.responseheaders(flow)
        tn.response(flow)

    renaming()
    record = flow.metadata.get("toolnames", {})
    if record.get("restored") != 1:
        raise SystemExit(f"fix mode did not restore the call: {record}")
    return renaming


def in_turn(fns: Sequence[Callable[[], object]]) -> Callable[[], object]:
    """One function calling each of ``fns`` in turn, a call each time; the one itself, alone."""
    if len(fns) == 1:
        return fns[0]
    turn = itertools.cycle(fns).__next__
    return lambda: turn()()


def loads_in_turn(bodies: Sequence[bytes]) -> Callable[[], object]:
    """json.loads of each of ``bodies`` in turn, a body a call."""
    return in_turn([functools.partial(json.loads, body) for body in bodies])


def _renaming(raw: bytes, min_time: float, repeats: int) -> dict[str, list[float]]:
    """Fix mode over a whole flow whose every tool needs an alias: the request renamed, the
    answer's call restored, over renaming_requests in turn; timed with json.loads of the same
    requests. A long conversation is also sent as it grew, its last GROWING_ROUNDS requests
    in turn."""
    asked = renaming_requests(raw)
    with renamed_flows(asked) as renaming:
        fns = {"json.loads, MCP-named": loads_in_turn(asked), FIX_RENAMING: renaming}
        gc.collect()
        samples = time_interleaved(fns, min_time, repeats)
    grown = earlier_requests(asked[0], GROWING_ROUNDS)
    if len(grown) == GROWING_ROUNDS:
        with renamed_flows(grown) as renaming:
            fns = {JSON_GROWING: loads_in_turn(grown), FIX_GROWING: renaming}
            gc.collect()
            samples.update(time_interleaved(fns, min_time, repeats))
    return samples


def streamed_answer(raw: bytes, mode: str) -> Callable[[], None]:
    """One streamed answer through the tap the addon's responseheaders hook makes for it,
    chunk by chunk: the request ``raw`` with every tool MCP-named and ``stream`` set, in
    ``mode``. Observed, the stream calls the app's own name for its first tool; in fix mode,
    that tool's alias, which the tap gives back. Checked once, through the hooks: the client
    gets the app's name."""
    parsed = json.loads(mcp_named(raw))
    parsed["stream"] = True
    body = json.dumps(parsed, separators=(",", ":"), ensure_ascii=False).encode()
    app = mcp_name(json.loads(raw)["tools"][0]["function"]["name"])
    with running(toolnames_mode=mode) as (_, tn):
        flow, _ = chat_flow(body)
        tn.request(flow)
        sent = json.loads(flow.request.content)["tools"][0]["function"]["name"]
        chunks = stream_chunks(app if mode == "observe" else sent)
        flow, response = chat_flow(body)
        response.headers["content-type"] = "text/event-stream"
        del response.headers["content-length"]
        tn.request(flow)
        exchange = tn.tracked[flow].exchange
        flow.response = response
        tn.responseheaders(flow)
        out = b"".join(b"".join(response.stream(c)) for c in [*chunks, b""])
        tn.response(flow)
    if f'"name":"{app}"'.encode() not in out or (mode == "fix") == (sent == app):
        raise SystemExit(f"the {mode} stream does not give the client {app!r}: {out[:400]!r}")

    def streaming() -> None:
        # The tap alone, as the hooks make it: what each chunk costs, without the flow's.
        tap = exchange.stream_tap("")
        for chunk in chunks:
            tap.pieces(chunk)
        tap.pieces(b"")
        tap.calls()

    return streaming


def _stream_restoring(raw: bytes, min_time: float, repeats: int) -> dict[str, list[float]]:
    """A streamed answer observed and restored in fix mode, timed together, per chunk."""
    fns = {STREAM_OBSERVE: streamed_answer(raw, "observe"), STREAM_FIX: streamed_answer(raw, "fix")}
    per_chunk = len(stream_chunks("x"))
    gc.collect()
    samples = time_interleaved(fns, min_time, repeats)
    return {name: [t / per_chunk for t in times] for name, times in samples.items()}


def other_reader(name: str, reader: Reader) -> str:
    """The column of ``name`` (check_request, request hook) read by a reader other than the
    default one (the first of READERS: msgspec where it can be imported), which the plain
    columns use."""
    return f"{name}, {reader.name} reader"


def _hook_with(tn, reader: Reader, flow: http.HTTPFlow) -> None:
    default, tn.reader = tn.reader, reader
    try:
        tn.request(flow)
    finally:
        tn.reader = default


def bench_cpu(chosen: list[Case], quick: bool) -> list[CpuRow]:
    min_time, repeats = (0.01, 3) if quick else (0.04, 7)
    rows = []
    with running() as (_, tn):
        for case in chosen:
            raw = case.raw
            flow, response = chat_flow(raw)
            tn.request(flow)
            if "toolnames" in flow.metadata:
                raise SystemExit(f"bench body {case.label!r} is flagged: {flow.metadata}")

            def whole_flow(flow=flow, response=response) -> None:
                flow.response = None
                tn.request(flow)
                flow.response = response
                tn.responseheaders(flow)
                tn.response(flow)

            fns = {
                "json.loads": lambda raw=raw: json.loads(raw),
                "check_request": lambda raw=raw: Exchange(CHAT, CHAT_RULE).check_request(raw),
                "request hook": lambda flow=flow: tn.request(flow),
                "flow hooks": whole_flow,
            }
            for reader in READERS[1:]:
                fns[other_reader("check_request", reader)] = lambda raw=raw, r=reader: Exchange(
                    CHAT, CHAT_RULE, reader=r
                ).check_request(raw)
                fns[other_reader("request hook", reader)] = lambda f=flow, r=reader: _hook_with(
                    tn, r, f
                )
            gc.collect()
            rows.append(CpuRow(case, time_interleaved(fns, min_time, repeats)))
    for row in rows:
        if row.case.tools:
            row.samples.update(_renaming(row.case.raw, min_time, repeats))
            row.samples.update(_stream_restoring(row.case.raw, min_time, repeats))
        renaming = f"   fix renaming {row.renaming_ratio:5.2f}x" if row.renaming_ratio else ""
        if row.growing_ratio:
            renaming += f" (growing {row.growing_ratio:5.2f}x)"
        if row.stream_ratio:
            renaming += f"   stream restoring {row.stream_ratio:5.2f}x"
        progress(
            f"(a) {row.case.label:<16} json.loads {row.best('json.loads') * 1e6:9.1f} µs   "
            f"request hook {row.ratio('request hook'):5.2f}x   "
            f"flow hooks {row.ratio('flow hooks'):5.2f}x{renaming}"
        )
    return rows

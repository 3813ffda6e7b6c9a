"""(c) Time to the first streamed chunk, through mitmdump without and with the addon, from a
stand-in that streams slowly; and through the addon in fix mode, renaming every tool of a body
whose tools are MCP-named and restoring the name in the streamed call. For each framing a
format streams in: OpenAI's SSE, Bedrock InvokeModel's AWS event stream, whose names sit
inside each chunk's base64 (fix mode decodes, restores, encodes and recomputes both CRCs), and
Ollama's NDJSON, whose names are given back a whole line at a time."""

from __future__ import annotations

import http.client
import json
import statistics
import time
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import NamedTuple

from benchmark.throughput import start_bench_mitmdump
from benchmark.workload import CHAT_PATH
from benchmark.workload import SDK_LOAD_HEADERS
from benchmark.workload import chat_body
from benchmark.workload import encode
from benchmark.workload import invoke_body
from benchmark.workload import mcp_named
from benchmark.workload import ollama_body
from harness.load import progress
from harness.mitmdump import ADDON_SCRIPT
from harness.processes import ProcessGroup
from harness.provider import start_standin
from toolnames_core import StreamTap
from toolnames_core import format_for

__all__ = [
    "EVENT_STREAM",
    "FIX_RENAMING_PATH",
    "INVOKE_STREAM_PATH",
    "NDJSON_STREAM",
    "OLLAMA_STREAM_PATH",
    "STREAM_SSE_SCRIPT",
    "STREAM_TABLES",
    "StreamResult",
    "StreamCase",
    "StreamRow",
    "Streamed",
    "bench_stream",
    "first_chunk",
    "restored_calls",
]

# The fair baseline: what any user who wants streams streamed through mitmdump has to load
# (SSE, the AWS event stream of Bedrock, Ollama's NDJSON).
STREAM_SSE_SCRIPT = """\
STREAMS = ("text/event-stream", "application/vnd.amazon.eventstream", "application/x-ndjson")

def responseheaders(flow):
    if flow.response.headers.get("content-type", "").startswith(STREAMS):
        flow.response.stream = True
"""


# The path whose request has every tool renamed and whose streamed call is given back.
FIX_RENAMING_PATH = "mitmdump + toolnames, fix: renaming"
# Bedrock InvokeModel's stream: the prefix of its rows' names, and its path (boto3's model id,
# the ':' as the anthropic SDK sends it).
EVENT_STREAM = "Bedrock InvokeModel event stream: "
INVOKE_STREAM_PATH = "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream"
# A Bedrock API key (Bearer): nothing is signed, as with AnthropicBedrock(api_key=...).
INVOKE_HEADERS = {"authorization": "Bearer test-bedrock-api-key"}
# Ollama's native chat: its rows' prefix and its path. Ollama has no tool choice: the
# stand-in's model is told which tool to call (x-standin-call) by a prefix the app's name and
# its alias share.
NDJSON_STREAM = "Ollama NDJSON stream: "
OLLAMA_STREAM_PATH = "/api/chat"
# The framings after OpenAI's SSE, each with a table and a target of its own (report_stream).
STREAM_TABLES = (EVENT_STREAM, NDJSON_STREAM)


@dataclass(frozen=True)
class StreamCase:
    """One stream the rows go through: its rows' names start with ``prefix``; ``body`` goes
    through every path but fix mode's renaming, which gets ``renamed`` (every tool MCP-named,
    the first, ``app_name``, forced) and must give ``app_name`` back in the streamed call."""

    prefix: str
    path: str
    body: bytes
    renamed: bytes
    app_name: str
    headers: dict[str, str]
    paths: tuple[str, ...]
    # The rule fix mode's mitmdump is given for this stream (toolnames_rule '*=RULE'), where
    # the one its path gets renames nothing (Ollama's limits no names); None: that one.
    fix_rule: str | None = None

    @property
    def fix_target(self) -> str:
        """The mitmdump fix mode's renaming row goes through."""
        return FIX_RENAMING_PATH + (f" (rule {self.fix_rule})" if self.fix_rule else "")


class Streamed(NamedTuple):
    """One streamed request: seconds to the first body byte and to the end, and the body."""

    first_chunk: float
    total: float
    body: bytes


def first_chunk(
    conn: http.client.HTTPConnection, body: bytes, headers: dict[str, str], path: str = CHAT_PATH
) -> Streamed:
    start = time.perf_counter()
    conn.request("POST", path, body, {"content-type": "application/json", **headers})
    response = conn.getresponse()
    if response.status != 200:
        raise RuntimeError(f"status {response.status}: {response.read()[:500]!r}")
    first = response.read1(65536)
    ttfc = time.perf_counter() - start
    rest = response.read()
    return Streamed(ttfc, time.perf_counter() - start, first + rest)


@dataclass
class StreamRow:
    name: str
    ttfc: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    identical: bool = True

    @property
    def median_ttfc(self) -> float:
        return statistics.median(self.ttfc)


class StreamResult(NamedTuple):
    rows: list[StreamRow]
    reference: bytes  # the SSE stream as the stand-in sends it
    event_stream: bytes  # InvokeModel's event stream as the stand-in sends it
    ndjson: bytes  # Ollama's NDJSON stream as the stand-in sends it


def restored_calls(path: str, stream: bytes) -> list[str]:
    """The names of the calls in ``stream``, an answer to ``path``, read as toolnames reads
    them (a Bedrock chunk's base64 opened, its CRCs checked)."""
    fmt = format_for("POST", path)
    if fmt is None:
        raise ValueError(f"no format is at {path}")
    return [call.name for call in StreamTap(fmt).feed_all(stream).calls()]


def stream_cases(delay_ms: int) -> list[StreamCase]:
    """OpenAI's chat completions stream (SSE) with 10 tools, Bedrock InvokeModel's (AWS event
    stream, base64 chunks) with the same 10 tools in Anthropic's shape, and Ollama's (NDJSON)
    with the same 10 tools, fix mode's under a rule that renames (Ollama's renames nothing)."""
    body = chat_body(10)
    body["stream"] = True
    raw = encode(body)
    # Every tool MCP-named (fix mode aliases them all), the first one forced: the stream's call
    # goes out under its alias and comes back under the app's name.
    renamed = json.loads(mcp_named(raw))
    app_name = renamed["tools"][0]["function"]["name"]
    renamed["tool_choice"] = {"type": "function", "function": {"name": app_name}}
    delay = {"x-standin-delay-ms": str(delay_ms)}
    invoke = invoke_body(10)
    invoke_renamed = invoke_body(10, mcp=True)
    invoke_name = invoke_renamed["tools"][0]["name"]
    invoke_renamed["tool_choice"] = {"type": "tool", "name": invoke_name}
    ollama = ollama_body(10)
    ollama_renamed = ollama_body(10, mcp=True)
    ollama_name = ollama_renamed["tools"][0]["function"]["name"]
    # get_weather*: the app's get_weather and the alias of get.weather (get_weather_<digest>).
    ollama_call = {"x-standin-call": ollama["tools"][0]["function"]["name"] + "*"}
    return [
        StreamCase(
            "",
            CHAT_PATH,
            raw,
            encode(renamed),
            app_name,
            {**SDK_LOAD_HEADERS, **delay},
            ("direct (no proxy)", "plain mitmdump", "streaming mitmdump", "mitmdump + toolnames"),
        ),
        # Plain mitmdump buffers this stream as it does SSE: not measured again.
        StreamCase(
            EVENT_STREAM,
            INVOKE_STREAM_PATH,
            encode(invoke),
            encode(invoke_renamed),
            invoke_name,
            {**INVOKE_HEADERS, **delay},
            ("direct (no proxy)", "streaming mitmdump", "mitmdump + toolnames"),
        ),
        # Likewise buffered by plain mitmdump. Under rule ollama fix mode renames nothing, so
        # its row is fix mode under openai's rule, as a user who names one gets it.
        StreamCase(
            NDJSON_STREAM,
            OLLAMA_STREAM_PATH,
            encode(ollama),
            encode(ollama_renamed),
            ollama_name,
            {**ollama_call, **delay},
            ("direct (no proxy)", "streaming mitmdump", "mitmdump + toolnames"),
            fix_rule="openai",
        ),
    ]


def bench_stream(binary: Path, workdir: Path, quick: bool, delay_ms: int) -> StreamResult:
    samples = 6 if quick else 30
    cases = stream_cases(delay_ms)
    sse_script = workdir / "stream_sse.py"
    sse_script.write_text(STREAM_SSE_SCRIPT)
    with ProcessGroup() as group:
        standin = group.add(start_standin(workdir, name="standin-c", record=False, nodelay=True))
        targets = {"direct (no proxy)": standin}
        for name, scripts in (
            ("plain mitmdump", []),
            ("streaming mitmdump", [sse_script]),
            ("mitmdump + toolnames", [ADDON_SCRIPT]),
        ):
            targets[name] = start_bench_mitmdump(group, name, binary, standin.url, workdir, scripts)
        targets[FIX_RENAMING_PATH] = start_bench_mitmdump(
            group,
            "mitmdump + toolnames (fix)",
            binary,
            standin.url,
            workdir,
            [ADDON_SCRIPT],
            options={"toolnames_mode": "fix"},
        )
        for rule in sorted({case.fix_rule for case in cases if case.fix_rule}):
            target = next(case.fix_target for case in cases if case.fix_rule == rule)
            targets[target] = start_bench_mitmdump(
                group,
                f"mitmdump + toolnames (fix, rule {rule})",
                binary,
                standin.url,
                workdir,
                [ADDON_SCRIPT],
                options={"toolnames_mode": "fix", "toolnames_rule": f"*={rule}"},
            )
        conns = {
            name: http.client.HTTPConnection("127.0.0.1", proc.port, timeout=60)
            for name, proc in targets.items()
        }
        # Each row: its name, its case, the mitmdump it goes through, the body it sends.
        plan: list[tuple[str, StreamCase, str, bytes]] = []
        for case in cases:
            plan += [(case.prefix + target, case, target, case.body) for target in case.paths]
            plan.append((case.prefix + FIX_RENAMING_PATH, case, case.fix_target, case.renamed))
        rows = {name: StreamRow(name) for name, *_ in plan}
        references: dict[str, bytes] = {}
        expected = {}
        for name, case, target, body in plan:  # warm up every connection and path
            expected[name] = first_chunk(conns[target], body, case.headers, case.path).body
            if target != case.fix_target:
                references[case.prefix] = expected[name]
            else:
                calls = restored_calls(case.path, expected[name])
                if calls != [case.app_name]:
                    raise RuntimeError(
                        f"fix mode gave {calls!r} back, not [{case.app_name!r}]: "
                        f"{expected[name][:300]!r}"
                    )
        for i in range(samples):
            # Take turns in a rotating order, so drift and the order itself favour no one.
            turn = plan[i % len(plan) :] + plan[: i % len(plan)]
            for name, case, target, body in turn:
                streamed = first_chunk(conns[target], body, case.headers, case.path)
                row = rows[name]
                row.ttfc.append(streamed.first_chunk)
                row.total.append(streamed.total)
                # The renamed path's stream differs from the stand-in's by the names given back.
                row.identical = row.identical and streamed.body == expected[name]
                if target != case.fix_target:
                    row.identical = row.identical and streamed.body == references[case.prefix]
            if (i + 1) % max(1, samples // 4) == 0:
                progress(f"(c) {i + 1}/{samples} streamed requests through each")
        for conn in conns.values():
            conn.close()
    return StreamResult(
        list(rows.values()), references[""], references[EVENT_STREAM], references[NDJSON_STREAM]
    )

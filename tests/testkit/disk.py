"""The fixtures on disk: captured SDK requests and provider answers (tests/fixtures/)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.testkit.core import api_for
from tests.testkit.infrastructure import REPO_ROOT
from tests.testkit.streams import aws_event
from tests.testkit.streams import sse
from toolnames_core.formats import FORMATS

__all__ = [
    "REQUEST_FIXTURES",
    "RESPONSES",
    "RESPONSES_DIR",
    "RESPONSE_SUFFIXES",
    "RESPONSE_FIXTURES",
    "SDK_DIR",
    "fixtures_of",
    "load_sdk",
    "replace_once",
    "response_api",
    "response_body",
    "response_fixture",
    "sdk_fixture",
]

SDK_DIR = REPO_ROOT / "tests" / "fixtures" / "sdk"
RESPONSES_DIR = REPO_ROOT / "tests" / "fixtures" / "responses"
# The kinds of answer in RESPONSES_DIR (its README.md says what each file kind holds).
RESPONSE_SUFFIXES = (".json", ".sse", ".jsonl", ".ndjson")


def sdk_fixture(name: str) -> dict:
    """tests/fixtures/sdk/<name>.json: {"sdk", "path", "body", "body_text"}."""
    path = SDK_DIR / f"{name}.json"
    assert path.exists(), (
        f"missing SDK fixture {path} (tests/fixtures/capture_sdk_bodies.py writes it)"
    )
    return json.loads(path.read_text(encoding="utf-8"))


def response_api(name: str) -> str:
    # Response fixtures are named after their format: gemini-vertex-... is gemini.
    return next(api for api in sorted(FORMATS, key=len, reverse=True) if name.startswith(api))


def response_body(path: Path) -> tuple[str, bytes]:
    """(content type, wire bytes) of a response fixture; jsonl files are framed as on the wire."""
    raw = path.read_bytes()
    if path.suffix == ".json":
        return "application/json", raw
    if path.suffix == ".ndjson":  # the stream as sent: its format's framing names the type
        return FORMATS[response_api(path.name)].framing.content_types[0], raw
    if path.suffix == ".sse" or raw.startswith((b"data:", b"event:")):
        return "text/event-stream", raw
    events = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
    framing = FORMATS[response_api(path.name)].framing
    if framing is not None and framing.name.startswith("aws-eventstream"):
        frames = b"".join(aws_event(*next(iter(e.items()))) for e in events)
        return framing.content_types[0], frames
    return "text/event-stream", sse(events, done=False)


def response_fixture(name: str):
    """A body (.json), or the data payloads of a raw SSE stream (.sse), in order."""
    text = (RESPONSES_DIR / name).read_text(encoding="utf-8")
    if name.endswith(".json"):
        return json.loads(text)
    if name.endswith(".ndjson"):
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [
        json.loads(line[len("data: ") :]) for line in text.splitlines() if line.startswith("data: ")
    ]


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times"
    return text.replace(old, new)


def load_sdk(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


REQUEST_FIXTURES = sorted(SDK_DIR.glob("*.json"))


def fixtures_of(api: str) -> list[Path]:
    return [p for p in REQUEST_FIXTURES if api_for("POST", load_sdk(p)["path"]) == api]


# tests/fixtures/responses/ (README.md there); older trees kept them in sdk/responses/.
RESPONSES = next(
    d
    for d in (SDK_DIR.parent / "responses", SDK_DIR / "responses")
    if d.is_dir() and any(d.iterdir())
)
RESPONSE_FIXTURES = sorted(p for p in RESPONSES.iterdir() if p.suffix in RESPONSE_SUFFIXES)

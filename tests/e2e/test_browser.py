"""
mitmweb in a real browser: the flow list tells a flagged, a fixed and a blocked flow apart, a
flagged flow opens in the toolnames view, and a slow live flow is marked before it completes.

The test writes a flow file (a clean, a flagged, a fixed and a blocked flow), starts a real
`mitmweb -n -r flows.mitm -s addon/toolnames.py`, and drives Debian's chromium with Playwright's
Python package, which drives an existing browser through `executable_path`: it downloads none.
It keeps a screenshot as artifacts/mitmweb-toolnames.png (docs/mitmweb-toolnames.png is a copy).
A second test runs mitmweb as a reverse proxy to the stand-in provider and watches a flow whose
answer streams slowly get its marker while the answer is still coming.

Versions: the main run (mitmproxy 12) drives its own mitmweb and, when scripts/test provides one,
mitmproxy 11's mitmweb too. mitmproxy 11 has no toolnames view, so there the test checks the flow
list and the log line that says the view needs mitmproxy 12. The mitmproxy 11 venv has no
Playwright (requirements/test-mitmproxy11.txt): this module is skipped in that run, since the
main run has already driven mitmweb 11.
"""

import http.client as http_client
import json
import secrets
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from mitmproxy import hooks
from mitmproxy import http
from mitmproxy import io
from mitmproxy.test import taddons
from mitmproxy.test import tflow
from mitmproxy.test import tutils
from mitmproxy.utils import emoji

import toolnames
from harness.mitmdump import ADDON_SCRIPT
from harness.processes import Process
from harness.processes import StartupError
from harness.processes import free_port
from harness.processes import start_process
from tests.testkit import REPO_ROOT
from tests.testkit import missing_infrastructure
from tests.testkit import mitmdump_binaries
from tests.testkit import mitmproxy_version
from toolnames_core import MARKERS
from toolnames_core import FlowRecord

sync_api = pytest.importorskip(
    "playwright.sync_api",
    reason="Playwright is installed in the main venv only (requirements/test.txt)",
)

pytestmark = [pytest.mark.browser, pytest.mark.e2e]

ARTIFACTS = REPO_ROOT / "artifacts"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# mitmweb's default columns, plus the comment column, which is where toolnames writes.
WEB_COLUMNS = ["tls", "icon", "path", "method", "status", "size", "time", "comment"]


def mitmweb_binaries() -> list[Path]:
    """The mitmweb next to each mitmdump the end-to-end tests run (see conftest)."""
    return [binary.parent / "mitmweb" for binary in mitmdump_binaries()]


def major(binary: Path) -> int:
    version = mitmproxy_version(binary) or "0"
    return int(version.split(".")[0])


# --- the flows ----------------------------------------------------------------------------------

T0 = 1_767_225_600.0  # 2026-01-01: timestamps mitmweb shows sensibly


def tool(name: str) -> dict:
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}


def chat(body: dict, at: float, host: str = "api.openai.com") -> http.HTTPFlow:
    f = tflow.tflow(
        req=tutils.treq(
            method=b"POST", scheme=b"https", host=host, port=443, path=b"/v1/chat/completions"
        )
    )
    f.request.headers["content-type"] = "application/json"
    f.request.text = json.dumps(body)
    f.request.timestamp_start, f.request.timestamp_end = at, at + 0.01
    return f


def answer(f: http.HTTPFlow, status: int, body: dict) -> None:
    f.response = http.Response.make(status, json.dumps(body), {"content-type": "application/json"})
    f.response.timestamp_start = f.request.timestamp_end + 0.6
    f.response.timestamp_end = f.response.timestamp_start + 0.05


def call(name: str) -> dict:
    return {"id": "call_1", "type": "function", "function": {"name": name, "arguments": "{}"}}


def make_flows() -> list[http.HTTPFlow]:
    """A clean flow, a flagged one (left for mitmweb's toolnames to flag), and a fixed and a
    blocked one as toolnames_save writes them: checked live, with their metadata."""
    clean = chat({"model": "gpt-4.1", "messages": [], "tools": [tool("get_weather")]}, T0)
    answer(clean, 200, {"choices": [{"index": 0, "message": {"content": "Sunny."}}]})

    flagged = chat(
        {
            "model": "gpt-4.1",
            "messages": [{"role": "user", "content": "Weather in Paris?"}],
            "tools": [tool("get_weather"), tool("search.web"), tool("get_weather")],
            "tool_choice": "auto",
        },
        T0 + 1,
    )
    error = {
        "message": "Invalid 'tools[1].function.name': string does not match pattern. "
        "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
        "type": "invalid_request_error",
        "param": "tools[1].function.name",
        "code": "invalid_value",
    }
    answer(flagged, 400, {"error": error})

    fixed = chat(
        {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "Find the docs"}],
            "tools": [tool("search_web"), tool("get_weather")],
            "tool_choice": {"type": "function", "function": {"name": "search.web"}},
        },
        T0 + 2,
    )
    blocked = chat(
        {"model": "gpt-4o-mini", "messages": [], "tools": [tool("fs.read"), tool("fs.write")]},
        T0 + 3,
        host="openrouter.ai",
    )
    tn = toolnames.ToolNames()
    with taddons.context(tn) as tctx:
        tctx.master.addons.invoke_addon_sync(tn, hooks.ConfigureHook(set(tctx.options.keys())))
        tctx.configure(tn, toolnames_mode="fix")
        tn.request(fixed)
        tctx.configure(tn, toolnames_mode="block")
        tn.request(blocked)
    answer(fixed, 200, {"choices": [{"index": 0, "message": {"tool_calls": [call("search_web")]}}]})
    blocked.response.timestamp_start = blocked.response.timestamp_end = T0 + 3.02
    for f in (fixed, blocked):
        assert (
            FlowRecord.from_metadata(f.metadata["toolnames"]).outcome
            == f.metadata["toolnames"]["action"]
        )
        # As read back from a file: the marker and comment are mitmweb's addon's to set.
        f.marked, f.comment = "", ""
    return [clean, flagged, fixed, blocked]


@pytest.fixture
def flow_file(tmp_path: Path) -> Path:
    path = tmp_path / "flows.mitm"
    with open(path, "wb") as fh:
        writer = io.FlowWriter(fh)
        for f in make_flows():
            writer.add(f)
    return path


# --- mitmweb ------------------------------------------------------------------------------------


@dataclass
class Mitmweb:
    process: Process
    url: str  # the web interface, with its token
    version: int

    def log_text(self) -> str:
        return self.process.log_text()


def start_mitmweb(binary: Path, tmp_path: Path, *how: str) -> Mitmweb:
    """mitmweb with the addon; ``how``: what it serves (a flow file read, a proxy mode)."""
    port = free_port()
    token = secrets.token_hex(8)
    command = [
        str(binary),
        *how,
        "-s",
        str(ADDON_SCRIPT),
        "--web-host",
        "127.0.0.1",
        "--web-port",
        str(port),
        "--no-web-open-browser",
        "--set",
        f"confdir={tmp_path / 'confdir'}",
        "--set",
        "termlog_verbosity=info",
    ]
    for column in WEB_COLUMNS:
        command += ["--set", f"web_columns={column}"]
    if major(binary) >= 12:
        # mitmweb 12 asks for a token; a fixed one is passed in the URL as ?token=.
        command += ["--set", f"web_password={token}"]
    try:
        proc = start_process("mitmweb", command, tmp_path / "mitmweb.log", port=port)
    except StartupError as e:
        pytest.fail(str(e), pytrace=False)
    return Mitmweb(proc, f"{proc.url}/?token={token}", major(binary))


@pytest.fixture(params=mitmweb_binaries(), ids=lambda b: f"mitmproxy-{mitmproxy_version(b)}")
def mitmweb_binary(request) -> Path:
    if not request.param.exists():
        missing_infrastructure(
            f"mitmweb not found at {request.param}; run scripts/test to set up the venvs"
        )
    return request.param


@pytest.fixture
def mitmweb(mitmweb_binary: Path, flow_file: Path, tmp_path: Path) -> Iterator[Mitmweb]:
    web = start_mitmweb(mitmweb_binary, tmp_path, "-n", "-r", str(flow_file))
    try:
        yield web
    finally:
        web.process.stop()


@pytest.fixture
def page(chromium_binary: str):
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=chromium_binary, headless=True, args=CHROMIUM_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1920, "height": 820})
            page.set_default_timeout(15_000)
            yield page
        finally:
            browser.close()


# --- the test -----------------------------------------------------------------------------------


def marker_of(outcome: str) -> str:
    """What mitmweb shows for the marker toolnames sets (mitmweb maps emoji names to emoji)."""
    return emoji.emoji[MARKERS[outcome]]


def test_mitmweb_shows_markers_comments_and_the_toolnames_view(mitmweb, page):
    expect = sync_api.expect
    page.goto(mitmweb.url)
    rows = page.locator("table tbody tr:has(td.col-path)")
    expect(rows).to_have_count(4)

    # The flow list: each outcome has its own marker, and a comment that says what happened.
    expected = [
        ("", ""),
        (marker_of("flagged"), "toolnames error: name-invalid-chars: tools[1].function.name"),
        (
            marker_of("fixed"),
            "toolnames fixed tool_choice.function.name 'search.web' → 'search_web'",
        ),
        (marker_of("blocked"), "toolnames blocked: name-invalid-chars: tools[0].function.name"),
    ]
    for i, (marker, comment) in enumerate(expected):
        row = rows.nth(i)
        expect(row.locator(".marker")).to_have_text(marker)
        if comment:
            expect(row.locator("td.col-comment")).to_contain_text(comment)
        else:
            expect(row.locator("td.col-comment")).to_have_text("")
    assert len({m for m, _ in expected}) == 4

    rows.nth(1).click()
    _arrange_layout(page)
    if mitmweb.version < 12:
        assert "the toolnames content view needs mitmproxy 12" in mitmweb.log_text()
        _screenshot(page, "mitmweb-toolnames-mitmproxy11.png")
        return

    # The flagged flow opens in the toolnames view by itself; choose it by hand all the same.
    contentview = page.locator(".flow-detail .contentview").first
    expect(contentview.locator(".controls h5")).to_have_text("toolnames")
    contentview.locator("a", has_text="View:").click()
    page.locator(".dropdown-menu a", has_text="toolnames").click()
    expect(contentview.locator(".controls")).to_contain_text("View: toolnames")
    text = contentview.locator("pre")
    expect(text).to_contain_text("toolnames: OpenAI Chat Completions request")
    expect(text).to_contain_text("Outcome: flagged in observe mode: see the findings below")
    expect(text).to_contain_text("search.web    10  function  ✗ bad chars '.'")
    # The recorded 400 names tools[1]: the provider's rejection confirms the prediction.
    expect(text).to_contain_text(
        "Findings: 2 errors, 1 warning (recorded by toolnames for this flow)"
    )
    expect(text).to_contain_text("provider-rejected   at tools[1].function.name")
    expect(text).to_contain_text("; toolnames had predicted it (name-invalid-chars)")
    _screenshot(page, "mitmweb-toolnames.png")


def test_a_flow_whose_answer_is_slow_shows_its_marker_while_the_answer_streams(
    mitmweb_binary, page, tmp_path
):
    # Observe mode checks a request when its flow completes, or a second after it went
    # out: mitmweb must show that second check without waiting for the end of the flow.
    from standin import StandinProvider

    with StandinProvider() as provider:
        proxy_port = free_port()
        web = start_mitmweb(
            mitmweb_binary,
            tmp_path,
            "--mode",
            f"reverse:{provider.url}",
            "--listen-host",
            "127.0.0.1",
            "--listen-port",
            str(proxy_port),
        )
        try:
            page.goto(web.url)
            body = {
                "model": "gpt-4.1",
                "stream": True,
                "messages": [{"role": "user", "content": "Weather in Paris?"}],
                # Accepted by OpenAI, flagged by toolnames as a warning: the stream goes on.
                "tools": [tool("get_weather"), tool("get_weather")],
            }
            conn = http_client.HTTPConnection("127.0.0.1", proxy_port, timeout=30)
            # Five events, 1.5 s apart: the whole answer takes 6 s.
            conn.request(
                "POST",
                "/v1/chat/completions",
                json.dumps(body),
                {"content-type": "application/json", "x-standin-delay-ms": "1500"},
            )
            response = conn.getresponse()
            first_event = response.readline()
            assert first_event.startswith(b"data: ")
            row = page.locator("table tbody tr:has(td.col-path)")
            sync_api.expect(row.locator(".marker")).to_have_text(
                marker_of("flagged"), timeout=4_000
            )
            sync_api.expect(row.locator("td.col-comment")).to_contain_text(
                "toolnames warning: name-duplicate"
            )
            rest = response.read()  # the stream was still going when the marker came
            assert rest.rstrip().endswith(b"data: [DONE]")
            conn.close()
        finally:
            web.process.stop()
    assert "Traceback" not in web.log_text()


def _arrange_layout(page) -> None:
    """Widen the flow list and its comment column, as a user would, for the screenshot."""
    for handle, by in (
        (".splitter > div", 150),
        ("th.col-path .col-resize-handle", -290),
        ("th.col-comment .col-resize-handle", 290),
    ):
        box = page.locator(handle).first.bounding_box() if page.locator(handle).count() else None
        if box is None:  # mitmweb 11 has no resizable columns
            continue
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.down()
        page.mouse.move(x + by, y, steps=8)
        page.mouse.up()


def _screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name))
    print(f"screenshot: {ARTIFACTS / name}", file=sys.stderr)

"""Smoke tests for the end-to-end fixtures in conftest.py: real mitmdumps, without the addon."""

import json
import os
import subprocess
import threading
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.testkit import MAIN_VENV_MITMDUMP
from tests.testkit import missing_infrastructure
from tests.testkit import mitmproxy_version

# Bypass any http_proxy/https_proxy from the environment: requests go straight to loopback.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class HelloHandler(BaseHTTPRequestHandler):
    """One route: POST /hello echoes the JSON body it got."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.seen.append((self.path, body))  # type: ignore[attr-defined]
        if self.path != "/hello":
            self.send_error(404)
            return
        payload = json.dumps({"hello": json.loads(body)}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def hello_upstream() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HelloHandler)
    server.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def post_json(url: str, data: object) -> tuple[int, object]:
    request = urllib.request.Request(
        url,
        data=json.dumps(data).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with OPENER.open(request, timeout=10) as response:
        return response.status, json.loads(response.read())


def mitmdump_version(binary: Path) -> str:
    result = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=True
    )
    return result.stdout


def test_reverse_proxy_passes_requests_through(mitmdump, mitmdump_binary, hello_upstream):
    upstream = f"http://127.0.0.1:{hello_upstream.server_address[1]}"
    proxy = mitmdump(mode="reverse", upstream=upstream, binary=mitmdump_binary, script=None)

    status, body = post_json(f"{proxy.url}/hello", {"tools": [{"name": "get_weather"}]})

    assert status == 200
    assert body == {"hello": {"tools": [{"name": "get_weather"}]}}
    assert hello_upstream.seen == [("/hello", b'{"tools": [{"name": "get_weather"}]}')]
    log = proxy.wait_for_log("/hello")
    assert "POST" in log
    assert proxy.process.poll() is None
    assert proxy.stop() is not None
    assert proxy.process.poll() is not None


def test_reverse_proxy_defaults_to_the_standin_provider(mitmdump, standin):
    proxy = mitmdump(script=None)
    request = {"model": "test", "messages": [{"role": "user", "content": "hi"}]}

    status, _ = post_json(f"{proxy.url}/v1/chat/completions", request)

    assert status == 200
    assert [(r["method"], r["path"]) for r in standin.requests] == [
        ("POST", "/v1/chat/completions")
    ]
    assert json.loads(standin.requests[0]["body"]) == request


def test_mitmdump_that_dies_fails_with_its_output(mitmdump, hello_upstream, tmp_path):
    upstream = f"http://127.0.0.1:{hello_upstream.server_address[1]}"
    missing = tmp_path / "no_such_addon.py"
    with pytest.raises(pytest.fail.Exception) as excinfo:
        mitmdump(upstream=upstream, script=missing)
    message = str(excinfo.value)
    assert "mitmdump exited with code 1 before listening" in message
    assert f"No such script: {missing}" in message


def test_mitmdump_binary_ids_match_the_versions(mitmdump_binary):
    version = mitmproxy_version(mitmdump_binary)
    assert version
    assert f"Mitmproxy: {version}" in mitmdump_version(mitmdump_binary)


def test_main_venv_mitmdump_is_mitmproxy_12():
    if not MAIN_VENV_MITMDUMP.exists():
        missing_infrastructure(f"{MAIN_VENV_MITMDUMP} missing; run scripts/test")
    assert "Mitmproxy: 12." in mitmdump_version(MAIN_VENV_MITMDUMP)


def test_mitmproxy11_mitmdump_is_11_0_2():
    binary = os.environ.get("TOOLNAMES_MITMDUMP_11")
    if not binary or not Path(binary).exists():
        missing_infrastructure(
            f"TOOLNAMES_MITMDUMP_11={binary!r} is not a mitmdump; run scripts/test"
        )
    assert "Mitmproxy: 11.0.2" in mitmdump_version(Path(binary))

"""The stand-in provider in a process of its own (harness.provider)."""

import json
import urllib.request

import pytest

from harness.provider import start_standin

pytestmark = pytest.mark.e2e  # the stand-in in a process of its own

DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
CHAT = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def post_chat(url: str) -> dict:
    request = urllib.request.Request(
        url + "/v1/chat/completions",
        data=json.dumps(CHAT).encode(),
        headers={"content-type": "application/json"},
    )
    with DIRECT.open(request, timeout=10) as response:
        return json.load(response)


def recorded(url: str) -> list:
    with DIRECT.open(url + "/_standin/requests", timeout=10) as response:
        return json.load(response)


def test_the_standin_runs_on_the_port_it_printed_and_records(tmp_path):
    proc = start_standin(tmp_path)
    try:
        answer = post_chat(proc.url)
        assert answer["choices"][0]["message"]["content"] == "hello"
        assert len(recorded(proc.url)) == 1
    finally:
        assert proc.stop() == 0  # it ends cleanly on SIGTERM
    assert (tmp_path / "standin.log").exists()


def test_for_load_runs_it_records_nothing(tmp_path):
    proc = start_standin(tmp_path, name="load", record=False, nodelay=True)
    try:
        post_chat(proc.url)
        assert recorded(proc.url) == []
        assert "--no-record" in proc.command and "--nodelay" in proc.command
    finally:
        proc.stop()

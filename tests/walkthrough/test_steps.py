"""The demo's steps (walkthrough.steps)."""

import json
import urllib.request

from standin import StandinProvider
from walkthrough import steps


class Logged:
    """Stands in for a mitmdump process: only its output is read."""

    url = "http://127.0.0.1:1"

    def __init__(self, text: str) -> None:
        self.text = text

    def log_text(self) -> str:
        return self.text


def test_a_report_counts_passes_and_keeps_failures(capsys):
    report = steps.Report()

    assert report.check(True, "good") and not report.check(False, "bad")
    assert (report.passed, report.failures) == (1, ["bad"])
    assert capsys.readouterr().out == "  ✓ good\n  ✗ bad\n"


def test_the_proxy_shows_each_addon_line_once():
    process = Logged("[1] x: toolnames error: one\n[2] other line\n")
    proxy = steps.Proxy(process)

    assert proxy.new_lines(1) == ["toolnames error: one"]
    process.text += "[3] y: toolnames fixed two\n"
    assert proxy.new_lines(1) == ["toolnames fixed two"]
    assert proxy.new_lines(0, timeout=0) == []


def test_a_mode_whose_log_says_something_else_fails_its_check(capsys):
    report = steps.Report()
    steps.show_log("block", [steps.LOGGED["block"] + " …"], report)
    steps.show_log("block", ["toolnames error: something else"], report)

    assert report.passed == 1 and len(report.failures) == 1


def test_the_forced_name_is_read_from_the_body_sent():
    body = json.dumps({"tool_choice": {"function": {"name": "search.web"}}}).encode()

    assert steps.forced_name(body) == "search.web"
    assert steps.forced_name(b"not json") is None


def test_the_providers_records_are_read_and_reset_over_http():
    with StandinProvider() as provider:
        steps.provider_reset(provider.url)
        body = json.dumps({"model": "m", "messages": []}).encode()
        request = urllib.request.Request(
            provider.url + "/v1/chat/completions", data=body, method="POST"
        )
        steps.DIRECT.open(request, timeout=10).close()
        assert steps.provider_requests(provider.url) == [body]
        steps.provider_reset(provider.url)
        assert steps.provider_requests(provider.url) == []

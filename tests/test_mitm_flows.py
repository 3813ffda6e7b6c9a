"""The glue between flows and the core (toolnames_core/mitm_flows.py)."""

import pytest
from mitmproxy.test import tflow

from toolnames_core import mitm_flows


@pytest.mark.parametrize(
    "host_header",
    [
        "api.openai.com",
        "API.OpenAI.com:443",
        "127.0.0.1:8080",
        "[::1]:8080",
        "xn--bcher-kva.example",  # punycode, which pretty_host shows decoded
        "not a host!",
        "",
        None,
    ],
)
def test_host_is_what_pretty_host_says_every_time(host_header):
    f = tflow.tflow()
    if host_header is None:
        f.request.headers.pop("Host", None)
    else:
        f.request.headers["Host"] = host_header
    assert mitm_flows.host(f.request) == f.request.pretty_host
    assert mitm_flows.host(f.request) == f.request.pretty_host  # remembered, still the same


def test_host_of_an_http2_request_comes_from_its_authority():
    f = tflow.tflow()
    f.request.http_version = "HTTP/2.0"
    f.request.authority = "generativelanguage.googleapis.com"
    assert mitm_flows.host(f.request) == "generativelanguage.googleapis.com"


def test_hosts_remembered_are_bounded(monkeypatch):
    monkeypatch.setattr(mitm_flows, "_hosts", {})
    f = tflow.tflow()
    for i in range(mitm_flows._MAX_HOSTS + 10):
        f.request.headers["Host"] = f"h{i}.example"
        assert mitm_flows.host(f.request) == f"h{i}.example"
    assert len(mitm_flows._hosts) <= mitm_flows._MAX_HOSTS

"""Saving flagged flows (save.py): a redacted copy, appended to a file only its owner reads."""

import os
import stat

from mitmproxy import io
from mitmproxy.test import tflow

from toolnames_mitm import save


def test_a_log_path_keeps_its_parameters_but_not_their_secrets():
    path = "/v1beta/models/g:generateContent?alt=sse&key=AIzaSECRET&API_KEY=x"
    assert save.redacted_path(path) == (
        f"/v1beta/models/g:generateContent?alt=sse&key={save.REDACTED}&API_KEY={save.REDACTED}"
    )
    assert save.redacted_path("/v1/messages") == "/v1/messages"


def test_a_redacted_copy_is_the_same_flow_without_credentials_and_the_live_flow_keeps_them():
    f = tflow.tflow(resp=True)
    f.request.headers["authorization"] = "Bearer sk-secret"
    f.request.query["key"] = "AIzaSECRET"
    copy = save.redacted_copy(f)
    assert copy.id == f.id
    assert copy.request.headers["authorization"] == save.REDACTED
    assert copy.request.query["key"] == save.REDACTED
    assert f.request.headers["authorization"] == "Bearer sk-secret"


def test_the_writer_appends_readable_flows_to_an_owner_only_file(tmp_path):
    target = tmp_path / "flagged.mitm"
    for _ in range(2):
        writer = save.FlaggedFlowWriter(str(target))
        writer.add(tflow.tflow(resp=True))
        writer.close()
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o600
    with open(target, "rb") as f:
        assert len(list(io.FlowReader(f).stream())) == 2

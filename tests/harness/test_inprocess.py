"""The addon in mitmproxy's test master (harness.inprocess)."""

import logging

from mitmproxy.test import tflow

from harness.inprocess import running


def test_the_addon_is_configured_as_at_startup_then_with_the_options():
    with running(toolnames_mode="block") as (tctx, tn):
        assert tctx.options.toolnames_mode == "block"
        flow = tflow.tflow()
        tn.request(flow)  # a request that is no LLM API call passes untouched
        assert flow.response is None


def test_the_test_masters_log_handler_does_not_outlive_the_context():
    before = list(logging.getLogger().handlers)
    with running():
        pass
    with running():  # a second context in the same process logs without failing
        logging.getLogger("toolnames").warning("still works")
    assert logging.getLogger().handlers == before

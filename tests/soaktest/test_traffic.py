"""The soak's traffic (soaktest.traffic)."""

import json

from soaktest.traffic import FORMATS
from soaktest.traffic import ID_HEADER
from soaktest.traffic import KINDS
from soaktest.traffic import UNOFFERED
from soaktest.traffic import flow_for


def test_every_kind_meets_every_format_within_one_cycle():
    cycle = len(KINDS) * len(FORMATS)
    seen = {(flow_for(i).kind, flow_for(i).request.path) for i in range(cycle)}

    assert len(seen) == len(set(KINDS)) * len(FORMATS)


def test_each_request_is_json_numbered_and_asks_for_its_call():
    for i in range(50):
        flow = flow_for(i)
        assert isinstance(json.loads(flow.request.body), dict)
        assert flow.request.headers[ID_HEADER] == str(i)
        assert flow.request.headers.get("x-standin-call", "") == flow.kind.call


def test_flagged_kinds_are_the_ones_the_addon_reports():
    flagged = {k.name for k in KINDS if k.flagged}

    assert flagged == {"unoffered call", "unoffered call streamed", "invalid name"}
    assert all(k.call == UNOFFERED for k in KINDS if k.name.startswith("unoffered"))
    assert [k.status for k in KINDS if k.name == "invalid name"] == [400]

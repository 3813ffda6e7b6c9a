"""The addon does what it did before the house moves (issue 26), byte for byte: on every SDK
request fixture (as captured and with names the rule rejects) with each of its format's
answers, a 400 and none; on every sample flow in flows/ read back, read afresh and replayed
live; and on Realtime and Gemini Live sessions; in each mode. The digests in
tests/fixtures/behaviour.json were made by tests/testkit/behaviour.py from the code at 07daf79."""

import json

import pytest
from mitmproxy import version

from tests.testkit.behaviour import GOLDEN
from tests.testkit.behaviour import cases
from tests.testkit.behaviour import digest
from tests.testkit.behaviour import run_case
from tests.testkit.behaviour import summary

RECORDED = json.loads(GOLDEN.read_text())
MAJOR = version.VERSION.split(".")[0]


def test_every_case_was_recorded_on_this_mitmproxy_version():
    names = [name for name, _, _ in cases()]
    assert len(names) == len(set(names)) > 1000
    assert sorted(names) == sorted(RECORDED["digests"][MAJOR])


@pytest.mark.parametrize("modes", ["observe", "fix", "block"])
def test_the_addon_does_what_it_did(modes):
    changed = []
    for name, options, run in cases():
        if options["toolnames_mode"] != modes:
            continue
        outcome = run_case(options, run)
        if digest(outcome) != RECORDED["digests"][MAJOR][name]:
            changed.append(f"{name}: {RECORDED['summaries'][name]} -> {summary(outcome)}")
    assert not changed, f"{len(changed)} cases changed:\n" + "\n".join(changed[:20])

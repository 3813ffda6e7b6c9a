"""Reading a py-spy profile of a loaded mitmdump (benchmark.profile)."""

import pytest

from benchmark.profile import STACK_PARTS
from benchmark.profile import Comparison
from benchmark.profile import FunctionTime
from benchmark.profile import compare
from benchmark.profile import parse_collapsed
from benchmark.profile import read_collapsed
from benchmark.profile import report_comparison
from benchmark.profile import report_profile
from benchmark.throughput import JSON_ONLY
from benchmark.throughput import NAIVE_RENAMING

# py-spy's raw output: a stack per line, outermost frame first, then its samples.
COLLAPSED = """\
run (asyncio/runners.py:118);request (toolnames_mitm/addon.py:120);loads (json/__init__.py:346) 6
run (asyncio/runners.py:118);request (toolnames_mitm/addon.py:131) 2
run (asyncio/runners.py:118);walk (jsonsplice.py:10);walk (jsonsplice.py:14);walk (jsonsplice.py:14) 3
run (asyncio/runners.py:119);select (selectors.py:468) 9
not a stack line
"""


def test_a_function_counts_once_per_sample_however_deep_it_recurses_and_lines_are_merged():
    profile = parse_collapsed(COLLAPSED)

    assert profile.samples == 20
    assert profile.top(5) == [
        FunctionTime("run (asyncio/runners.py)", 20, 0),
        FunctionTime("select (selectors.py)", 9, 9),
        FunctionTime("request (toolnames_mitm/addon.py)", 8, 2),
        FunctionTime("loads (json/__init__.py)", 6, 6),
        FunctionTime("walk (jsonsplice.py)", 3, 3),
    ]


def test_the_report_gives_shares_of_all_samples():
    text = report_profile(parse_collapsed(COLLAPSED), n=2)

    assert text.startswith("20 samples.")
    assert "| run (asyncio/runners.py) | 100.0%     | 0.0%  |" in text
    assert "| select (selectors.py)    | 45.0%      | 45.0% |" in text
    assert "request" not in text.split("By function:")[1].split("The addon's own functions:")[0]


def test_the_addons_own_functions_get_a_table_of_their_own():
    text = report_profile(parse_collapsed(COLLAPSED), n=2, own=("toolnames_",))

    own = text.split("The addon's own functions:")[1]
    assert "| request (toolnames_mitm/addon.py) | 40.0%      | 10.0% |" in own
    assert "asyncio" not in own and "jsonsplice" not in own


def test_a_raw_file_with_a_byte_that_is_not_utf8_is_read_all_the_same(tmp_path):
    # A full run's py-spy output held a 0xff in a frame; reading it raised UnicodeDecodeError
    # after (b) and lost the rest of the run.
    raw = tmp_path / "py-spy.txt"
    raw.write_bytes(COLLAPSED.encode() + b"run (asyncio/runners.py:118);th\xffread (x.py:1) 4\n")

    profile = read_collapsed(raw)

    assert profile.samples == 24
    assert profile.top(1) == [FunctionTime("run (asyncio/runners.py)", 24, 0)]


# A loaded mitmdump's stacks, one of each kind the parts tell apart.
LOOP = "_run_once (asyncio/base_events.py:2027);_run (asyncio/events.py:89)"
HOOKS = f"{LOOP};trigger_event (mitmproxy/addonmanager.py:290)"
PARTS_COLLAPSED = f"""\
{HOOKS};request (toolnames_mitm/addon.py:245);_fix (toolnames_core/exchange.py:300);replace_strings (toolnames_core/jsonsplice.py:426) 5
{HOOKS};request (toolnames_mitm/addon.py:245);body (toolnames_core/readers.py:130) 3
{HOOKS};response (toolnames_mitm/addon.py:354);mark (toolnames_mitm/flows.py:248) 2
{HOOKS};response (toolnames_mitm/addon.py:354);log (toolnames_mitm/addon.py:208);warning (logging/__init__.py:1531) 4
{LOOP};trigger (mitmproxy/addonmanager.py:305);_iter_hooks (mitmproxy/addonmanager.py:248) 6
{HOOKS};_iter_hooks (mitmproxy/addonmanager.py:249) 7
{HOOKS};_iter_hooks (mitmproxy/addonmanager.py:249);traverse (mitmproxy/addonmanager.py:30) 1
{HOOKS};response (toolnames_mitm/addon.py:354);_redraw (toolnames_mitm/addon.py:305);trigger (mitmproxy/addonmanager.py:305) 1
{HOOKS};request (mitmproxy/addons/anticache.py:24) 2
{HOOKS};request (json_only.py:3);loads (json/__init__.py:346) 3
{HOOKS};response (/tmp/toolnames-bench-1/json_only.py:5) 1
{HOOKS};request (/tmp/not_json_only.py:3) 1
{HOOKS};response (/tmp/toolnames-bench-1/naive_renaming.py:40);dumps (json/__init__.py:238) 2
{LOOP};read_headers (mitmproxy/proxy/layers/http/_http1.py:88) 12
"""


def test_each_part_counts_the_samples_whose_stack_holds_it():
    parts = parse_collapsed(PARTS_COLLAPSED).parts

    assert list(parts) == [part.name for part in STACK_PARTS]
    assert parts == {
        "toolnames, all of it": 15,
        "its request hook": 8,  # another addon's request hook is not toolnames'
        "its response hook": 7,
        "of them: the splice": 5,
        "of them: reading the body": 3,
        "of them: marking and commenting the flow": 2,
        "of them: its log lines, in the hook": 4,
        # The script as py-spy names it, by its file's name or its path; not another script.
        "the json.loads-only script's hooks": 4,
        "the naive renaming script's hooks": 2,
        # trigger run by the loop itself, as a log record schedules it; not one a hook calls.
        "mitmproxy's add_log fan-out of every log record": 6,
        # _iter_hooks and traverse on top, under the hooks' trigger_event or the fan-out.
        "mitmproxy's hook dispatch, on top of the stack": 14,
    }


def test_the_report_leads_with_the_parts():
    text = report_profile(parse_collapsed(PARTS_COLLAPSED), n=2)

    parts = text.split("By part")[1].split("By function:")[0]
    (splice,) = [line for line in parts.splitlines() if "| of them: the splice " in line]
    assert splice.split("|")[2].strip() == "10.0%"  # 5 of 50 samples


@pytest.mark.parametrize(
    ("rest", "addon", "script"),
    [(1.0, 0.2, 0.1), (2.5, 0.1, 0.9), (1.0, 3.0, 3.5), (0.7, 0.0, 0.4)],
)
def test_two_profiles_give_the_ratio_of_requests_their_costs_give(rest, addon, script):
    # Two mitmdumps doing the same rest of the flow a request, one with the addon's hooks, one
    # with the script's: the ratio their profiles' shares give is that of their throughputs.
    found = Comparison(addon / (rest + addon), script / (rest + script))

    assert found.ratio == pytest.approx((rest + script) / (rest + addon))
    assert found.ceiling == pytest.approx((rest + script) / rest)


def test_a_comparison_takes_the_addons_part_and_the_reference_scripts_own():
    profile = parse_collapsed(PARTS_COLLAPSED)  # 50 samples: toolnames 15, the scripts 4 and 2

    assert compare(profile, profile, JSON_ONLY) == Comparison(15 / 50, 4 / 50)
    assert compare(profile, profile, NAIVE_RENAMING) == Comparison(15 / 50, 2 / 50)


def test_a_comparison_is_said_with_both_shares_and_what_they_give():
    text = report_comparison(Comparison(0.169, 0.102), "toolnames fix", "naive renaming")

    assert "toolnames in 16.9% of the samples of toolnames fix" in text
    assert "the script in 10.2% of those of naive renaming" in text
    assert "serves 0.925 of naive renaming's requests" in text
    assert "would serve 1.114 of them" in text

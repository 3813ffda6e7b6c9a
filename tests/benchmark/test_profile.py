"""Reading a py-spy profile of a loaded mitmdump (benchmark.profile)."""

from benchmark.profile import FunctionTime
from benchmark.profile import parse_collapsed
from benchmark.profile import read_collapsed
from benchmark.profile import report_profile

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
    assert "request" not in text.split("The addon's own functions:")[0]


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

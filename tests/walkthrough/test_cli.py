"""scripts/demo's command line (walkthrough.cli); the whole demo runs in tests/e2e/test_demo.py."""

import pytest

from walkthrough.cli import MODES
from walkthrough.cli import main


def test_the_modes_run_in_the_order_the_story_is_told():
    assert list(MODES) == ["observe", "fix", "block"]


def test_help_says_where_the_flows_go(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--help"])

    assert caught.value.code == 0
    assert "--out" in capsys.readouterr().out

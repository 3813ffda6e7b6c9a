"""scripts/bench's command line (benchmark.cli)."""

import pytest

from benchmark.cli import main


def test_help_names_the_three_parts_and_the_quick_run(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--help"])

    out = capsys.readouterr().out
    assert caught.value.code == 0
    assert "--quick" in out and "--only" in out and "--mitmdump" in out


def test_a_quick_run_of_part_a_prints_its_table_and_targets(capsys):
    assert main(["--quick", "--only", "a", "--cases", "small"]) == 0

    out = capsys.readouterr().out
    assert "(a) CPU per request" in out
    assert "| (a) no tools, small: request hook |" in out
    assert "targets met in" in out

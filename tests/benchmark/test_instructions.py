"""The callgrind counter (benchmark.instructions): its workloads do what they count, and a
count is the difference of two runs. valgrind itself is not run here (it is slow and not
installed everywhere); its "Collected" line is given by a stand-in for subprocess.run."""

import subprocess

import pytest

from benchmark import instructions


@pytest.mark.parametrize("workload", instructions.WORKLOADS)
def test_every_workload_runs_and_checks_what_it_counts(workload):
    # fix raises SystemExit if the answer's call was not given back; the streams if the
    # stream does not name the app's tool.
    instructions.run(workload, "10 tools", 1)


def test_a_count_is_one_runs_share_of_the_difference_between_two_valgrind_runs(monkeypatch):
    collected = iter([1_000_000, 1_600_000])
    commands = []
    # Where the environment says not to write bytecode, every run would compile its imports.
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")

    def fake_run(command, **kwargs):
        assert "PYTHONDONTWRITEBYTECODE" not in kwargs["env"]
        assert kwargs["env"]["PYTHONHASHSEED"] == "0"
        commands.append(command)
        stderr = "" if command[0] != "valgrind" else f"==1== Collected : {next(collected)}\n"
        return subprocess.CompletedProcess(command, 0, "", stderr)

    monkeypatch.setattr(instructions.subprocess, "run", fake_run)

    assert instructions.count("fix", "10 tools", 3) == 200_000
    # A plain run first (it compiles what changed), then 1 run and 1 + 3 runs under valgrind.
    assert [c[0] == "valgrind" for c in commands] == [False, True, True]
    assert [c[-1] for c in commands] == ["1", "1", "4"]


def test_without_valgrind_it_says_so(monkeypatch, capsys):
    monkeypatch.setattr(instructions.shutil, "which", lambda _: None)

    assert instructions.main(["--case", "10 tools"]) == 2
    assert "valgrind is not installed" in capsys.readouterr().err

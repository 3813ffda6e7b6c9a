"""The callgrind counter (benchmark.instructions): its workloads do what they count, and a
count is the difference of two runs. valgrind itself is not run here (it is slow and not
installed everywhere); its "Collected" line is given by a stand-in for subprocess.run."""

import contextlib
import logging
import subprocess
from pathlib import Path
from types import SimpleNamespace

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


def test_a_mitmdump_count_is_what_callgrind_counted_between_zeroing_and_dumping(monkeypatch):
    calls = []
    out_files = []

    @contextlib.contextmanager
    def fake_mitmdump(name, case, connections, wrapper=()):
        # through_mitmdump yields once mitmdump is warmed up; the warm-up is not counted.
        assert wrapper[:2] == ["valgrind", "--tool=callgrind"]
        out_files.append(wrapper[2].removeprefix("--callgrind-out-file="))
        calls.append(("started", name, connections))
        yield (
            SimpleNamespace(process=SimpleNamespace(pid=4242)),
            lambda n: calls.append(("sent", n)),
        )

    def fake_run(command, **kwargs):
        calls.append(tuple(command))
        if command[1] == "-d":  # callgrind writes a dump beside its out file, numbered
            Path(f"{out_files[0]}.1").write_text("events: Ir\nsummary: 9\ntotals: 3200000\n")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(instructions, "through_mitmdump", fake_mitmdump)
    monkeypatch.setattr(instructions.subprocess, "run", fake_run)

    # Two requests on each of 16 connections: 32 requests shared 3.2 million instructions.
    assert instructions.count("mitmdump-fix", "10 tools", 2, connections=16) == 100_000
    assert calls == [
        ("started", "mitmdump-fix", 16),
        ("callgrind_control", "-z", "4242"),
        ("sent", 32),
        ("callgrind_control", "-d", "4242"),
    ]


def test_a_dump_without_its_totals_line_is_said_so():
    assert instructions.dump_total("events: Ir\nsummary: 12\ntotals: 34\n") == 34
    with pytest.raises(SystemExit, match="totals"):
        instructions.dump_total("events: Ir\n")


def test_the_unlogged_fix_workload_disables_the_addons_logger_and_nothing_else(tmp_path):
    logged = instructions.mitmdump_workload("mitmdump-fix", tmp_path)
    unlogged = instructions.mitmdump_workload("mitmdump-fix-unlogged", tmp_path)
    loads = instructions.mitmdump_workload("mitmdump-loads", tmp_path)

    assert unlogged.options == logged.options == {"toolnames_mode": "fix"}
    assert unlogged.scripts[:-1] == logged.scripts and len(logged.scripts) == 1
    namespace = {}
    exec(unlogged.scripts[-1].read_text(), namespace)
    assert logging.getLogger("toolnames").disabled
    logging.getLogger("toolnames").disabled = False
    assert logged.renames and not loads.renames

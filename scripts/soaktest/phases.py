"""The soak's phases and their checks: many flows (memory, errors, the saved file), then a
kill -9 mid-run (every flow completed before it can be read back) and a restart on the same
file (every whole flow of both runs can be read back)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from harness.load import progress
from harness.mitmdump import ADDON_SCRIPT
from harness.mitmdump import start_mitmdump
from harness.processes import ProcessGroup
from harness.provider import start_standin
from soaktest.drive import RssSample
from soaktest.drive import RunResult
from soaktest.drive import drive
from soaktest.drive import log_problems
from soaktest.drive import read_saved
from soaktest.drive import saved_ids
from soaktest.traffic import flow_for

__all__ = ["Check", "PhaseResult", "memory_check", "phase_control", "phase_kill", "phase_soak"]


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


class PhaseResult(NamedTuple):
    run: RunResult
    checks: list[Check]


def memory_check(samples: list[RssSample], flows: int, growth: float) -> Check:
    if len(samples) < 3:
        return Check("memory flat", True, "too few flows to sample (not checked)")
    warm = next((s.kib for s in samples if s.flows >= flows // 10), samples[0].kib)
    first, last, top = samples[0].kib, samples[-1].kib, max(s.kib for s in samples)
    return Check(
        "memory flat",
        last <= warm * (1 + growth),
        f"RSS first {first / 1024:.1f} MiB, after warm-up {warm / 1024:.1f} MiB, "
        f"last {last / 1024:.1f} MiB ({(last / warm - 1) * 100:+.1f}%), "
        f"max {top / 1024:.1f} MiB; {len(samples)} samples",
    )


def _run(
    binary: Path,
    workdir: Path,
    name: str,
    flows: int,
    concurrency: int,
    *,
    save: Path | None,
    kill_after: int | None = None,
) -> RunResult:
    """``flows`` flows through a fresh mitmdump in front of a fresh stand-in; with ``save``,
    the addon is loaded and saves the flagged flows there."""
    with ProcessGroup() as group:
        standin = group.add(start_standin(workdir, name=f"standin-{name.replace(' ', '-')}"))
        proc = group.add(
            start_mitmdump(
                binary,
                f"reverse:{standin.url}",
                confdir=workdir / "confdir",
                log_dir=workdir,
                name=f"mitmdump ({name})",
                scripts=[ADDON_SCRIPT] if save else [],
                options={"flow_detail": "0", **({"toolnames_save": str(save)} if save else {})},
                verbosity="warn",
            )
        )
        progress(f"{name}: {flows} flows, {concurrency} at a time, through {proc.name}")
        run = drive(proc, flows, concurrency, name, kill_after=kill_after)
        rss_end = proc.rss_kib()
        if rss_end is not None and kill_after is None:
            run.rss_kib.append(RssSample(len(run.done), rss_end))
    run.log_problems = log_problems(proc)
    run.save = save
    return run


def phase_control(binary: Path, workdir: Path, flows: int, concurrency: int) -> Check:
    """The same traffic through mitmdump without the addon: how much mitmproxy grows alone."""
    run = _run(binary, workdir, "control", flows, concurrency, save=None)
    check = memory_check(run.rss_kib, flows, float("inf"))
    return Check("control: mitmdump without the addon", True, check.detail)


def phase_soak(
    binary: Path, workdir: Path, flows: int, concurrency: int, growth: float
) -> PhaseResult:
    save = workdir / "phase-1.mitm"
    run = _run(binary, workdir, "phase 1", flows, concurrency, save=save)

    expected = {i for i in run.done if flow_for(i).kind.flagged}
    saved, cut = read_saved(save)
    ids = saved_ids(saved)
    mode = stat.S_IMODE(os.stat(save).st_mode)
    checks = [
        Check(
            "every client had its full, expected answer",
            len(run.done) == flows and not run.wrong() and not run.client_errors,
            f"{len(run.done)}/{flows} completed, {len(run.wrong())} unexpected answers, "
            f"{len(run.client_errors)} client errors {run.client_errors[:3]}",
        ),
        Check(
            "mitmdump logged no errors",
            not run.log_problems,
            f"{len(run.log_problems)} other lines {run.log_problems[:5]}",
        ),
        Check(
            "saved file: readable, owner-only, the flagged flows once each",
            cut is None and mode == 0o600 and sorted(ids) == sorted(expected),
            f"{len(saved)} flows read (expected {len(expected)} flagged), "
            f"{len(ids) - len(set(ids))} duplicates, {len(expected - set(ids))} missing, "
            f"{len(set(ids) - expected)} unexpected, mode {mode:o}"
            + (f", reading stopped: {cut}" if cut else ""),
        ),
    ]
    checks.append(memory_check(run.rss_kib, flows, growth))
    return PhaseResult(run, checks)


def phase_kill(
    binary: Path, workdir: Path, flows: int, concurrency: int, kill_after: int
) -> PhaseResult:
    save = workdir / "killed.mitm"
    progress(f"phase 2: kill -9 mitmdump after {kill_after} of {flows} flows")
    run = _run(binary, workdir, "phase 2", flows, concurrency, save=save, kill_after=kill_after)
    killed_at = run.killed_at if run.killed_at is not None else float("inf")
    before = {
        i for i, c in run.done.items() if c.at < killed_at and c.ok and flow_for(i).kind.flagged
    }
    saved, cut = read_saved(save)
    ids = set(saved_ids(saved))
    missing = sorted(before - ids)
    checks = [
        Check(
            "mitmdump was killed mid-run",
            run.killed_at is not None and len(run.done) < flows,
            f"{len(run.done)} flows completed of {flows}",
        ),
        Check(
            "after kill -9: every flagged flow completed before it is readable",
            not missing,
            f"{len(before)} flagged flows completed before the kill, {len(saved)} read back, "
            f"{len(missing)} missing {missing[:5]}"
            + (f"; the last record was cut: {cut}" if cut else "; no record was cut"),
        ),
    ]
    checks.append(_restart_check(binary, workdir, min(flows, 100), concurrency, save, saved, cut))
    return PhaseResult(run, checks)


def _restart_check(
    binary: Path,
    workdir: Path,
    flows: int,
    concurrency: int,
    save: Path,
    saved: list,
    cut: str | None,
) -> Check:
    """mitmdump started again on the killed run's file, as a user's next run: a record the
    kill cut is truncated (one line) before the first flow is appended, so every reader,
    mitmdump -nr's FlowReader here, reads every whole flow of both runs."""
    again = _run(binary, workdir, "phase 2, restarted", flows, concurrency, save=save)
    flagged = sum(1 for i, c in again.done.items() if c.ok and flow_for(i).kind.flagged)
    after, cut_after = read_saved(save)
    truncated = [line for line in again.log_problems if "toolnames_save:" in line]
    others = [line for line in again.log_problems if line not in truncated]
    return Check(
        "restarted on the same file: every whole flow of both runs is readable",
        cut_after is None
        and len(after) == len(saved) + flagged
        and len(truncated) == (1 if cut else 0)
        and not others,
        f"{len(saved)} whole flows before the restart"
        + (", the cut record truncated" if truncated else ", nothing to truncate")
        + f", {flagged} flagged flows after it, {len(after)} read back"
        + (f"; reading stopped: {cut_after}" if cut_after else "")
        + (f"; other lines {others[:3]}" if others else ""),
    )

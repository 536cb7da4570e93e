"""Two trainings on one machine: `edt appraise` alone, then two at once, each a whole process
on its own copy of a time-lapse demo mirror, with the toolkit's thread bound (`EDT_THREADS`
unset: half the cores) and without it (`EDT_THREADS` = every core, what scikit-learn takes by
itself).

    python -m toolkit.bench.threads [--days 30] [--seed 11] [--rounds 3] [--markdown]

A script, not a timed test. The peer of each pair is the same command alone, measured in the
same run (medians of `--rounds`). The bound holds when two at once each take at most about
twice their time alone: on a machine of N cores, two processes of N threads each spin
against each other (OpenMP waits by spinning), where two of N/2 share the cores.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

__all__ = ["main"]


def _appraise(db: Path, threads: str | None) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "EDT_THREADS"}
    if threads is not None:
        env["EDT_THREADS"] = threads
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit", "appraise", "--db", str(db)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _timed(dbs: list[Path], threads: str | None) -> list[float]:
    """Wall seconds of each of `dbs`' appraisals, all started at once."""
    started = time.perf_counter()
    running = [_appraise(db, threads) for db in dbs]
    ended = []
    for process in running:
        _, err = process.communicate()
        if process.returncode:
            raise SystemExit(f"edt appraise failed: {err.decode()[-500:]}")
        ended.append(time.perf_counter() - started)
    return ended


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=30, help="the demo's time-lapse (days)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch) / "m.db"
        print(f"building a {args.days}-day demo (seed {args.seed}) ...", file=sys.stderr)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "toolkit",
                "demo",
                "--db",
                str(base),
                "--days",
                str(args.days),
                "--seed",
                str(args.seed),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        copies = []
        for n in range(2):
            copy = Path(scratch) / f"copy{n}.db"
            shutil.copy(base, copy)
            copies.append(copy)
        rows = []
        for label, threads in (
            ("bounded (default: half the cores)", None),
            (f"unbounded ({cores} threads each)", str(cores)),
        ):
            alone = statistics.median(_timed(copies[:1], threads)[0] for _ in range(args.rounds))
            pair = statistics.median(max(_timed(copies, threads)) for _ in range(args.rounds))
            rows.append((label, alone, pair, pair / alone))
    head = ("threads", "alone (s)", "two at once, each (s)", "ratio")
    print(
        f"edt appraise on a {args.days}-day small demo, whole processes, medians of {args.rounds}; "
        f"{platform.machine()}, {cores} cores"
    )
    if args.markdown:
        print(f"| {' | '.join(head)} |\n|---|---:|---:|---:|")
        for label, alone, pair, ratio in rows:
            print(f"| {label} | {alone:.1f} | {pair:.1f} | {ratio:.2f}x |")
    else:
        for label, alone, pair, ratio in rows:
            print(f"{label:<36} alone {alone:6.1f} s   two at once {pair:6.1f} s   {ratio:5.2f}x")
    return 0 if rows[0][3] <= 2.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())

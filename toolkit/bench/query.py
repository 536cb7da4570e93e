"""Benchmark: the query layer against DuckDB and pandas over the same rows.

    python -m toolkit.bench [--db PATH] [--repeat N] [--markdown] [--random N --seed S]

A fixed suite of realistic `/api/domains` and `/api/pending-delete` queries (or, with
`--random N`, N `/api/domains` requests drawn at random from the parameter table, with
values drawn from the mirror's own rows) is answered three ways in one run:

1. the query layer: `Mirror.search_domains` / `Mirror.search_pending_delete` (its
   columnar index, rebuilt before timing if stale, or SQLite with `--engine sqlite`);
2. DuckDB: the mirror's rows, loaded once (before any timing) from SQLite through pandas
   and Arrow into an in-memory DuckDB database, queried with SQL written here from the
   documented semantics (docs/reference/fields.md and semantics.md), independently of `toolkit.query.params`;
3. pandas: the same rows as a DataFrame, vectorised boolean masks, `sort_values` with
   nulls last and `id` as the tie-breaker, then the page slice.

Every engine returns the total and the page rows (every output column). The three must
agree on the total and on the ordered page ids of every query (and the rows on a few
fields, `age` included); a disagreement is printed as a MISMATCH line and the exit status
is 1. So the benchmark is also a cross-check of the query layer against the documented semantics.

Each query runs once to warm up, then `--repeat` times per engine; its latency is the
median. Per engine the report gives p50 and p95 over the suite's queries (linear
interpolation), the slowest query, the ratios query layer / DuckDB and query layer /
pandas, and whether the targets hold: query-layer p50 <= 0.5x DuckDB p50, p95 <= DuckDB
p95, and every query-layer query under 50 ms. `--strict` makes a missed target exit 1.

All engines share one UTC "now" (the query layer gets it through `Mirror(clock=...)`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import platform
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .engines import PLAN, Engine, DuckDBEngine, Frames, PandasEngine, QueryLayerEngine, Result, load_frames
from .query_suite import BenchQuery, build_suite, random_suite

__all__ = [
    "BenchQuery",
    "QueryTiming",
    "BenchReport",
    "build_suite",
    "random_suite",
    "run_bench",
    "bench",
    "main",
    "TARGET_MAX_MS",
]

TARGET_MAX_MS = 50.0  # every query-layer query under this, on the machine at hand
TARGET_P50_RATIO = 0.5  # query-layer p50 at most this times DuckDB's
TARGET_P95_RATIO = 1.0


# -- the run ---------------------------------------------------------------------------

# Fields compared row by row besides the id (the derived ones are where engines differ).
_CHECK_FIELDS = {
    "domains": ("name", "tld", "source", "age", "score"),
    "pending": ("domain", "tld", "estimated_drop_date"),
}


@dataclass
class QueryTiming:
    name: str
    dataset: str
    params: dict[str, Any]
    total: int  # the query layer's total
    rows: int  # rows on the page
    ql_ms: float  # median latency per engine
    duckdb_ms: float
    pandas_ms: float
    agree: bool = True
    mismatch: str | None = None
    samples: dict[str, list[float]] = field(default_factory=dict, repr=False)


@dataclass
class BenchReport:
    db: str
    now: datetime
    repeat: int
    timings: list[QueryTiming]
    counts: dict[str, int]
    machine: dict[str, str]
    load_seconds: float
    duckdb_storage: str
    plans: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    suite: str = "the fixed suite"
    answered_by: list[str] = field(default_factory=list)  # the query layer's engines that answered


def _norm(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float):
        if value != value:  # NaN
            return None
        return int(value) if value.is_integer() else round(value, 6)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return _norm(value.item())
    return value


def compare(dataset: str, results: Mapping[str, Result]) -> str | None:
    """None when every engine agrees with the query layer; else what differs."""
    names = list(results)
    base_name = names[0]
    base_total, base_rows = results[base_name]
    base_ids = [int(r["id"]) for r in base_rows]
    problems = []
    for name in names[1:]:
        total, rows = results[name]
        ids = [int(r["id"]) for r in rows]
        if int(total) != int(base_total):
            problems.append(f"total {base_name}={base_total} {name}={total}")
        if ids != base_ids:
            first = next((i for i, (a, b) in enumerate(zip(base_ids, ids)) if a != b), min(len(ids), len(base_ids)))
            problems.append(
                f"page ids differ from position {first} ({base_name} {base_ids[first : first + 3]} "
                f"vs {name} {ids[first : first + 3]}; {len(base_ids)} vs {len(ids)} rows)"
            )
            continue
        for a, b in zip(base_rows, rows):
            diff = [f for f in _CHECK_FIELDS[dataset] if _norm(a.get(f)) != _norm(b.get(f))]
            if diff:
                problems.append(
                    f"row {a['id']}: " + ", ".join(f"{f} {base_name}={a.get(f)!r} {name}={b.get(f)!r}" for f in diff)
                )
                break
    return "; ".join(problems) or None


def _time(fn: Callable[[], Result], repeat: int) -> tuple[Result, list[float]]:
    result = fn()  # warm-up; its answer is the one checked
    samples = []
    gc.collect(1)  # the warm-up's garbage; a full collection scans every object of the process (70 ms under pytest)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        if enabled:
            gc.enable()
    return result, samples


def _machine() -> dict[str, str]:
    import duckdb
    import pandas as pd
    import pyarrow as pa

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu,
        "nproc": str(usable),
        "os": platform.platform(terse=True),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "duckdb": duckdb.__version__,
        "pandas": pd.__version__,
        "pyarrow": pa.__version__,
    }


def _counts(frames: Frames, now: datetime) -> dict[str, int]:
    listings = frames.listings
    regfree = listings["source"] == "regfree"
    ends = listings["_ends_ts"]
    live = listings["closed_at"].isna() & (ends.isna() | (ends > now.replace(tzinfo=None)))
    pending = frames.pending
    upcoming = pending["estimated_drop_date"].isna() | (pending["estimated_drop_date"] >= now.date().isoformat())
    return {
        "listings": int((~regfree).sum()),
        "listings live": int((~regfree & live).sum()),
        "regfree": int(regfree.sum()),
        "regfree live": int((regfree & live).sum()),
        "pending_delete": len(pending),
        "pending_delete upcoming": int(upcoming.sum()),
    }


def bench(
    db_path: str | os.PathLike[str],
    repeat: int = 5,
    *,
    now: datetime | None = None,
    only: str | None = None,
    duckdb_storage: str = "native",
    explain: int = 0,
    progress: Callable[[str], None] | None = None,
    random: int = 0,
    seed: int = 0,
    engine: str = "columnar",
    live_only: bool = False,
) -> BenchReport:
    """Run the suite on the mirror at `db_path` (or `random` requests drawn with `seed`);
    the full report. `engine` is the query layer's (`columnar` or `sqlite`). `live_only`:
    requests for live listings only (no `include_closed`), the peers loaded with the open
    listings alone (what such a request can match: the answers are the same), so an aged
    mirror's closed rows cost the peers no memory."""
    if not Path(db_path).is_file():
        raise FileNotFoundError(f"{db_path}: no mirror there; build one with `edt demo --scale full` first")
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0)
    say = progress or (lambda message: None)
    say(f"loading {db_path} into pandas and DuckDB ...")
    frames = load_frames(db_path, now, "closed_at IS NULL" if live_only else "1")
    max_id = int(frames.listings["id"].max()) if len(frames.listings) else 0
    if random:
        suite = random_suite(frames.listings, now.date(), random, seed)
    else:
        suite = build_suite(now.date(), max_id=max_id)
    suite = [q for q in suite if not only or only.lower() in q.name.lower()]
    if live_only:
        suite = [
            BenchQuery(
                re.sub(r"&?include_closed=1", "", q.name),
                q.dataset,
                {k: v for k, v in q.params.items() if k != "include_closed"},
            )
            for q in suite
            if q.dataset == "domains"
        ]
    started = time.perf_counter()
    query_layer = QueryLayerEngine(db_path, now, engine)
    if engine == "columnar":
        say("building the query layer's columnar index if it is stale ...")
        query_layer.mirror.search_domains({"per_page": 1}, plan=PLAN)
    engines: list[Engine] = [
        query_layer,
        DuckDBEngine(frames, now, storage=duckdb_storage),
        PandasEngine(frames, now),
    ]
    load_seconds = frames.load_seconds + time.perf_counter() - started
    timings = []
    try:
        for index, query in enumerate(suite, 1):
            say(f"[{index}/{len(suite)}] {query.name}")
            results: dict[str, Result] = {}
            samples: dict[str, list[float]] = {}
            for each in engines:
                results[each.name], samples[each.name] = _time(partial(each.run, query), repeat)
            mismatch = compare(query.dataset, results)
            total, rows = results[engines[0].name]
            timings.append(
                QueryTiming(
                    name=query.name,
                    dataset=query.dataset,
                    params=dict(query.params),
                    total=total,
                    rows=len(rows),
                    ql_ms=statistics.median(samples["query layer"]),
                    duckdb_ms=statistics.median(samples["duckdb"]),
                    pandas_ms=statistics.median(samples["pandas"]),
                    agree=mismatch is None,
                    mismatch=mismatch,
                    samples=samples,
                )
            )
        plans = {}
        if explain:
            for timing in sorted(timings, key=lambda t: -t.ql_ms)[:explain]:
                query = next(q for q in suite if q.name == timing.name)
                conn = query_layer.mirror.connection()
                plans[timing.name] = [
                    (sql, [row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()])
                    for sql in query_layer.trace(query)
                ]
        counts = _counts(frames, now)
        answered_by = sorted(query_layer.answered_by)
    finally:
        for each in engines:
            each.close()
    return BenchReport(
        db=os.fspath(db_path),
        now=now,
        repeat=repeat,
        timings=timings,
        counts=counts,
        machine=_machine(),
        load_seconds=load_seconds,
        duckdb_storage=duckdb_storage,
        plans=plans,
        suite=f"{random} random requests, seed {seed}" if random else "the fixed suite",
        answered_by=answered_by,
    )


def run_bench(db_path: str | os.PathLike[str], repeat: int = 5, **options: Any) -> list[QueryTiming]:
    """The suite's timings on the mirror at `db_path` (see `bench` for the options)."""
    return bench(db_path, repeat, **options).timings


# -- the report --------------------------------------------------------------------------


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Summary:
    rows: list[tuple[str, float, float, float, str]]  # engine, p50, p95, max, slowest query
    ratio_duckdb: tuple[float, float]  # p50, p95 query layer / DuckDB
    ratio_pandas: tuple[float, float]
    targets: list[tuple[str, bool, str]]  # description, met, detail


def summarize(timings: list[QueryTiming]) -> Summary:
    rows = []
    stats = {}
    for label, attr in (("query layer", "ql_ms"), ("duckdb", "duckdb_ms"), ("pandas", "pandas_ms")):
        values = [getattr(t, attr) for t in timings]
        slowest = max(timings, key=lambda t: getattr(t, attr))
        p50, p95 = percentile(values, 50), percentile(values, 95)
        stats[label] = (p50, p95, max(values))
        rows.append((label, p50, p95, max(values), slowest.name))
    ql, duck, pdx = stats["query layer"], stats["duckdb"], stats["pandas"]
    over = [t for t in timings if t.ql_ms >= TARGET_MAX_MS]
    targets = [
        (
            f"query-layer p50 <= {TARGET_P50_RATIO:g} x DuckDB p50",
            ql[0] <= TARGET_P50_RATIO * duck[0],
            f"{ql[0]:.2f} ms vs {TARGET_P50_RATIO:g} x {duck[0]:.2f} ms",
        ),
        (
            f"query-layer p95 <= {TARGET_P95_RATIO:g} x DuckDB p95",
            ql[1] <= TARGET_P95_RATIO * duck[1],
            f"{ql[1]:.2f} ms vs {TARGET_P95_RATIO:g} x {duck[1]:.2f} ms",
        ),
        (
            f"every query-layer query < {TARGET_MAX_MS:g} ms",
            not over,
            f"slowest {ql[2]:.2f} ms" + (f"; over: {', '.join(t.name for t in over)}" if over else ""),
        ),
    ]
    return Summary(rows, (ql[0] / duck[0], ql[1] / duck[1]), (ql[0] / pdx[0], ql[1] / pdx[1]), targets)


def _table(headers: list[str], rows: list[list[str]], *, markdown: bool, right: set[int]) -> str:
    if markdown:
        align = ["---:" if i in right else "---" for i in range(len(headers))]
        lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def format_report(report: BenchReport, *, markdown: bool = False) -> str:
    out = []
    h = (lambda text: f"### {text}") if markdown else (lambda text: f"== {text}")
    m = report.machine
    out.append(h("Machine"))
    out.append(
        f"{m['cpu']}, nproc {m['nproc']}, {m['os']}; Python {m['python']}, SQLite {m['sqlite']}, "
        f"DuckDB {m['duckdb']} ({report.duckdb_storage} tables), pandas {m['pandas']}, pyarrow {m['pyarrow']}"
    )
    counts = ", ".join(f"{k} {v:,}" for k, v in report.counts.items())
    out.append(f"\nSuite: {report.suite}; the query layer answered with {', '.join(report.answered_by) or '-'}.")
    out.append(
        f"\nMirror {report.db}: {counts}. Now {report.now:%Y-%m-%dT%H:%M:%SZ}; rows loaded into pandas "
        f"and DuckDB in {report.load_seconds:.1f} s (not timed). Each query: 1 warm-up, then the median "
        f"of {report.repeat} runs per engine."
    )
    out.append("")
    out.append(h("Per query (median ms)"))
    rows = []
    for i, t in enumerate(report.timings, 1):
        rows.append(
            [
                str(i),
                t.name,
                f"{t.total:,}",
                f"{t.ql_ms:.2f}",
                f"{t.duckdb_ms:.2f}",
                f"{t.pandas_ms:.2f}",
                f"{t.ql_ms / t.duckdb_ms:.2f}" if t.duckdb_ms else "-",
                "ok" if t.agree else "MISMATCH",
            ]
        )
    headers = ["#", "query", "total", "query layer", "duckdb", "pandas", "ql / duckdb", "check"]
    out.append(_table(headers, rows, markdown=markdown, right={0, 2, 3, 4, 5, 6}))
    if report.timings:
        s = summarize(report.timings)
        out.append("")
        out.append(h(f"Summary over {len(report.timings)} queries (ms)"))
        srows = [[e, f"{p50:.2f}", f"{p95:.2f}", f"{mx:.2f}", slow] for e, p50, p95, mx, slow in s.rows]
        out.append(_table(["engine", "p50", "p95", "max", "slowest query"], srows, markdown=markdown, right={1, 2, 3}))
        out.append("")
        ratios = [
            ["ql / duckdb", f"{s.ratio_duckdb[0]:.2f}", f"{s.ratio_duckdb[1]:.2f}"],
            ["ql / pandas", f"{s.ratio_pandas[0]:.2f}", f"{s.ratio_pandas[1]:.2f}"],
        ]
        out.append(_table(["ratio", "p50", "p95"], ratios, markdown=markdown, right={1, 2}))
        out.append("")
        out.append(h("Targets"))
        for text, met, detail in s.targets:
            out.append(f"{'- ' if markdown else ''}{'PASS' if met else 'FAIL'}  {text}: {detail}")
    bad = [t for t in report.timings if not t.agree]
    out.append("")
    out.append(h("Cross-check"))
    if bad:
        for t in bad:
            out.append(f"MISMATCH {t.name} {json.dumps(t.params)}: {t.mismatch}")
    else:
        out.append(f"all {len(report.timings)} queries: the three engines agree on the total and the ordered page ids")
    for name, statements in report.plans.items():
        out.append("")
        out.append(h(f"Query plans: {name}"))
        for sql, plan in statements:
            out.append(("    " if markdown else "  ") + sql)
            out.extend(("    " if markdown else "  ") + "  " + step for step in plan)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from ..config import load_settings

    parser = argparse.ArgumentParser(prog="python -m toolkit.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="the mirror (default: EDT_DB or data/mirror.db)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per engine and query, after a warm-up")
    parser.add_argument(
        "--markdown", action="store_true", help="print the tables as Markdown (as docs/benchmarks.md shows them)"
    )
    parser.add_argument("--only", help="run only the queries whose name contains this text")
    parser.add_argument(
        "--duckdb-storage",
        choices=("native", "arrow"),
        default="native",
        help="DuckDB over its own tables (default) or over registered Arrow tables",
    )
    parser.add_argument(
        "--explain",
        type=int,
        default=0,
        metavar="N",
        help="print SQLite's plans for the query layer's N slowest queries",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--now", help="the UTC moment queries run at (ISO 8601; default: now)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="N",
        help="N random /api/domains requests drawn from the parameter table instead of the suite",
    )
    parser.add_argument("--seed", type=int, default=0, help="the random requests' seed (same seed, same requests)")
    parser.add_argument(
        "--engine",
        choices=("columnar", "sqlite"),
        default="columnar",
        help="the query layer's engine (default: its columnar index)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.repeat < 1:
        print("--repeat must be at least 1", file=sys.stderr)
        return 2
    now = None
    if args.now:
        try:
            now = datetime.fromisoformat(args.now.replace("Z", "+00:00"))
        except ValueError:
            print(f"--now: not an ISO 8601 moment: {args.now!r}", file=sys.stderr)
            return 2
        now = now if now.tzinfo else now.replace(tzinfo=timezone.utc)
    db = args.db or load_settings().db
    if not Path(db).is_file():
        print(f"{db}: no mirror there; build one with `edt demo --scale full` first", file=sys.stderr)
        return 2
    progress = None if args.quiet else (lambda message: print(message, file=sys.stderr, flush=True))
    if args.random < 0:
        print("--random must be a positive number of requests", file=sys.stderr)
        return 2
    report = bench(
        db,
        args.repeat,
        now=now,
        only=args.only,
        duckdb_storage=args.duckdb_storage,
        explain=args.explain,
        progress=progress,
        random=args.random,
        seed=args.seed,
        engine=args.engine,
    )
    print(format_report(report, markdown=args.markdown))
    if any(not t.agree for t in report.timings):
        return 1
    if args.strict and report.timings and not all(met for _, met, _ in summarize(report.timings).targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

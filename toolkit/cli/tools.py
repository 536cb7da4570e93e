"""The measuring tools' command: `edt bench` (they live in `toolkit/bench/`, apart from the product)."""

from __future__ import annotations

import click

from .shell import choice_option, db_option, cli


@cli.command()
@db_option
@click.option(
    "--repeat", type=int, default=5, show_default=True, help="Timed runs per engine and query, after a warm-up."
)
@click.option("--markdown", is_flag=True, help="Print the tables as Markdown (as docs/benchmarks.md shows them).")
@click.option("--only", help="Run only the queries whose name contains this text.")
@click.option("--explain", type=int, default=0, metavar="N", help="Show the query plans of the N slowest queries.")
@click.option("--strict", is_flag=True, help="Exit 1 when a speed target is missed.")
@click.option(
    "--random",
    "random_",
    type=click.IntRange(min=1),
    metavar="N",
    help="N random /api/domains requests drawn from the parameter table instead of the fixed suite.",
)
@click.option("--seed", type=int, default=0, show_default=True, help="The random requests' seed.")
@choice_option("--engine", ["columnar", "sqlite"], "columnar", "The query layer's engine.")
def bench(
    db: str,
    repeat: int,
    markdown: bool,
    only: str | None,
    explain: int,
    strict: bool,
    random_: int | None,
    seed: int,
    engine: str,
) -> None:
    """Benchmark the query layer against DuckDB and pandas on the same rows (a full demo mirror)."""
    from ..bench import main as bench_main

    argv = ["--db", db, "--repeat", str(repeat), "--explain", str(explain), "--engine", engine]
    argv += ["--markdown"] * markdown + ["--strict"] * strict + (["--only", only] if only else [])
    argv += ["--random", str(random_), "--seed", str(seed)] if random_ else []
    raise SystemExit(bench_main(argv))

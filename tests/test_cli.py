"""`edt`: every command documented and with --help, exit codes, outputs equal to the Python API."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolkit.cli import cli

DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture()
def mirror(synthetic_db):
    """The CLI answers on the real clock: compare it with a Mirror on the real clock too."""
    from toolkit import Mirror

    with Mirror(synthetic_db) as m:
        yield m


def run(*args: str, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)


def test_every_command_has_help_a_reference_section_and_a_guide():
    reference = (DOCS / "reference" / "commands.md").read_text()
    assert set(re.findall(r"^## `edt (\w+)`", reference, flags=re.M)) == set(cli.commands)
    guides = "\n".join(
        p.read_text() for p in [DOCS / "getting-started.md", DOCS / "benchmarks.md", *(DOCS / "guides").glob("*.md")]
    )
    unguided = {name for name in cli.commands if f"edt {name}" not in guides}
    assert not unguided, f"no guide shows {sorted(unguided)}"
    commands = set(cli.commands)
    for name in commands:
        result = run(name, "--help")
        assert result.exit_code == 0 and "Usage: " in result.output and "--help" in result.output
        subcommands = getattr(cli.commands[name], "commands", None)
        for sub in subcommands or [None]:  # a group (edt watch): each of its commands takes --db
            shown = run(name, sub, "--help") if sub else result
            assert shown.exit_code == 0 and "--db" in shown.output, (name, sub)


def test_python_dash_m_is_the_same_program():
    result = subprocess.run([sys.executable, "-m", "toolkit", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "query" in result.stdout and "demo" in result.stdout


def test_query_json_is_the_python_api_envelope(synthetic_db, mirror):
    result = run("query", "--db", str(synthetic_db), "tld=.fr", "tf_min=5", "--format", "json")
    assert result.exit_code == 0
    printed = json.loads(result.output)
    expected = mirror.search_domains({"tld": ".fr", "tf_min": "5"})
    assert printed["meta"]["total"] == expected["meta"]["total"] > 0
    assert [r["id"] for r in printed["data"]] == [r["id"] for r in expected["data"]]


def test_query_table_and_csv(synthetic_db, mirror):
    table = run("query", "--db", str(synthetic_db), "source=sedo", "per_page=5")
    first = mirror.search_domains({"source": "sedo", "per_page": "5"})["data"][0]
    assert table.exit_code == 0 and first["name"] in table.output and "of " in table.output
    out = run("query", "--db", str(synthetic_db), "source=sedo", "per_page=5", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert len(rows) == 5 and rows[0]["id"] == str(first["id"])


def test_pending_query(synthetic_db, mirror):
    result = run("query", "--db", str(synthetic_db), "--pending", "status=pendingDelete", "--format", "json")
    assert (
        json.loads(result.stdout)["meta"]["total"]
        == mirror.search_pending_delete({"status": "pendingDelete"})["meta"]["total"]
    )


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["tf_min=abc"], "tf_min"),
        (["categories=Nope"], "categories"),
        (["notapair"], "KEY=VALUE"),
        (["source=regfree", "--plan", "pro"], "Authority plan required"),
        (["--plan", "gold"], "--plan"),
    ],
)
def test_bad_input_is_exit_2_with_one_line_naming_it(synthetic_db, args, fragment):
    result = CliRunner().invoke(cli, ["query", "--db", str(synthetic_db), *args])
    assert result.exit_code == 2
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0] and lines[0].startswith("edt: ")


def test_a_missing_mirror_is_exit_2_and_says_what_to_do(tmp_path):
    result = CliRunner().invoke(cli, ["query", "--db", str(tmp_path / "none.db")])
    assert result.exit_code == 2 and "edt demo" in result.stderr
    assert not (tmp_path / "none.db").exists()


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_writes_every_matching_row(synthetic_db, mirror, tmp_path, fmt):
    out = tmp_path / f"x.{fmt}"
    result = run("export", "--db", str(synthetic_db), "--format", fmt, "--out", str(out), "tf_min=10")
    expected = [r["id"] for r in mirror.export_rows({"tf_min": "10"})]
    assert result.exit_code == 0 and f"Wrote {len(expected):,}" in result.output
    if fmt == "csv":
        ids = [int(r["id"]) for r in csv.DictReader(out.open())]
    elif fmt == "jsonl":
        ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    else:
        import pyarrow.parquet as pq

        table = pq.read_table(out)
        ids = table.column("id").to_pylist()
        assert table.schema.field("is_spammy").type == "bool"
        # moments are timestamps (UTC) and days dates, read as such by pyarrow and DuckDB
        assert str(table.schema.field("closed_at").type) == "timestamp[ms, tz=UTC]"
        assert str(table.schema.field("wayback_first_date").type) == "date32[day]"
        ends = {r["id"]: r["auction_end_date"] for r in mirror.export_rows({"tf_min": "10"})}
        got = dict(zip(ids, table.column("auction_end_date").to_pylist()))
        assert {i: d and f"{d:%Y-%m-%dT%H:%M:%SZ}" for i, d in got.items()} == ends
        import duckdb

        kinds = duckdb.sql(f"SELECT DISTINCT typeof(auction_end_date), typeof(closed_at) FROM read_parquet('{out}')")
        assert kinds.fetchall() == [("TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE")]
        assert table.schema.field("live_mid").type == "double"  # both ranges are fields of the export
        assert any(v is not None for v in table.column("live_mid").to_pylist())
    assert ids == expected and len(ids) > 10


def test_export_refuses_a_missing_folder_and_a_low_plan(synthetic_db, tmp_path):
    result = CliRunner().invoke(
        cli, ["export", "--db", str(synthetic_db), "--format", "csv", "--out", str(tmp_path / "no" / "x.csv")]
    )
    assert result.exit_code == 2 and "does not exist" in result.stderr
    result = CliRunner().invoke(
        cli, ["export", "--db", str(synthetic_db), "--format", "csv", "--out", str(tmp_path / "x.csv"), "--plan", "pro"]
    )
    assert result.exit_code == 2 and "Business" in result.stderr and not (tmp_path / "x.csv").exists()


def test_status_counts(synthetic_db, mirror):
    result = run("status", "--db", str(synthetic_db), "--json")
    info = json.loads(result.output)
    assert (
        info["datasets"]["regfree"]["rows"]
        == mirror.search_domains({"source": "regfree", "include_closed": "1"})["meta"]["total"]
    )
    assert info["origins"] == {
        "sync": info["datasets"]["listings"]["rows"]
        + info["datasets"]["regfree"]["rows"]
        + info["datasets"]["pending_delete"]["rows"]
    }
    text = run("status", "--db", str(synthetic_db))
    assert "never synced" in text.output and re.search(r"^  pending delete +[\d,]+ rows$", text.output, flags=re.M)
    for line in text.output.splitlines():  # every state stands apart from its job's name and schedule
        assert not re.search(r"\S(failed at|never synced|never fetched|fresh:|STALE:)", line), line


def test_demo_loads_refuses_to_mix_and_clears(tmp_path):
    from toolkit import Mirror
    from toolkit.store.writer import save_listings

    db = str(tmp_path / "m.db")
    first = run("demo", "--db", db, "--seed", "3")
    assert first.exit_code == 0 and "regfree" in first.output
    with Mirror(db) as m:
        demo_total = m.search_domains({"include_closed": "1"})["meta"]["total"]
        assert demo_total > 4000
        save_listings(
            m.connection(), [{"id": 1, "name": "real-one.com", "source": "sedo", "type": "auction"}], origin="sync"
        )
    refused = CliRunner().invoke(cli, ["demo", "--db", db])
    assert refused.exit_code == 2 and "real data" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    cleared = run("demo", "--db", db, "--clear")
    assert cleared.exit_code == 0
    with Mirror(db) as m:
        rows = m.export_rows({"include_closed": "1"})
        assert [r["name"] for r in rows] == ["real-one.com"]
        assert m.status()["origins"] == {"sync": 1}


def test_a_file_that_is_not_a_mirror_is_refused_and_left_alone(tmp_path):
    notes = tmp_path / "notes.db"
    notes.write_text("my notes, not a database\n")
    for args in (["query"], ["status"], ["demo"], ["export", "--format", "csv", "--out", str(tmp_path / "x.csv")]):
        result = CliRunner().invoke(cli, [*args, "--db", str(notes)])
        assert result.exit_code == 2, args
        assert str(notes) in result.stderr and "cannot open as a mirror" in result.stderr
    assert notes.read_text() == "my notes, not a database\n"


def test_a_pending_delete_tld_is_its_suffix_family_on_the_command_line(synthetic_db):
    result = CliRunner().invoke(
        cli,
        [
            "query",
            "--db",
            str(synthetic_db),
            "--pending",
            "--format",
            "json",
            "tld=uk",
            "include_past=1",
            "per_page=200",
        ],
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.output)
    assert body["meta"]["total"] > 0 and {r["tld"] for r in body["data"]} == {"co.uk"}


# -- commands that say what they did ----------------------------------------------------------


def test_a_value_filter_or_sort_shows_the_range_and_the_deal_best_first(synthetic_db, mirror):
    result = run("query", "--db", str(synthetic_db), "deal_min=1", "sort=-deal", "per_page=8", env={"COLUMNS": "200"})
    header, *lines = [line for line in result.output.splitlines() if "│" in line or "┃" in line]
    cells = [[c.strip() for c in re.split(r"[│┃]", line)[1:-1]] for line in [header, *lines]]
    assert cells[0][:6] == ["id", "name", "source", "price", "value EUR", "deal"]
    deals = [float(row[5].lstrip("x").replace(",", "")) for row in cells[1:]]
    expected = mirror.search_domains({"deal_min": "1", "sort": "-deal", "per_page": "8"})["data"]
    assert [int(row[0]) for row in cells[1:]] == [r["id"] for r in expected] and len(deals) == 8
    assert deals == sorted(deals, reverse=True) and min(deals) >= 1
    assert all(re.fullmatch(r"[\d,]+-[\d,]+", row[4]) for row in cells[1:])
    plain = run("query", "--db", str(synthetic_db), "per_page=3", env={"COLUMNS": "200"})
    assert "deal" not in plain.output  # only asked for by a value filter or sort


def test_past_drops_are_counted_on_stderr_even_when_the_page_has_rows(synthetic_db, mirror):
    shown = mirror.search_pending_delete({})["meta"]["total"]
    every = mirror.search_pending_delete({"include_past": "1"})["meta"]["total"]
    assert 0 < shown < every  # the synthetic inventory holds both
    result = CliRunner().invoke(cli, ["query", "--db", str(synthetic_db), "--pending", "--format", "json"])
    assert json.loads(result.stdout)["meta"]["total"] == shown
    assert f"edt: {every - shown:,} more rows match with include_past=1" in result.stderr


def test_bounds_that_exclude_each_other_are_refused_in_python_and_on_the_command_line(synthetic_db, mirror):
    from toolkit import ApiError

    with pytest.raises(ApiError) as refused:
        mirror.search_domains({"tf_min": "30", "tf_max": "10"})
    assert refused.value.status == 422 and refused.value.field == "tf_min"
    assert mirror.search_domains({"tf_min": "30", "tf_max": "10"}, strict=False)["meta"]["total"] == 0  # HTTP: a page
    said = CliRunner().invoke(cli, ["query", "--db", str(synthetic_db), "tf_min=30", "tf_max=10"])
    assert said.exit_code == 2 and said.stderr.strip() == (
        "edt: tf_min=30 is above tf_max=10, so no row can match; lower tf_min or raise the other."
    )
    typo = CliRunner().invoke(cli, ["query", "--db", str(synthetic_db), "sort=-trustflow"])
    assert typo.exit_code == 2 and typo.stderr.startswith(
        "edt: sort=-trustflow: did you mean -trust_flow? sort must be"
    )


def test_schedule_next_says_the_api_jobs_wait_for_a_key(tmp_path):
    env = {"EDT_API_KEY": "", "EDT_CONFIG": str(tmp_path / "none.toml")}
    keyless = run("schedule", "--next", "--db", str(tmp_path / "m.db"), env=env).output
    api = [line for line in keyless.splitlines() if line.split()[1:2] == ["API"] and "next" in line]
    assert len(api) == 4 and all(line.endswith("(not without an API key)") for line in api)
    assert "No API key: the API jobs do not run" in keyless and "daily at 07:00" in keyless
    keyed = run("schedule", "--next", "--db", str(tmp_path / "m.db"), env={**env, "EDT_API_KEY": "k"}).output
    assert "not without an API key" not in keyed and "No API key" not in keyed


def test_every_listing_record_says_its_deal_as_deal_min_and_sort_read_it(synthetic_db, mirror):
    result = CliRunner().invoke(
        cli, ["query", "--db", str(synthetic_db), "deal_min=1", "sort=-deal", "--format", "json"]
    )
    data = json.loads(result.stdout)["data"]
    deals = [r["deal"] for r in data]
    assert data and all(d is not None and d >= 1 for d in deals) and deals == sorted(deals, reverse=True)
    for r in data:
        middle = r["live_mid"] if r["live_mid"] is not None else r["value_mid"]
        assert r["deal"] == round(middle / r["effective_price_eur"], 3)
    frame = mirror.domains_df({"deal_min": "1"}, columns=["id", "deal"])
    assert dict(zip(frame["id"], frame["deal"].round(3))).items() >= {r["id"]: r["deal"] for r in data}.items()

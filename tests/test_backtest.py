"""`toolkit.analysis.backtest`: predictions from earlier sightings against official release days."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from conftest import REAL
from toolkit import Mirror
from toolkit.analysis.backtest import Sighting, backtest, main, mirror_sightings, official_dates, read_sightings
from toolkit.ingest import ingest_file
from toolkit.ingest.lifecycle import predict_drop_date
from toolkit.store.writer import save_pending

PL_LIST = REAL / "registry_drop_lists" / "dnspl_deleted_domains_2025-08-19.txt"
SEEN = "2026-01-10T12:00:00Z"


@pytest.fixture()
def mirror(tmp_path):
    m = Mirror(tmp_path / "m.db", create=True)
    yield m
    m.close()


def test_official_days_come_from_lists_not_from_predictions(mirror, tmp_path):
    (tmp_path / "bardate_domains.txt").write_text("fjallstuga.se\t2026-01-20\nsnokaos.nu\t2026-01-23\n")
    ingest_file(mirror, "bardate", tmp_path / "bardate_domains.txt", observed_at=SEEN)
    (tmp_path / "deleted_2026-01-12.txt").write_text("stary.pl\n")
    ingest_file(mirror, "droplist", tmp_path / "deleted_2026-01-12.txt", observed_at=SEEN)
    (tmp_path / "undated.txt").write_text("nowy.pl\n")  # no date anywhere: its day is a prediction
    ingest_file(mirror, "droplist", tmp_path / "undated.txt", observed_at=SEEN)
    save_pending(
        mirror.connection(),
        [
            {
                "id": 1,
                "domain": "kanel.se",
                "source": "oi-diff",
                "whois_status": "quarantine",
                "estimated_drop_date": "2026-01-19",
                "first_disappeared_at": "2026-01-12T00:00:00Z",
            }
        ],
        origin="sync",
        observed_at=SEEN,
    )
    assert official_dates(mirror.connection()) == {
        "fjallstuga.se": date(2026, 1, 20),
        "snokaos.nu": date(2026, 1, 23),
        "stary.pl": date(2026, 1, 12),
    }
    assert mirror_sightings(mirror.connection()) == [Sighting("kanel.se", "quarantine", date(2026, 1, 12))]


def test_scores_exact_near_and_undated():
    official = {
        "a.se": date(2026, 1, 20),
        "b.se": date(2026, 1, 20),
        "c.se": date(2026, 1, 20),
        "d.com": date(2026, 2, 14),
        "e.com": date(2026, 2, 14),
        "f.se": date(2026, 1, 20),
    }
    sightings = [
        Sighting("a.se", "quarantine", date(2026, 1, 13)),  # + 7 days: exact
        Sighting("a.se", "quarantine", date(2026, 1, 15)),  # a later sighting of the same status is ignored
        Sighting("b.se", "quarantine", date(2026, 1, 14)),  # one day late: predicts the 21st
        Sighting("c.se", "quarantine", date(2026, 1, 9)),  # + 7 = the 16th: four days early
        Sighting("d.com", "clientHold", date(2026, 1, 1)),  # no fixed length...
        Sighting("d.com", "redemptionPeriod", date(2026, 1, 10)),  # ...but redemption gives one: exact
        Sighting("e.com", "clientHold", date(2026, 1, 1)),  # only a hold: no date
        Sighting("zzz.se", "quarantine", date(2026, 1, 1)),  # no official day: not counted
    ]
    scores = backtest(official, sightings)
    se, com = scores[".se"], scores[".com"]
    assert (se.official, len(se.outcomes), se.predicted) == (4, 3, 3)  # f.se has no evidence
    assert sorted(o.error_days for o in se.outcomes) == [-4, 0, 1]
    assert (se.within(0), se.within(1), se.within(3)) == (1, 2, 2)
    assert (com.official, len(com.outcomes), com.predicted, com.within(0)) == (2, 2, 1, 1)
    (undated,) = [o for o in com.outcomes if o.predicted is None]
    assert undated.domain == "e.com" and "no fixed length" in undated.reason
    assert com.no_date_reasons() == {undated.reason: 1}


def test_the_real_pl_list_against_a_sightings_log(tmp_path, capsys):
    names = [n for n in PL_LIST.read_text().split() if n][:4]
    deleted = date(2025, 8, 19)
    seen = tmp_path / "seen.csv"
    seen.write_text(
        "domain,status,observed_at\n"
        f"{names[0]},pendingDelete,2025-08-14T09:00:00Z\n"  # NASK: DELETE_BLOCKED 5 days: exact
        f"{names[1]},pendingDelete,2025-08-13\n"  # a day early
        f"{names[2]},serverHold,2025-07-20\n"  # BLOCKED 30 days: exact
        f"{names[3]},clientHold,2025-07-01\n"
    )
    assert predict_drop_date("pl", "pendingDelete", date(2025, 8, 14))[0] == deleted
    assert predict_drop_date("pl", "serverHold", date(2025, 7, 20))[0] == deleted
    list_copy = tmp_path / PL_LIST.name
    list_copy.write_bytes(PL_LIST.read_bytes())
    assert main(["--official", f"droplist={list_copy}", "--evidence", str(seen)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:4] == ["TLD", "official", "evidence", "dated"]
    assert out[1].split() == [".pl", "2,310", "4", "3", "66.7%", "100.0%", "100.0%", "0.3", "d"]
    assert any("1 without a date" in line and "clientHold" in line for line in out)
    assert deleted - timedelta(days=5) == date(2025, 8, 14)


def test_bad_input_exits_2_naming_file_and_line(tmp_path, capsys):
    (tmp_path / "list.txt").write_text("stary.pl\n")
    bad = tmp_path / "seen.csv"
    bad.write_text("domain,status,observed_at\nstary.pl,pendingDelete,2025-08-14\nstary.pl,expired,2025-08-14\n")
    assert main(["--official", f"droplist={tmp_path / 'list.txt'}", "--evidence", str(bad)]) == 2
    assert f"{bad}: line 3: status 'expired' is not one of" in capsys.readouterr().err
    bad.write_text("name,day\nstary.pl,2025-08-14\n")
    with pytest.raises(ValueError, match="line 1: the header lacks domain, observed_at, status"):
        read_sightings(bad)
    bad.write_text("domain,status,observed_at\nstary.pl,pendingDelete,yesterday\n")
    with pytest.raises(ValueError, match=r"line 2: observed_at 'yesterday' is not a date"):
        read_sightings(bad)
    with pytest.raises(SystemExit) as exit_info:
        main(["--official", "godaddy=x.zip"])
    assert exit_info.value.code == 2


# -- windows from daily zone snapshots -------------------------------------------------------------

NU_DROPS = REAL / "nu_drops"
JSON_KEYS = [
    "tld",
    "official",
    "pairs",
    "one_day_pairs",
    "exact_share",
    "within_1_share",
    "window_share",
    "mean_abs_error",
    "outliers",
]


def _zone(folder: Path, days: dict[str, list[str]]) -> None:
    folder.mkdir()
    for day, names in days.items():
        (folder / f"nu_domains_{day}.txt").write_text("".join(f"{n}\n" for n in sorted(names)))


def _small_case(tmp_path: Path) -> tuple[Path, Path]:
    zone, lists = tmp_path / "zone", tmp_path / "lists"
    _zone(
        zone,
        {
            "2025-12-26": ["a.nu", "b.nu", "c.nu", "d.nu", "e.nu"],
            "2025-12-27": ["c.nu", "d.nu", "e.nu"],  # a, b leave (one-day window)
            "2025-12-30": ["e.nu"],  # c, d leave in a gap: a 4-day window
        },
    )
    lists.mkdir()
    (lists / "2026-03-05.csv").write_text(
        "domain,tld,release_date,available\n"
        "a.nu,nu,2026-03-03,True\n"  # L + 67: one day before the estimate, inside the window
        "b.nu,nu,2026-03-04,True\n"  # L + 1 + 67: exact
        "never.nu,nu,2026-03-05,True\n"  # in no snapshot
        "e.nu,nu,2026-03-05,True\n"  # still in the zone
        "x.se,se,2026-03-05,True\n"
    )
    (lists / "2026-03-20.csv").write_text(
        "domain,tld,release_date\nc.nu,nu,2026-03-06\nd.nu,nu,2026-03-20\n"
    )  # d: far after its window
    return zone, lists


def test_zone_windows_are_scored_against_official_days(tmp_path, capsys):
    from toolkit.analysis.backtest import run_zone_backtest, window_report_lines

    zone, lists = _small_case(tmp_path)
    scores = run_zone_backtest(str(zone), [f"bardate={lists}/*.csv"], ".nu")
    assert list(scores) == [".nu"]
    nu = scores[".nu"].to_dict()
    assert list(nu) == JSON_KEYS
    assert (nu["official"], nu["pairs"], nu["one_day_pairs"]) == (6, 4, 2)
    assert (nu["exact_share"], nu["within_1_share"], nu["window_share"]) == (0.5, 1.0, 0.75)  # d is outside
    assert nu["mean_abs_error"] == round((1 + 0 + 1 + 15) / 4, 3)  # c: estimate 03-05 (L+1+67) vs 03-06
    (outlier,) = nu["outliers"]
    assert outlier["count"] == 1 and outlier["reason"].startswith("official day after the window")
    assert outlier["days_outside"] == [13] and outlier["examples"][0]["domain"] == "d.nu"
    assert scores[".nu"].unpaired == {
        "still in the zone in the last snapshot (deactivated later, or left and came back)": 1,
        "in no snapshot: never in the zone during the replay (a name without nameservers is not in the zone file)": 1,
    }
    lines = window_report_lines(scores)
    assert lines[1].split() == [".nu", "6", "4", "2", "50.0%", "100.0%", "75.0%", "4.25", "d"]
    assert any("1 outlier, official day after the window" in line and "d.nu" in line for line in lines)
    # without --tld every official TLD is a row: .se has no snapshots, so no pairs
    every = run_zone_backtest(str(zone), [f"bardate={lists}/*.csv"])
    assert every[".se"].to_dict()["pairs"] == 0 and every[".se"].unpaired == {
        "no snapshot of its TLD (the snapshots are .nu)": 1
    }
    # the module's command line, as JSON
    assert main(["--zones", str(zone), "--official", f"bardate={lists}/*.csv", "--tld", ".nu", "--json"]) == 0
    import json

    printed = json.loads(capsys.readouterr().out)
    assert [list(item) for item in printed] == [JSON_KEYS] and printed[0]["pairs"] == 4


def test_zone_backtest_bad_input_exits_2_naming_file_and_line(tmp_path, capsys):
    from click.testing import CliRunner

    from toolkit.cli import cli

    zone, lists = _small_case(tmp_path)
    (lists / "2026-03-21.csv").write_text("domain,tld,release_date\nq.nu,nu,2026-03-21\nr.nu,nu,2026-02-30\n")
    assert main(["--zones", str(zone), "--official", f"bardate={lists}/*.csv"]) == 2
    assert f"{lists / '2026-03-21.csv'}: line 3: '2026-02-30' is not a date" in capsys.readouterr().err
    (lists / "2026-03-21.csv").unlink()
    (zone / "nu_domains_2025-12-31.txt").write_bytes(b"e.nu\nf.n")  # cut in the middle of a line
    result = CliRunner().invoke(cli, ["backtest", "--zones", str(zone), "--official", f"bardate={lists}/*.csv"])
    assert result.exit_code == 2
    assert "nu_domains_2025-12-31.txt: line 2: the last line is incomplete" in result.output
    (zone / "nu_domains_2025-12-31.txt").write_bytes((lists / "2026-03-05.csv").read_bytes())  # the wrong feed
    result = CliRunner().invoke(cli, ["backtest", "--zones", str(zone), "--official", f"bardate={lists}/*.csv"])
    assert (
        result.exit_code == 2
        and "nu_domains_2025-12-31.txt: line 1: 'domain,tld,release_date,available'" in result.output
    )
    result = CliRunner().invoke(cli, ["backtest", "--zones", str(zone), "--official", "godaddy=x.zip"])
    assert result.exit_code == 2 and "expected bardate=PATH or droplist=PATH" in result.output


def test_the_real_nu_backtest_meets_its_targets():
    from click.testing import CliRunner

    from toolkit.cli import cli

    result = CliRunner().invoke(
        cli,
        [
            "backtest",
            "--zones",
            str(NU_DROPS / "zone" / "*.txt.gz"),
            "--official",
            f"bardate={NU_DROPS / 'release_lists'}/*.csv",
            "--tld",
            ".nu",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    import json

    (nu,) = json.loads(result.output)
    assert (nu["tld"], nu["official"], nu["pairs"], nu["one_day_pairs"]) == (".nu", 1000, 958, 700)
    assert nu["exact_share"] >= 0.90 and nu["window_share"] >= 0.99
    assert (nu["exact_share"], nu["within_1_share"], nu["window_share"], nu["mean_abs_error"]) == (
        0.9171,
        0.9971,
        0.9979,
        0.24,
    )  # the figures docs/benchmarks.md reports
    assert [(o["count"], o["days_outside"]) for o in nu["outliers"]] == [(2, [7, 8])]


def test_the_backtest_mirror_is_kept_only_in_a_new_file_and_only_on_success(tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    zone, lists = _small_case(tmp_path)
    kept = tmp_path / "kept.db"
    args = ["backtest", "--zones", str(zone), "--official", f"bardate={lists}/*.csv", "--db", str(kept)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    with Mirror(kept) as m:
        assert (
            m.connection().execute("SELECT COUNT(*) FROM pending_delete WHERE origin = 'ingest:zonediff'").fetchone()[0]
            == 4
        )
    again = CliRunner().invoke(cli, args)
    assert again.exit_code == 2 and "the file exists" in again.output
    (lists / "2026-03-21.csv").write_text("domain,tld,release_date\nq.nu,nu,2026-03-21\nr.nu,nu,2026-02-30\n")
    broken = tmp_path / "broken.db"
    failed = CliRunner().invoke(cli, [*args[:-1], str(broken)])
    assert failed.exit_code == 2 and not broken.exists()  # nothing committed

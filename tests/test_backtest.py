"""`toolkit.backtest`: predictions from earlier sightings against official release days."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest

from toolkit import Mirror
from toolkit.backtest import Sighting, backtest, main, mirror_sightings, official_dates, read_sightings
from toolkit.ingest import ingest_file
from toolkit.lifecycle import predict_drop_date
from toolkit.store.writer import save_pending

PL_LIST = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "real" / "registry_drop_lists" / "dnspl_deleted_domains_2025-08-19.txt"
SEEN = "2026-01-10T12:00:00Z"


@pytest.fixture()
def mirror(tmp_path):
    m = Mirror(tmp_path / "m.db")
    yield m
    m.close()


def test_official_days_come_from_lists_not_from_predictions(mirror, tmp_path):
    (tmp_path / "bardate_domains.txt").write_text("fjallstuga.se\t2026-01-20\nsnokaos.nu\t2026-01-23\n")
    ingest_file(mirror, "bardate", tmp_path / "bardate_domains.txt", observed_at=SEEN)
    (tmp_path / "deleted_2026-01-12.txt").write_text("stary.pl\n")
    ingest_file(mirror, "droplist", tmp_path / "deleted_2026-01-12.txt", observed_at=SEEN)
    (tmp_path / "undated.txt").write_text("nowy.pl\n")  # no date anywhere: its day is a prediction
    ingest_file(mirror, "droplist", tmp_path / "undated.txt", observed_at=SEEN)
    save_pending(mirror.connection(), [{"id": 1, "domain": "kanel.se", "source": "oi-diff", "whois_status": "quarantine",
                                        "estimated_drop_date": "2026-01-19", "first_disappeared_at": "2026-01-12T00:00:00Z"}],
                 origin="sync", observed_at=SEEN)  # fmt: skip
    assert official_dates(mirror.connection()) == {
        "fjallstuga.se": date(2026, 1, 20), "snokaos.nu": date(2026, 1, 23), "stary.pl": date(2026, 1, 12)}
    assert mirror_sightings(mirror.connection()) == [Sighting("kanel.se", "quarantine", date(2026, 1, 12))]


def test_scores_exact_near_and_undated():
    official = {"a.se": date(2026, 1, 20), "b.se": date(2026, 1, 20), "c.se": date(2026, 1, 20),
                "d.com": date(2026, 2, 14), "e.com": date(2026, 2, 14), "f.se": date(2026, 1, 20)}  # fmt: skip
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


@pytest.mark.skipif(not PL_LIST.is_file(), reason="real fixtures (../shared/fixtures/real) not available")
def test_the_real_pl_list_against_a_sightings_log(tmp_path, capsys):
    names = [n for n in PL_LIST.read_text().split() if n][:4]
    deleted = date(2025, 8, 19)
    seen = tmp_path / "seen.csv"
    seen.write_text("domain,status,observed_at\n"
                    f"{names[0]},pendingDelete,2025-08-14T09:00:00Z\n"   # NASK: DELETE_BLOCKED 5 days: exact
                    f"{names[1]},pendingDelete,2025-08-13\n"             # a day early
                    f"{names[2]},serverHold,2025-07-20\n"                # BLOCKED 30 days: exact
                    f"{names[3]},clientHold,2025-07-01\n")  # fmt: skip
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

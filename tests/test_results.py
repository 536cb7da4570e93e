"""Auction results (toolkit/store/results.py) on hand-made histories: each sighting written
through the one writer at its own moment, as syncs a few hours apart write them."""

from __future__ import annotations

import sqlite3

from conftest import pending_row
from toolkit.signals.fx import to_eur
from toolkit.store.results import derive_results
from toolkit.store.schema import connect, ensure_schema
from toolkit.store.writer import save_listings, save_pending

END = "2026-08-20T18:00:00Z"


def auction(
    listing_id: int,
    name: str,
    *,
    bid: float | None,
    bids: int,
    currency: str = "USD",
    source: str = "dynadot",
    kind: str = "auction",
    price: float | None = 12.0,
) -> dict:
    return {
        "id": listing_id,
        "name": name,
        "source": source,
        "type": kind,
        "currency": currency,
        "price": price,
        "max_bid": bid,
        "bids_count": bids,
        "auction_end_date": END if kind == "auction" else None,
    }


def seen(conn: sqlite3.Connection, at: str, *records: dict) -> None:
    save_listings(conn, list(records), origin="sync", observed_at=at)


def result(conn: sqlite3.Connection, listing_id: int) -> dict:
    cursor = conn.execute("SELECT * FROM auction_results WHERE listing_id = ?", [listing_id])
    names = [d[0] for d in cursor.description]
    row = cursor.fetchone()
    return dict(zip(names, row)) if row else {}


def mirror(tmp_path) -> sqlite3.Connection:
    conn = connect(str(tmp_path / "m.db"))
    ensure_schema(conn)
    return conn


def test_the_last_bid_before_the_end_is_the_final_price_and_a_later_one_is_ignored(tmp_path):
    conn = mirror(tmp_path)
    seen(conn, "2026-08-20T10:00:00Z", auction(1, "kettle.com", bid=None, bids=0))
    seen(conn, "2026-08-20T14:00:00Z", auction(1, "kettle.com", bid=25.0, bids=3))
    seen(conn, "2026-08-20T17:30:00Z", auction(1, "kettle.com", bid=41.0, bids=6))
    seen(conn, "2026-08-20T18:20:00Z", auction(1, "kettle.com", bid=90.0, bids=9))  # a late page: after the end
    assert derive_results(conn, now="2026-08-20T17:59:00Z") == 0  # not ended yet
    assert derive_results(conn, now="2026-08-20T19:00:00Z") == 1
    got = result(conn, 1)
    assert (got["final_price"], got["bids"], got["sold"], got["currency"]) == (41.0, 6, 1, "USD")
    assert got["final_price_eur"] == to_eur(41.0, "USD", "2026-08-20") and got["final_price_eur"] is not None
    assert got["last_seen_before_end"] == "2026-08-20T17:30:00Z" and got["ended_at"] == END
    assert derive_results(conn, now="2026-08-21T07:00:00Z") == 0  # nothing new seen: not derived again


def test_an_auction_without_bids_did_not_sell_and_keeps_its_asking_price(tmp_path):
    conn = mirror(tmp_path)
    seen(conn, "2026-08-20T09:00:00Z", auction(2, "quiet.net", bid=None, bids=0, price=19.0))
    derive_results(conn, now="2026-08-21T00:00:00Z")
    got = result(conn, 2)
    assert (got["final_price"], got["final_price_eur"], got["asking_price"], got["sold"], got["bids"]) == (
        None,
        None,
        19.0,
        0,
        0,
    )


def test_a_currency_without_a_rate_gives_a_result_without_eur(tmp_path):
    conn = mirror(tmp_path)
    seen(conn, "2026-08-20T12:00:00Z", auction(3, "rouble.ru", bid=5000.0, bids=2, currency="RUB", source="nicsell"))
    derive_results(conn, now="2026-08-21T00:00:00Z")
    got = result(conn, 3)
    assert (got["final_price"], got["currency"], got["final_price_eur"]) == (5000.0, "RUB", None)


def test_where_the_name_went_next(tmp_path):
    conn = mirror(tmp_path)
    seen(
        conn,
        "2026-08-20T12:00:00Z",
        auction(4, "relisted.com", bid=None, bids=0),
        auction(5, "elsewhere.com", bid=None, bids=0),
        auction(6, "dropped.se", bid=None, bids=0),
        auction(7, "nowhere.org", bid=None, bids=0),
    )
    derive_results(conn, now="2026-08-20T19:00:00Z")
    assert {result(conn, i)["next_kind"] for i in (4, 5, 6, 7)} == {None}
    # the next day: a closeout of the same platform, another platform's auction, the drop list
    seen(
        conn,
        "2026-08-21T07:00:00Z",
        auction(14, "relisted.com", bid=None, bids=0, kind="closeout", price=9.0),
        auction(15, "elsewhere.com", bid=None, bids=0, source="godaddy"),
    )
    dropped = pending_row(16, "dropped.se", "2026-08-24", "2026-08-25", status="pendingDelete")
    save_pending(conn, [dropped], origin="sync", observed_at="2026-08-21T07:00:00Z")
    derive_results(conn, now="2026-08-21T08:00:00Z")
    assert (result(conn, 4)["next_kind"], result(conn, 4)["next_id"]) == ("closeout", 14)
    assert (result(conn, 5)["next_kind"], result(conn, 5)["next_id"], result(conn, 5)["next_source"]) == (
        "platform",
        15,
        "godaddy",
    )
    assert (result(conn, 6)["next_kind"], result(conn, 6)["next_id"]) == ("drop", 16)
    assert result(conn, 7)["next_kind"] is None
    assert result(conn, 4)["next_seen_at"] == "2026-08-21T07:00:00Z"


def comps_mirror(tmp_path):
    """Sold auctions of several shapes, ended on 2026-08-20, and the subject's own listing."""
    from toolkit import Mirror

    db = tmp_path / "comps.db"
    conn = connect(str(db))
    ensure_schema(conn)
    sold = [
        (101, "kettlehouse.com", 41.0),
        (102, "harborkettle.net", 30.0),
        (103, "zzqxv.com", 12.0),
        (104, "kettleharbor.de", 25.0),
        (105, "bluekettle.com", 18.0),
        (106, "verylongunrelatedname.io", 90.0),
    ]
    seen(
        conn,
        "2026-08-20T12:00:00Z",
        *[
            {**auction(i, n, bid=p, bids=2), "trust_flow": 20, "citation_flow": 25, "ttf_topic": "Home/Garden"}
            for i, n, p in sold
        ],
    )
    seen(conn, "2026-08-20T12:00:00Z", auction(107, "unsold-kettle.com", bid=None, bids=0))
    seen(
        conn,
        "2026-08-21T07:00:00Z",
        {
            **auction(200, "kettleharbor.com", bid=None, bids=0),
            "trust_flow": 21,
            "citation_flow": 24,
            "ttf_topic": "Home/Garden",
            "auction_end_date": "2026-08-30T18:00:00Z",
        },
    )
    with conn:
        derive_results(conn, now="2026-08-21T08:00:00Z")
    conn.close()
    return db, Mirror(db)


def test_comparables_rank_by_tld_words_length_topic_and_metrics(tmp_path):
    from toolkit.analysis.comps import comparables, tld_family

    db, m = comps_mirror(tmp_path)
    found = comparables(m, "KettleHarbor.com", limit=4)
    # the same TLD and a shared word first; both words and the length beat the TLD; a TLD alone comes last
    assert list(found["name"]) == ["kettlehouse.com", "harborkettle.net", "bluekettle.com", "kettleharbor.de"]
    assert list(comparables(m, "kettleharbor.com", limit=6)["name"])[4:] == ["zzqxv.com", "verylongunrelatedname.io"]
    assert found.iloc[1]["why"].startswith("same TLD family (legacy); 12 letters (vs 12); shares 'harbor', 'kettle'")
    first = found.iloc[0]
    assert (
        first["why"] == "same TLD .com; 11 letters (vs 12); shares 'kettle'; topic Home/Garden; TF/CF 20/25 (vs 21/24)"
    )
    assert (first["final_price"], first["currency"], first["bids"]) == (41.0, "USD", 2)
    assert "unsold-kettle.com" not in set(comparables(m, "kettleharbor.com", limit=50)["name"])  # no sale, no price
    assert "kettleharbor.com" not in set(comparables(m, "kettleharbor.com", limit=50)["name"])
    assert (tld_family("co.uk"), tld_family("uk"), tld_family("com"), tld_family("shop")) == (
        "cc:uk",
        "cc:uk",
        "legacy",
        "new",
    )


def test_comparables_read_again_once_the_mirror_changed(tmp_path):
    """The sold results are read once per mirror generation: a sale the mirror sees afterwards
    is a comparable at the next call, in this process."""
    from toolkit.analysis.comps import comparables

    db, m = comps_mirror(tmp_path)
    assert "kettlebarn.com" not in set(comparables(m, "kettleharbor.com", limit=50)["name"])
    conn = connect(str(db))
    seen(
        conn,
        "2026-08-21T06:00:00Z",
        {**auction(108, "kettlebarn.com", bid=55.0, bids=3), "auction_end_date": "2026-08-21T06:30:00Z"},
    )
    with conn:
        derive_results(conn, now="2026-08-21T08:00:00Z")
    conn.close()
    found = comparables(m, "kettleharbor.com", limit=50)
    assert found.set_index("name").loc["kettlebarn.com", "final_price"] == 55.0


def test_edt_comps_prints_the_comparables_and_why(tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db, _ = comps_mirror(tmp_path)
    shown = CliRunner().invoke(cli, ["comps", "kettleharbor.com", "--db", str(db), "--limit", "2"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == "Comparable results for kettleharbor.com (sales, most alike first):"
    assert (
        lines[1].split()[:4] == ["kettlehouse.com", "dynadot", "2026-08-20", "41.00"] and "shares 'kettle'" in lines[1]
    )
    assert "bids" in lines[1] and "reported" not in lines[1]
    assert len(lines) == 3
    as_json = CliRunner().invoke(cli, ["comps", "kettleharbor.com", "--db", str(db), "--json"])
    assert [r["name"] for r in __import__("json").loads(as_json.output)][:1] == ["kettlehouse.com"]
    bad = CliRunner().invoke(cli, ["comps", "kettleharbor", "--db", str(db)])
    assert bad.exit_code == 2 and "is not a domain name" in bad.output


def test_results_df_takes_the_listing_filters(tmp_path):
    db, m = comps_mirror(tmp_path)
    everything = m.results_df()
    assert len(everything) == 7 and everything["sold"].sum() == 6
    com = m.results_df(tld=".com")
    assert sorted(com["name"]) == ["bluekettle.com", "kettlehouse.com", "unsold-kettle.com", "zzqxv.com"]
    assert list(m.results_df(sold=True, tld=".net")["name"]) == ["harborkettle.net"]
    assert m.results_df(ended_after="2026-08-21").empty


def test_edt_export_results_writes_every_result_of_the_matching_listings(tmp_path):
    import csv as csv_module

    import pyarrow.parquet as pq
    from click.testing import CliRunner

    from toolkit.cli import cli

    db, m = comps_mirror(tmp_path)
    out = tmp_path / "results.csv"
    written = CliRunner().invoke(cli, ["export", "--db", str(db), "--results", "--out", str(out), "tld=.com"])
    assert written.exit_code == 0, written.output
    rows = list(csv_module.DictReader(out.open()))
    assert sorted(r["name"] for r in rows) == sorted(m.results_df(tld=".com")["name"])
    kettle = next(r for r in rows if r["name"] == "kettlehouse.com")
    assert (kettle["final_price"], kettle["bids"], kettle["sold"], kettle["currency"]) == (
        "41.0",
        "2",
        "True",
        "USD",
    )  # as the listings export writes booleans
    parquet = tmp_path / "results.parquet"
    assert CliRunner().invoke(cli, ["export", "--db", str(db), "--results", "--out", str(parquet)]).exit_code == 0
    table = pq.read_table(parquet)
    assert table.num_rows == 7 and table.schema.field("final_price_eur").type == "double"
    moments = [f.name for f in table.schema if f.name.endswith(("_at", "_end"))]
    assert moments == ["ended_at", "last_seen_before_end", "next_seen_at", "derived_at"]
    assert {str(table.schema.field(m).type) for m in moments} == {"timestamp[ms, tz=UTC]"}
    stored = {r[0]: r[1] for r in sqlite3.connect(db).execute("SELECT listing_id, ended_at FROM auction_results")}
    ended = dict(zip(table.column("listing_id").to_pylist(), table.column("ended_at").to_pylist()))
    assert {i: f"{t:%Y-%m-%dT%H:%M:%SZ}" for i, t in ended.items()} == stored
    bad = CliRunner().invoke(cli, ["export", "--db", str(db), "--results", "--out", str(out), "tf_min=lots"])
    assert bad.exit_code == 2 and "tf_min" in bad.output


def test_the_replica_serves_the_results_as_an_extension(tmp_path):
    import asyncio

    import httpx

    from toolkit.serve.server import create_app

    db, m = comps_mirror(tmp_path)
    app = create_app(db, {"k": "pro"})

    async def get(query: str) -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            return await client.get(f"/api/results?{query}", headers={"Authorization": "Bearer k"})

    page = asyncio.run(get("tld=.com&sold=1&per_page=2&nosuch=1"))  # an unknown parameter is ignored, as the API does
    assert page.status_code == 200, page.text
    body = page.json()
    expected = m.results_df(tld=".com", sold=True)
    assert body["meta"]["total"] == len(expected) == 3 and body["meta"]["last_page"] == 2
    assert [r["name"] for r in body["data"]] == list(expected["name"][:2])
    assert (
        body["data"][0]["sold"] is True
        and body["links"]["next"] == "http://t/api/results?tld=.com&sold=1&per_page=2&page=2"
    )
    bad = asyncio.run(get("ended_after=soon"))
    assert bad.status_code == 422 and "ended_after" in bad.text
    everything = asyncio.run(get("")).json()
    assert everything["meta"]["total"] == 7 and [r["ended_at"] for r in everything["data"]] == sorted(
        (r["ended_at"] for r in everything["data"]), reverse=True
    )  # newest end first
    assert asyncio.run(get("tf_min=200")).status_code == 422

    async def free() -> httpx.Response:
        async with httpx.AsyncClient(
            transport=httpx.ASGITransport(app=create_app(db, {"f": "free"})), base_url="http://t"
        ) as c:
            return await c.get("/api/results", headers={"Authorization": "Bearer f"})

    refused = asyncio.run(free())  # the route it names is the one asked
    assert refused.status_code == 403 and refused.json()["message"] == "Pro plan required to access /api/results"

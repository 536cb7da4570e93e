"""The Streamlit app through `streamlit.testing.v1.AppTest`: every page, driven through its
widgets, checked against the query layer (the app must show what the API would answer)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import small_demo
from streamlit.testing.v1 import AppTest

from toolkit import Mirror
from toolkit.store.schema import connect

APP = str(Path(__file__).resolve().parents[1] / "app.py")


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("app") / "demo.db"
    small_demo(path, 9)
    return path


@pytest.fixture()
def demo_db(demo_template, tmp_path, monkeypatch) -> Path:
    path = tmp_path / "mirror.db"
    shutil.copy(demo_template, path)
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.delenv("EDT_PLAN", raising=False)
    monkeypatch.delenv("EDT_API_KEY", raising=False)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    return path


def app(view: str | None = None, **query: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if view:
        at.query_params["view"] = view
    for key, value in query.items():
        at.query_params[key] = value
    return at.run()


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def total_shown(at: AppTest) -> int:
    return int(at.metric[0].value.replace(",", ""))


def url_value(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def figure(at: AppTest, n: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[n].proto.spec)


def test_an_empty_mirror_opens_on_the_first_run_panel_and_loads_the_demo(tmp_path, monkeypatch):
    path = tmp_path / "fresh" / "mirror.db"
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    at = app()
    no_exception(at)
    assert "the mirror is empty" in at.header[0].value
    assert "EDT_API_KEY" in at.code[0].value
    at.button(key="load_demo").click().run()
    no_exception(at)
    assert total_shown(at) == Mirror(path).search_domains({})["meta"]["total"] > 1000


def test_explore_filters_through_the_widgets_match_the_query_layer(demo_db):
    at = app()
    no_exception(at)
    assert total_shown(at) == Mirror(demo_db).search_domains({})["meta"]["total"]
    at.sidebar.number_input(key="f:tf_min").set_value(20).run()
    at.sidebar.selectbox(key="f:type").set_value("auction").run()
    no_exception(at)
    expected = Mirror(demo_db).search_domains({"tf_min": "20", "type": "auction"})
    assert total_shown(at) == expected["meta"]["total"] > 0
    assert url_value(at, "tf_min") == "20" and url_value(at, "type") == "auction"  # a bookmarkable URL
    table = at.dataframe[0].value
    assert list(table["id"]) == [r["id"] for r in expected["data"]]


def test_a_bookmarked_search_reopens_with_its_filters_sort_and_page(demo_db):
    at = app(tld=".fr,.de", sort="-trust_flow", page="2")
    no_exception(at)
    expected = Mirror(demo_db).search_domains({"tld": ".fr,.de", "sort": "-trust_flow", "page": "2", "per_page": "50"})
    assert total_shown(at) == expected["meta"]["total"]
    assert at.sidebar.text_input(key="f:tld").value == ".fr,.de"
    assert list(at.dataframe[0].value["id"]) == [r["id"] for r in expected["data"]]


def test_regfree_is_offered_only_from_authority(demo_db):
    at = app()
    assert "regfree" in at.sidebar.selectbox(key="f:source").options
    at.sidebar.selectbox(key="plan").set_value("pro").run()
    no_exception(at)
    assert "regfree" not in at.sidebar.selectbox(key="f:source").options
    assert "regfree needs Authority" in " ".join(c.value for c in at.sidebar.caption)


def test_domain_detail_shows_the_record_and_its_price_history(demo_db):
    conn = connect(str(demo_db))
    listing_id, name, changes = conn.execute(
        "SELECT listing_id, name, count(*) FROM listing_history JOIN listings ON listings.id = listing_id "
        "GROUP BY listing_id ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()
    at = app("detail", id=str(listing_id))
    no_exception(at)
    assert at.subheader[0].value == name
    assert changes > 1
    traces = figure(at)["data"]
    assert max(len(t.get("x", [])) for t in traces) == changes  # every history row is charted
    fields = at.dataframe[0].value
    assert "first_seen_at" in set(fields["field"]) and "web.archive.org/web/*/" + name in at.markdown[0].value


def test_trust_flow_page_charts_the_filtered_rows(demo_db):
    at = app("trust-flow", source="dynadot")
    no_exception(at)
    rows = Mirror(demo_db).domains_df({"source": "dynadot"}, columns=["trust_flow", "citation_flow"])
    plotted = sum(len(t.get("x", [])) for t in figure(at)["data"] if t["type"] == "scattergl")
    assert plotted == int((rows["trust_flow"].notna() & rows["citation_flow"].notna()).sum()) > 0
    assert any(t.get("name") == "TF = CF" for t in figure(at)["data"])


def test_archive_page_draws_four_charts_of_the_filtered_rows(demo_db):
    at = app("archive", language="FR")
    no_exception(at)
    assert len(at.get("plotly_chart")) == 4
    total = Mirror(demo_db).search_domains({"language": "FR"})["meta"]["total"]
    assert at.caption[0].value.startswith(f"{total:,} rows drawn")


def test_drop_calendar_counts_the_months_pending_drops(demo_db):
    at = app("calendar")
    no_exception(at)
    at.radio(key="cal_kind").set_value("Pending-delete drops").run()
    no_exception(at)
    mirror = Mirror(demo_db)
    month = mirror.now().date().replace(day=1)
    frame = mirror.pending_df({"include_past": "1"}, columns=["estimated_drop_date"])
    in_month = frame["estimated_drop_date"].dropna().str.startswith(month.strftime("%Y-%m")).sum()
    assert any(c.value.startswith(f"{in_month:,} domains in") for c in at.caption)
    assert at.get("download_button"), "the .ics download is offered"
    assert any("window" in c.value and "most likely day" in c.value for c in at.caption)
    table = at.dataframe[0].value  # the chosen day's drops, each with its window
    assert list(table.columns) == ["domain", "most likely", "window", "days"]
    assert (table["days"] >= 1).all()


def test_the_ics_spans_each_window_and_names_the_most_likely_day():
    from datetime import date

    from icalendar import Calendar

    from toolkit.ui.pages import ics_for_windows

    drops = [("a.nu", date(2026, 3, 5), date(2026, 3, 4), date(2026, 3, 5)),
             ("b.nu", date(2026, 3, 5), date(2026, 3, 4), date(2026, 3, 5)),
             ("c.nu", date(2026, 3, 9), date(2026, 3, 8), date(2026, 3, 11)),
             ("d.se", date(2026, 3, 6), date(2026, 3, 6), date(2026, 3, 6)),
             ("e.com", date(2026, 3, 7), None, None)]  # fmt: skip
    events = Calendar.from_ical(ics_for_windows(drops, "Pending-delete drops")).walk("VEVENT")
    got = {(e.decoded("dtstart"), e.decoded("dtend")): str(e["summary"]) for e in events}
    assert got == {
        (date(2026, 3, 4), date(2026, 3, 6)): "Pending-delete drops: 2 domains, most likely Thu 05 Mar, window 04 Mar–05 Mar (2 days)",
        (date(2026, 3, 8), date(2026, 3, 12)): "Pending-delete drops: 1 domain, most likely Mon 09 Mar, window 08 Mar–11 Mar (4 days)",
        (date(2026, 3, 6), date(2026, 3, 7)): "Pending-delete drops: 1 domain, on Fri 06 Mar",
        (date(2026, 3, 7), date(2026, 3, 8)): "Pending-delete drops: 1 domain, on Sat 07 Mar",
    }  # fmt: skip
    described = {str(e["summary"]): str(e["description"]) for e in events}
    assert described[got[(date(2026, 3, 4), date(2026, 3, 6))]].endswith("a.nu\nb.nu")


def test_a_saved_search_survives_a_rerun_and_a_new_session(demo_db):
    at = app("watchlist", tf_min="15")
    no_exception(at)
    at.text_input(key="search_name").input("strong links")
    at.button[0].click().run()  # the form's submit button
    no_exception(at)
    assert any("Saved" in s.value for s in at.success)
    again = app("watchlist")
    no_exception(again)
    assert any("strong links" in m.value and "tf_min=15" in m.value for m in again.markdown)


def test_sync_page_shows_each_datasets_freshness(demo_db):
    at = app("sync")
    no_exception(at)
    table = at.dataframe[0].value
    assert list(table["job"]) == ["listings", "bids", "regfree", "pending"]
    assert set(table["state"]) == {"never synced"}  # demo data only
    assert any("EDT_API_KEY" in i.value for i in at.info)


@pytest.mark.parametrize("view", ["explore", "detail", "trust-flow", "archive", "calendar", "watchlist", "sync"])
def test_every_page_renders_without_an_exception(demo_db, view):
    at = app(view)
    no_exception(at)
    assert at.sidebar.radio(key="view").value == view


def test_the_sync_button_runs_a_job_against_the_remote(demo_db, demo_template, tmp_path, monkeypatch):
    from toolkit.server import BackgroundServer, create_app

    remote = tmp_path / "remote.db"
    shutil.copy(demo_template, remote)
    key = "app-sync-key-7c1e"
    with BackgroundServer(create_app(remote, keys={key: "business"}, rates={"business": 100_000})) as server:
        monkeypatch.setenv("EDT_API_KEY", key)
        monkeypatch.setenv("EDT_BASE_URL", server.url)
        monkeypatch.setenv("EDT_PLAN", "business")
        monkeypatch.setenv("EDT_BUDGET_FILE", str(tmp_path / "budget.sqlite"))
        at = app("sync")
        at.selectbox(key="sync_job").set_value("pending")
        at.button(key="sync_run").click().run()
        no_exception(at)
    rows = Mirror(remote).search_pending_delete({"include_past": "1", "per_page": "1"})["meta"]["total"]
    assert any(s.value.startswith("pending: ok") and f"{rows:,} rows seen" in s.value for s in at.success)
    runs = connect(str(demo_db)).execute("SELECT job, status FROM sync_runs").fetchall()
    assert runs == [("pending", "ok")]

"""The app in a real browser (`toolkit.appcheck`): every page renders without an exception and
gives a screenshot; an exception on a page is caught and reported. The browser tests are
skipped where Debian's chromium and chromium-driver, or selenium, are not installed."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest

from conftest import BROWSER_SKIP_REASON, chart_history, empty_counts, small_demo

from toolkit import Mirror
from toolkit.bench import browser as appcheck
from toolkit.bench import browser_timings as timings
from toolkit.bench.browser import VIEWS, chromium_available, main, page_failure

needs_chromium = pytest.mark.skipif(not chromium_available(), reason=BROWSER_SKIP_REASON)  # the one skip allowed


@pytest.fixture()
def app_env(tmp_path, monkeypatch) -> None:
    """The app as a fresh user sees it: no plan, key or config file of the developer's."""
    monkeypatch.delenv("EDT_PLAN", raising=False)
    monkeypatch.delenv("EDT_API_KEY", raising=False)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))


def demo_mirror(path: Path) -> Path:
    return small_demo(path, 9)


# -- the detection of a failed page (no browser needed) --------------------------------------


def test_views_are_the_apps_pages():
    from toolkit.ui.pages import PAGES

    assert list(VIEWS) == list(PAGES)


def test_a_clean_page_is_no_failure():
    text = "Explore listings\nMatching listings\n4,430\nPage 1 of 89\nagenciaonline.com\tgodaddy\tauction"
    assert page_failure([], text) is None


def test_an_exception_box_gives_its_first_line():
    box = 'ValueError: boom\nTraceback:\nFile "/x/app.py", line 4, in <module>\n    raise ValueError("boom")\nCopy'
    assert page_failure([box], f"Explore listings\n{box}") == "EXCEPTION: ValueError: boom"
    two = ["\n\nKeyError: 'id'\nTraceback:", "TypeError: other"]
    assert page_failure(two, "") == "EXCEPTION: KeyError: 'id' (+1 more)"


def test_an_exception_box_with_no_text_still_fails():
    assert page_failure([""], "Explore listings") == "EXCEPTION: (no message)"


def test_a_printed_traceback_fails_with_the_line_that_ends_it():
    text = (
        'Sync\nTraceback (most recent call last):\n  File "toolkit/sync/engine.py", line 9, in run\n'
        "    raise SyncBusy('another sync')\ntoolkit.sync.engine.SyncBusy: another sync\nmore text"
    )
    assert page_failure([], text) == "EXCEPTION: toolkit.sync.engine.SyncBusy: another sync"
    cut_short = "Traceback (most recent call last):\n  (cut)"
    assert page_failure([], cut_short) == "EXCEPTION: Traceback (most recent call last):"


def test_a_missing_app_exits_2_and_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(appcheck, "find_app", lambda: tmp_path / "app.py")
    db = tmp_path / "mirror.db"
    db.write_bytes(b"")
    assert main(["--db", str(db), "--out", str(tmp_path / "shots")]) == 2
    assert f"no {tmp_path / 'app.py'}" in capsys.readouterr().err


def test_an_unknown_view_exits_2(tmp_path, capsys):
    assert main(["--db", str(tmp_path / "x.db"), "--out", str(tmp_path), "--views", "explore,nope"]) == 2
    assert "nope" in capsys.readouterr().err


# -- the real browser ------------------------------------------------------------------------


@needs_chromium
def test_every_page_renders_in_chromium(tmp_path, app_env, capsys):
    db = demo_mirror(tmp_path / "mirror.db")
    shots = tmp_path / "shots"
    assert main(["--db", str(db), "--out", str(shots)]) == 0, capsys.readouterr().out
    printed = capsys.readouterr().out.splitlines()
    for view in VIEWS:
        png = shots / f"{view}.png"
        assert png.is_file() and png.stat().st_size > 1000, view
        assert png.read_bytes().startswith(b"\x89PNG"), view
        assert any(line.startswith(f"{view}: ok, ") for line in printed), printed


@needs_chromium
def test_an_exception_on_a_page_is_reported(tmp_path, app_env):
    """A script that raises, served and opened as the app is: the browser sees the exception."""
    broken = tmp_path / "broken.py"
    broken.write_text('import streamlit as st\nst.header("Before the crash")\nraise ValueError("boom from the page")\n')
    db = tmp_path / "unused.db"  # the broken script opens no mirror
    with appcheck.serve_app(broken, db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        result = appcheck.check_view(driver, base, "explore", tmp_path, timeout=30)
    assert not result.ok
    assert result.failure == "EXCEPTION: ValueError: boom from the page"
    assert result.line() == "explore: EXCEPTION: ValueError: boom from the page"
    assert result.screenshot and result.screenshot.read_bytes().startswith(b"\x89PNG")


# -- the timing script -----------------------------------------------------------------------


def test_a_timing_is_the_median_of_its_runs_and_the_table_prints_every_row():
    from toolkit.bench.browser import Timing, timing_table

    assert Timing("x", [3.0, 1.0, 2.0]).median == 2.0
    assert Timing("x", [4.0, 1.0]).median == 2.5
    pages = {
        "explore": {
            "cold": Timing("cold", [2.0]),
            "reload": Timing("reload", [1.0]),
            "change": Timing("sidebar: TLD .com", [0.25]),
        }
    }
    text = timing_table(pages, [Timing("next page", [0.5, 0.7, 0.6])])
    assert "| explore | 2.00 s | 1.00 s | — | 0.25 s | sidebar: TLD .com |" in text  # no restart measured
    assert "| next page | 0.60 s | 0.50, 0.70, 0.60 |" in text
    # With the blank-page peer measured in the same run, cold and reload read as multiples of it.
    peer = {
        "cold": Timing("cold", [0.8, 1.0, 1.2]),
        "reload": Timing("reload", [0.25]),
        "restart": Timing("restart", [0.5]),
        "change": Timing("", []),
    }
    pages["explore"]["restart"] = Timing("restart", [1.5])
    text = timing_table({"(peer) a blank Streamlit page": peer, **pages}, [])
    assert "| (peer) a blank Streamlit page | 1.00 s (1.0x) | 0.25 s (1.0x) | 0.50 s (1.0x) | — |  |" in text
    assert "| explore | 2.00 s (2.0x) | 1.00 s (4.0x) | 1.50 s (3.0x) | 0.25 s | sidebar: TLD .com |" in text
    # Measured in the same rounds, a multiple is the median of each round's: a slow round
    # (the machine busy for both) does not skew it as the ratio of the medians would.
    rounds = {
        "cold": Timing("cold", [2.0, 2.6, 4.0]),
        "reload": Timing("reload", [0.5, 0.5, 0.5]),
        "change": Timing("", []),
    }
    page = {
        "cold": Timing("cold", [2.4, 3.9, 4.4]),
        "reload": Timing("reload", [1.0, 1.0, 1.0]),
        "change": Timing("sidebar: TLD .com", [0.3]),
    }
    text = timing_table({"(peer) a blank Streamlit page": rounds, "explore": page}, [])
    assert "| explore | 3.90 s (1.2x) | 1.00 s (2.0x) |" in text  # rounds 1.2x, 1.5x, 1.1x; medians' ratio 1.5x


def test_random_bookmarks_are_drawn_from_the_mirror_by_their_seed(tmp_path):
    """`--random SEED`: the same seed opens the same bookmarks, another seed others; each
    bookmark's filters are ones the query layer takes, its domain one the mirror holds."""
    import random
    from urllib.parse import parse_qsl

    from toolkit.bench.browser import RANDOM_VIEWS, random_bookmarks

    db = demo_mirror(tmp_path / "mirror.db")
    draw = lambda seed: [random_bookmarks(db, rng) for rng in [random.Random(seed)] for _ in range(3)]  # noqa: E731
    rounds = draw(11)
    assert rounds == draw(11) and rounds != draw(12)
    assert len({tuple(r.values()) for r in rounds}) == 3  # each round draws anew
    mirror = Mirror(db, readonly=True)
    for bookmarks in rounds:
        assert list(bookmarks) == list(RANDOM_VIEWS)
        query = {view: dict(parse_qsl(text)) for view, text in bookmarks.items()}
        assert all(q.pop("view") == view for view, q in query.items())
        for view in ("explore", "trust-flow", "archive"):
            assert mirror.search_domains({**query[view], "per_page": "1"})["meta"]["total"] >= 0
            assert 1 <= len(query[view]["tld"].split(",")) <= 3
        mirror.search_pending_delete({**query["pending"], "per_page": "1"})
        assert mirror.listings_named(query["detail"]["name"])
        assert set(query["calendar"]) == {"cal_tld"}


@needs_chromium
def test_the_timing_script_opens_random_bookmarks_against_the_blank_page(tmp_path, app_env, capsys, monkeypatch):
    monkeypatch.setattr(timings, "RANDOM_VIEWS", ("trust-flow",))  # one page keeps the test short
    db = demo_mirror(tmp_path / "mirror.db")
    assert main(["--db", str(db), "--out", str(tmp_path / "t"), "--timings", "--random", "5", "--repeat", "1"]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Random bookmarks, seed 5:\n- `/?view=trust-flow&tld=")
    rows = {line.split("|")[1].strip(): line for line in printed.splitlines() if line.startswith("| ")}
    assert set(rows) == {"page", "(peer) a blank Streamlit page", "trust-flow"}
    cold = rows["trust-flow"].split("|")[2].strip()
    assert 0 < float(cold.split(" s")[0]) < 120 and cold.endswith("x)")  # a multiple of the blank page's


@needs_chromium
def test_the_timing_script_measures_every_page_and_explore_interaction(tmp_path, app_env, capsys):
    db = demo_mirror(tmp_path / "mirror.db")
    assert (
        main(
            [
                "--db",
                str(db),
                "--out",
                str(tmp_path / "t"),
                "--timings",
                "--repeat",
                "1",
                "--views",
                "explore",  # every page and peer is timed by the bench itself (docs/benchmarks.md)
                "--blank-peer-only",
            ]
        )
        == 0
    ), capsys.readouterr().err
    printed = capsys.readouterr().out
    with capsys.disabled():  # the ratios against the blank page, in the test run's output (not asserted: timed)
        print("\n" + printed)
    rows = {line.split("|")[1].strip(): line for line in printed.splitlines() if line.startswith("| ")}
    # the page as a multiple of the blank page of its round
    assert all(re.search(r"s \(\d+\.\dx\)", cell) for cell in rows["explore"].split("|")[2:5]), rows["explore"]
    assert not any("chart" in view or view == "detail" for view in rows)  # --blank-peer-only, --views
    for view in ("explore", "(peer) a blank Streamlit page"):
        cells = rows[view].split("|")[2:6] if not view.startswith("(peer)") else rows[view].split("|")[2:5]
        seconds = [float(cell.strip().split(" s")[0]) for cell in cells]
        assert all(0 < s < 120 for s in seconds), rows[view]
    assert rows["(peer) a blank Streamlit page"].count("(1.0x)") == 3  # cold, reload, restart
    for step in (
        "next page",
        "sort by a column title (Price)",
        "open a domain from the table",
        "TLD .fr,.de",
        "open the SEO metrics group",
        "min Trust Flow 20",
        "open the Names group",
        "categories Business",
    ):
        assert float(rows[step].split("|")[2].strip().removesuffix(" s")) > 0, rows[step]


@needs_chromium
def test_a_tables_links_change_the_page_in_place_and_back_returns_to_the_search(tmp_path, app_env):
    """A column title and a name rerun the page in the same document (no new session), each a
    step of the browser's history: Back returns to the sorted search, then to the one before."""
    import time

    from selenium.webdriver.common.by import By

    db = demo_mirror(tmp_path / "mirror.db")
    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        timings._open(driver, f"{base}/?view=explore&tld=.com", 60)
        # Once idle, the browser has run the chart library and drawn its small charts out of
        # sight (assets.later_script), and left none behind.
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not driver.execute_script("return window.__edtChartsWarmed === true;"):
            time.sleep(0.1)
        assert driver.execute_script("return window.__edtChartsWarmed === true;")
        assert driver.execute_script("return document.querySelectorAll('canvas').length;") == 0
        driver.execute_script("window.__sameDocument = true;")
        timings._act(driver, timings._click_link('th a[href*="effective_price_eur"]'), 60)
        assert driver.current_url.endswith("?view=explore&tld=.com&sort=-effective_price_eur")
        first = driver.find_element(By.CSS_SELECTOR, "a.edt-name").text
        prices = Mirror(db, readonly=True).search_domains(
            {"tld": ".com", "sort": "-effective_price_eur", "per_page": "1"}
        )
        assert first == prices["data"][0]["name"]  # sorted over every result
        timings._act(driver, timings._click_link("a.edt-name"), 60)
        assert "view=detail" in driver.current_url and f"name={first}" in driver.current_url
        assert driver.execute_script("return window.__sameDocument === true;")  # never a new page load
        driver.back()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and "view=explore" not in driver.current_url:
            time.sleep(0.1)
        timings._wait_rendered(driver, time.monotonic(), 60, rerun=False)
        assert driver.current_url.endswith("?view=explore&tld=.com&sort=-effective_price_eur")
        assert driver.find_element(By.CSS_SELECTOR, "a.edt-name").text == first


@needs_chromium
def test_a_rows_buttons_shortlist_and_watch_it_in_place(tmp_path, app_env):
    """☆ on a row of Explore puts the listing on the shortlist, ◎ watches its name, in the same
    document; each button then shows what was done (★, ◉) and a second click undoes it."""
    from selenium.webdriver.common.by import By

    from toolkit.sync.watched_names import watched_names
    from toolkit.sync.saved_searches import shortlist

    db = demo_mirror(tmp_path / "mirror.db")
    first = Mirror(db, readonly=True).search_domains({"tld": ".com", "per_page": "1"})["data"][0]
    row = "table.edt-table tbody tr:first-child"
    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        timings._open(driver, f"{base}/?view=explore&tld=.com", 60)
        driver.execute_script("window.__sameDocument = true;")
        assert driver.find_element(By.CSS_SELECTOR, f"{row} a.edt-name").text == first["name"]
        timings._act(driver, timings._click_link(f'{row} button[data-edt-act^="shortlist:on:"]'), 60)
        timings._act(driver, timings._click_link(f'{row} button[data-edt-act^="watch:on:"]'), 60)
        faces = [b.text for b in driver.find_elements(By.CSS_SELECTOR, f"{row} button.edt-act")]
        assert faces == ["★", "◉"]
        assert [item["listing_id"] for item in shortlist(Mirror(db))] == [first["id"]]
        assert [r["name"] for r in watched_names(Mirror(db))] == [first["name"]]
        assert f"Watching {first['name']}" in driver.find_element(By.CSS_SELECTOR, "body").text  # said above the table
        timings._act(driver, timings._click_link(f'{row} button[data-edt-act^="shortlist:off:"]'), 60)
        assert shortlist(Mirror(db)) == [] and watched_names(Mirror(db))  # off the shortlist, still watched
        assert driver.execute_script("return window.__sameDocument === true;")  # never a new page load


@needs_chromium
def test_a_bid_is_decided_on_the_domain_page_in_chromium(lapse_template, tmp_path, app_env, monkeypatch):
    """On a time-lapse demo, in the browser: a sold auction says sold and its price; a running
    auction its time left and its range with how often such a range held; a listing without
    link data says so instead of an all-clear; and no page shows a field name, an EPP code,
    None or a crontab line (the text the browser draws, read as test_app reads AppTest's)."""
    import shutil
    from datetime import datetime

    from selenium.webdriver.common.by import By

    from conftest import lapse_now
    from test_app import raw_words_in
    from toolkit.store.labels import status_words
    from toolkit.store.schema import connect

    db = tmp_path / "lapse.db"
    shutil.copy(lapse_template, db)
    monkeypatch.setenv("EDT_NOW", lapse_now().isoformat())  # the server answers as of the demo's morning
    conn = connect(str(db))
    sold, price, currency, ended = conn.execute(
        "SELECT name, final_price, currency, ended_at FROM auction_results WHERE sold = 1 ORDER BY ended_at DESC "
        "LIMIT 1"
    ).fetchone()
    running = conn.execute(  # the running auction with both ranges whose live estimate reaches highest
        "SELECT name FROM listings WHERE type = 'auction' AND bids_count > 0 AND value_low IS NOT NULL AND "
        "live_high IS NOT NULL AND closed_at IS NULL AND auction_end_date > ? ORDER BY live_high DESC LIMIT 1",
        [lapse_now().isoformat()],
    ).fetchone()[0]
    unlinked = conn.execute(
        "SELECT name FROM listings WHERE source != 'regfree' AND trust_flow IS NULL AND "
        "citation_flow IS NULL AND domain_authority IS NULL AND referring_domains IS NULL AND "
        "backlinks_count IS NULL AND closed_at IS NULL ORDER BY id LIMIT 1"
    ).fetchone()[0]
    pending = max(  # the status that reads longest in words
        conn.execute("SELECT domain, whois_status FROM pending_delete GROUP BY whois_status").fetchall(),
        key=lambda row: len(status_words(row[1])),
    )[0]
    no_eur = conn.execute(  # a price in no currency the ECB rates know
        "SELECT name FROM listings WHERE effective_price IS NOT NULL AND effective_price_eur IS NULL AND "
        "closed_at IS NULL ORDER BY id LIMIT 1"
    ).fetchone()[0]
    conn.close()
    ended_at = datetime.fromisoformat(ended.replace("Z", "+00:00"))
    ended_day = f"{ended_at.day} {ended_at:%b}"
    read = lambda driver: driver.find_element(By.CSS_SELECTOR, "body").text  # noqa: E731
    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        timings._open(driver, f"{base}/?view=detail&name={sold}", 60)
        assert f"Sold for {price:,.0f} {currency}" in read(driver) and f"on {ended_day}" in read(driver)
        timings._open(driver, f"{base}/?view=detail&name={running}", 60)
        text = read(driver)
        assert "Ends in " in text and "Pre-auction range (EUR)" in text and "right " in text  # with its coverage
        assert "Live estimate (EUR)" in text and not driver.execute_script(
            appcheck.CUT_FIGURES_JS
        )  # every figure whole
        timings._open(driver, f"{base}/?view=detail&name={unlinked}", 60)
        text = read(driver)
        assert "no link data" in text and "no metric jump" not in text
        assert "Not checked: metric jumps (no link data)" in text
        for name in (pending, no_eur):  # the longest status in words; the reason there is no EUR price
            timings._open(driver, f"{base}/?view=detail&name={name}", 60)
            assert name in read(driver) and not driver.execute_script(appcheck.CUT_FIGURES_JS), name
        shown = {}
        for view in VIEWS:
            timings._open(driver, f"{base}/?view={view}" + (f"&name={running}" if view == "detail" else ""), 60)
            shown[view] = raw_words_in(read(driver))
        assert not {view: words for view, words in shown.items() if words}, shown


@needs_chromium
def test_a_link_that_changes_filters_in_place_redraws_the_sidebar_from_it(tmp_path, app_env, monkeypatch):
    """A TF x CF region's "open them all in Explore" sets filters the sidebar already holds
    widgets for: Explore must search the link's filters, not the widgets' old values."""
    from selenium.webdriver.common.by import By

    db = demo_mirror(tmp_path / "mirror.db")
    # The test and the app's server count at one moment: an auction ending between them was off by one.
    monkeypatch.setenv("EDT_NOW", datetime.now(timezone.utc).isoformat())
    region = {"tf_min": "10", "tf_max": "30", "cf_min": "20", "cf_max": "60"}
    expected = Mirror(db, readonly=True).search_domains({**region, "per_page": "1"})["meta"]["total"]
    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        timings._open(driver, f"{base}/?view=trust-flow&tf_min=10&tf_range=0-30&cf_range=20-60", 60)
        timings._act(driver, timings._click_link('a[href*="view=explore"]'), 60)
        assert all(f"{k}={v}" in driver.current_url for k, v in region.items()), driver.current_url
        shown = driver.find_element(By.CSS_SELECTOR, '[data-testid="stMetricValue"]').text
        assert int(shown.replace(",", "")) == expected


@needs_chromium
def test_each_pages_html_names_every_element_chunk_it_draws(tmp_path, app_env):
    """`assets.PagePreload` writes each page's chunks into its HTML: a page that draws an
    element its `assets.ELEMENTS` row does not name fetches that chunk late, after its script ran.
    (Once drawn, a page fetches what it did not draw itself, when idle: `assets.later_script`.)"""
    from toolkit.ui.assets import ELEMENTS, LATER

    db = demo_mirror(tmp_path / "mirror.db")
    name, _ = timings._names(db)
    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.execute_cdp_cmd("Network.setCacheDisabled", {"cacheDisabled": True})  # nothing kept from the page before
        for view in ELEMENTS:
            extra = f"&name={name}" if view == "detail" else ""
            driver.get("about:blank")
            timings._open(driver, f"{base}/?view={view}{extra}", 60)
            idle_preload = set(LATER) - set(ELEMENTS[view])
            assert set(timings.chunks_not_preloaded(driver)) <= idle_preload, view


# The charts as the browser drew them: each `.edt-chart`'s ECharts instance, read through the
# module the page imported (`arguments[0]`: its path).
_DRAWN_TITLES_JS = """
const done = arguments[arguments.length - 1];
import(new URL(arguments[0], document.baseURI).href).then((echarts) => done(
  Array.from(document.querySelectorAll('.edt-chart')).map((el) => {
    const chart = echarts.getInstanceByDom(el);
    return chart ? chart.getOption().title[0].text : null;
  })));
"""
# The tooltip chart `arguments[1]` shows for its first series' data item `arguments[2]`.
_TOOLTIP_JS = """
const done = arguments[arguments.length - 1];
import(new URL(arguments[0], document.baseURI).href).then((echarts) => {
  const el = document.querySelectorAll('.edt-chart')[arguments[1]];
  echarts.getInstanceByDom(el).dispatchAction({type: 'showTip', seriesIndex: 0, dataIndex: arguments[2]});
  setTimeout(() => done(Array.from(el.querySelectorAll('div')).map((d) => d.innerText).filter(Boolean).pop()), 300);
});
"""


@needs_chromium
def test_the_charts_are_drawn_from_our_echarts_module_redrawn_on_a_change_and_their_tooltips_filled(
    tmp_path, app_env, monkeypatch
):
    """Served by app.py, each chart is our component drawing what the script sent with the
    vendored ECharts module (not Streamlit's element); a filter change redraws it; a heatmap
    cell's tooltip is its template filled with that cell's values, which the mirror confirms."""
    import json
    import re
    from urllib.parse import parse_qsl, urlparse

    from selenium.webdriver.common.by import By
    from streamlit.testing.v1 import AppTest

    from toolkit.ui import asgi, assets

    db = demo_mirror(tmp_path / "mirror.db")
    monkeypatch.setenv("EDT_DB", str(db))
    # one moment for the server and AppTest: an auction ending between the two would change a count
    monkeypatch.setenv("EDT_NOW", datetime.now(timezone.utc).replace(microsecond=0).isoformat())
    monkeypatch.setattr(assets, "served", lambda: True)

    def titles_sent(url: str) -> list[str]:
        """The charts' titles the script sends for the page at `url` (run by AppTest)."""
        at = AppTest.from_file(asgi.SCRIPT, default_timeout=60)
        for name, value in parse_qsl(urlparse(url).query):
            at.query_params[name] = value
        at.run()
        assert not at.exception
        drawn = [json.loads(e.proto.json)[0] for e in at.get("bidi_component") if e.proto.component_name == "edt_chart"]
        return [chart["option"]["title"]["text"] for chart in drawn]

    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        timings._open(driver, f"{base}/?view=trust-flow", 60)
        assert not driver.find_elements(By.CSS_SELECTOR, '[data-testid="stEChartsChart"]')
        first = driver.execute_async_script(_DRAWN_TITLES_JS, assets.ECHARTS_URL)
        assert len(first) == 3 and first == titles_sent(driver.current_url)

        timings._act(driver, timings._type_into("TLDs", ".com", group="Source and type"), 60)
        assert "tld=.com" in driver.current_url
        redrawn = driver.execute_async_script(_DRAWN_TITLES_JS, assets.ECHARTS_URL)
        assert redrawn == titles_sent(driver.current_url) and redrawn[0] != first[0]

        mirror = Mirror(db, readonly=True)
        for item in (0, 5, 20):
            tip = driver.execute_async_script(_TOOLTIP_JS, assets.ECHARTS_URL, 0, item)
            cell = re.fullmatch(r"CF (\d+) · TF (\d+)\n([\d,]+) listings", tip or "")
            assert cell, tip
            cf, tf, shown = cell.group(1), cell.group(2), int(cell.group(3).replace(",", ""))
            search = {"tld": ".com", "tf_min": tf, "tf_max": tf, "cf_min": cf, "cf_max": cf, "per_page": "1"}
            assert shown == mirror.search_domains(search)["meta"]["total"] > 0


# For each option in `arguments[1]`: the parts it asks for that the module `arguments[0]` did not
# draw (a series type, a component, or a component's kind, such as a scrolling legend).
_MISSING_PARTS_JS = """
const done = arguments[arguments.length - 1];
const options = arguments[1];
import(arguments[0]).then((echarts) => {
  const box = document.createElement("div");
  box.style.cssText = "width: 640px; height: 420px";
  document.body.appendChild(box);
  done(options.map((option) => {
    const chart = echarts.init(box);
    chart.setOption(option);
    const model = chart.getModel(), missing = [];
    for (const [key, asked] of Object.entries(option)) {
      if (!["title", "tooltip", "legend", "visualMap", "graphic", "grid", "xAxis", "yAxis"].includes(key)) continue;
      const kinds = (Array.isArray(asked) ? asked : [asked]).map((one) => one.type);
      const drawn = model.findComponents({ mainType: key });
      if (!drawn.length) missing.push(key);
      else if (key === "legend" || key === "visualMap")
        kinds.filter((kind) => kind && !drawn.some((c) => c.subType === kind)).forEach((kind) => missing.push(`${key} ${kind}`));
    }
    for (const series of option.series || []) {
      if (!model.getSeriesByType(series.type).length) missing.push(`series ${series.type}`);
      for (const mark of ["markLine", "markPoint"])
        if (series[mark] && !model.findComponents({ mainType: mark }).length) missing.push(mark);
    }
    chart.dispose();
    return missing;
  }));
});
"""


@needs_chromium
def test_every_chart_the_pages_draw_is_drawn_whole_by_the_apps_echarts_module(tmp_path):
    """The app's ECharts module holds only the parts the app draws (static/build/entry.js): every
    chart of the pages, empty ones included, set in Chromium, has each series type, component
    and kind of component it asks for drawn (ECharts leaves out a part it was not built with)."""
    import shutil
    from datetime import date

    from toolkit.analysis import charts
    from toolkit.bench.app_server import browser
    from toolkit.bench.feed_ingest import folder_server
    from toolkit.ui import assets
    from toolkit.ui.echarts import option

    counts = Mirror(small_demo(tmp_path / "demo.db", 9)).chart_counts({})
    history = chart_history().assign(start_price=[10.0, 10.0, 10.0])
    by_counts = [
        charts.tf_cf_heatmap,
        charts.tf_cf_ratio_bars,
        charts.age_bars,
        charts.first_year_bars,
        charts.snapshots_age_heatmap,
        charts.language_bars,
    ]
    figures = [draw(counts) for draw in by_counts] + [draw(empty_counts()) for draw in by_counts]
    figures += [charts.zone_share_bars(counts, by) for by in ("topic", "source")]
    figures += [
        charts.drop_calendar({date(2026, 3, 5): 4}, date(2026, 3, 1), title="Drops, March 2026"),
        charts.drop_calendar({}, date(2026, 3, 1)),
        charts.price_history(history, currency="USD"),
        charts.price_history(history.iloc[0:0]),
        charts.metric_history(history, jump_at="2026-11-20T07:00:00Z"),
    ]
    options = [option(fig) for fig in figures]
    asked = {s["type"] for o in options for s in o["series"]} | {k for o in options for k in o}
    assert {"heatmap", "bar", "line", "visualMap", "graphic", "legend"} <= asked  # the test sees every kind
    assert any("markLine" in s for o in options for s in o["series"])
    site = tmp_path / "site"
    site.mkdir()
    shutil.copyfile(assets.ECHARTS_FILE, site / "echarts.js")
    (site / "index.html").write_text("<!doctype html><title>charts</title>")

    server, base = folder_server(site)
    try:
        with browser() as driver:
            driver.get(f"{base}/index.html")
            missing = driver.execute_async_script(_MISSING_PARTS_JS, f"{base}/echarts.js", options)
    finally:
        server.shutdown()
    assert len(missing) == len(options)
    assert not [(o["title"]["text"], m) for o, m in zip(options, missing) if m]


@needs_chromium
def test_the_chart_module_bench_prints_each_modules_times_against_the_peer(tmp_path, capsys):
    """`python -m toolkit.bench.chart_module --vs PATH`: a row per module, each time a multiple
    of the peer's (here a copy of the app's own module: the peer's row is 1.00x throughout)."""
    import shutil

    from toolkit.bench import chart_module
    from toolkit.ui import assets

    peer = tmp_path / "peer.esm.min.js"
    shutil.copyfile(assets.ECHARTS_FILE, peer)
    assert chart_module.main(["--vs", str(peer), "--rounds", "1"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| ") and " ms " in line]
    assert [row.split(" | ")[0] for row in rows] == ["| the app's module", "| peer: peer.esm.min.js"]
    times = [[float(ms) for ms in re.findall(r"(\d+) ms", row)] for row in rows]
    assert all(len(row) == 4 and row[0] > 0 and row[1] > 0 for row in times)
    assert rows[1].count("(1.00x)") == 4


@needs_chromium
def test_a_quick_filter_and_the_sort_group_keep_each_change_in_chromium(tmp_path, app_env):
    """A browser keeps a widget's own value over one the server passes it: "Ending in the
    next 24 h" clicked beside the Dates group's 6 went back to 6 on the next page, and the sort
    group, retitled by each change, was drawn closed while still shown open (the second sort
    chosen was lost)."""
    import time

    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    def choose(label: str, text: str):
        def action(driver):
            field = driver.find_element(By.CSS_SELECTOR, f'input[aria-label="{label}"]')
            timings._center(driver, field)
            field.click()
            field.send_keys(Keys.CONTROL, "a")
            field.send_keys(text)
            time.sleep(0.3)  # the menu narrows to the typed option
            return lambda: field.send_keys(Keys.ENTER)

        return action

    def field_value(driver, label: str) -> str:
        return driver.find_element(By.CSS_SELECTOR, f'input[aria-label="{label}"]').get_attribute("value")

    db = demo_mirror(tmp_path / "mirror.db")
    with appcheck.serve_app(appcheck.find_app(), db, tmp_path / "server.log") as base, appcheck.browser() as driver:
        timings._open(driver, f"{base}/?view=explore&ends_within=6", 60)
        assert field_value(driver, "Ends within (hours)") == "6"  # its group opened for the link's filter
        timings._act(driver, timings._click_link('p.edt-quick a[href*="ends_within=24"]'), 60)
        assert field_value(driver, "Ends within (hours)") == "24"
        timings._act(driver, timings._click_link('p.edt-pager a[href*="page=2"]'), 60)
        assert driver.current_url.endswith("?view=explore&ends_within=24&page=2")

        group = next(s for s in driver.find_elements(By.CSS_SELECTOR, "summary") if "Sort, rows per page" in s.text)
        timings._center(driver, group)
        timings._act(driver, lambda _driver: group.click, 60)
        for label, text, expected in (
            ("Sort", "Trust Flow, highest", "sort=-trust_flow"),
            ("Sort", "Bids, highest", "sort=-bids_count"),
            ("Per page", "100", "per_page=100"),
            ("Sort", "Domain, A to Z", "sort=name"),
        ):
            timings._act(driver, choose(label, text), 60)
            assert expected in driver.current_url, (text, driver.current_url)
        assert "sort=name&per_page=100" in driver.current_url and "ends_within=24" in driver.current_url

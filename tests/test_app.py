"""The Streamlit app through `streamlit.testing.v1.AppTest`: every page, driven through its
widgets, checked against the query layer (the app must show what the API would answer)."""

from __future__ import annotations

import html
import json
import re
import shutil
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import parse_qsl, unquote

import pytest

from conftest import small_demo
from streamlit.testing.v1 import AppTest

from toolkit import Mirror
from toolkit.store.schema import connect

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "toolkit" / "ui" / "run.py")  # the page script app.py serves


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("app") / "demo.db"
    small_demo(path, 9)
    return path


@pytest.fixture()
def demo_db(demo_template, tmp_path, monkeypatch) -> Path:
    path = tmp_path / "mirror.db"
    shutil.copy(demo_template, path)
    # The app and every Mirror of the test answer as of one moment: auctions ending while a
    # test runs (several end on the same minute) would make two counts a second apart differ.
    monkeypatch.setenv("EDT_NOW", datetime.now(timezone.utc).replace(microsecond=0).isoformat())
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


def open_groups(at: AppTest, *groups: str, prefix: str = "f:") -> AppTest:
    """Open sidebar groups as a click on their titles does (their widgets are drawn only while open)."""
    for group in groups:
        at.session_state[f"{prefix}group:{group}"] = True
    return at.run()


def groups_open(at: AppTest) -> dict[str, bool]:
    """Sidebar group title -> whether it is drawn open."""
    return {e.label: e.proto.expanded for e in at.sidebar.expander}


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def total_shown(at: AppTest) -> int:
    return int(at.metric[0].value.replace(",", ""))


def url_value(at: AppTest, key: str) -> str:
    value = at.query_params[key]
    return value[-1] if isinstance(value, list) else value


def drawn_html(at: AppTest) -> list[str]:
    """The HTML drawn through `navigation.show_html` (the results tables), in page order."""
    return [json.loads(e.proto.json)["html"] for e in at.get("bidi_component") if e.proto.component_name == "edt_html"]


def results_html(at: AppTest) -> str:
    return next(h for h in drawn_html(at) if 'class="edt-table"' in h)


def names_listed(at: AppTest) -> list[str]:
    """The domain names of the results table, in order (each links to its detail page)."""
    return [unquote(n) for n in re.findall(r'href="\?view=detail&amp;name=([^"]+)"', results_html(at))]


def record_fields(at: AppTest) -> dict[str, str]:
    """The domain page's "Every field" table, field -> shown text."""
    drawn = next(h for h in drawn_html(at) if "edt-fields" in h and "<th>field</th>" in h)  # not the comparables
    return {html.unescape(k): html.unescape(v) for k, v in re.findall(r"<tr><td>(.*?)</td><td>(.*?)</td></tr>", drawn)}


def headers(at: AppTest) -> list[str]:
    return [re.sub(r"<[^>]+>|[▲▼]", "", h).strip() for h in re.findall(r"<th[^>]*>(.*?)</th>", results_html(at))]


def header_link(at: AppTest, title: str) -> dict[str, str]:
    """The query of the link behind a column title."""
    for head in re.findall(r"<th[^>]*>(.*?)</th>", results_html(at)):
        if re.sub(r"<[^>]+>|[▲▼]", "", head).strip() == title:
            href = html.unescape(re.search(r'href="\?([^"]*)"', head).group(1))
            return dict(parse_qsl(href))
    raise AssertionError(f"no column titled {title}")


def cells(at: AppTest) -> list[list[str]]:
    rows = re.findall(r"<tr>(.*?)</tr>", results_html(at).split("<tbody>", 1)[1])
    return [[html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]


def all_link(at: AppTest) -> dict[str, str]:
    """The query of a table's "open them all in ..." link."""
    return dict(parse_qsl(html.unescape(re.search(r'href="\?([^"]*)">open them all', results_html(at)).group(1))))


def search_of(link: dict[str, str]) -> dict[str, str]:
    """A link's search: its query without the page it opens and the plan."""
    return {k: v for k, v in link.items() if k not in ("view", "plan")}


def figure(at: AppTest, n: int = 0) -> dict:
    """The n-th Plotly figure drawn (only the opt-in point cloud is Plotly)."""
    return json.loads(at.get("plotly_chart")[n].proto.spec)


def chart(at: AppTest, n: int = 0) -> dict:
    """The n-th chart drawn, as its ECharts option."""
    return json.loads(at.get("echarts_chart")[n].proto.spec)


def charts_titled(at: AppTest) -> dict[str, dict]:
    """Every ECharts option drawn, by its title up to " (" (the counts in it vary)."""
    drawn = [chart(at, n) for n in range(len(at.get("echarts_chart")))]
    return {c["title"]["text"].split(" (")[0]: c for c in drawn}


def heatmap_cells(option: dict) -> dict[tuple[str, str], int]:
    """A heatmap's {(x label, y label): count} from its sparse cells (the count: the tooltip's last value)."""
    x, y = option["xAxis"]["data"], option["yAxis"][0]["data"]
    return {(x[item[0]], y[item[1]]): int(item[-1].replace(",", "")) for item in option["series"][0]["data"]}


def test_an_empty_mirror_opens_on_the_first_run_panel_and_loads_the_demo(tmp_path, monkeypatch):
    path = tmp_path / "fresh" / "mirror.db"
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EDT_NOW", datetime.now(timezone.utc).replace(microsecond=0).isoformat())  # as demo_db
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
    open_groups(at, "seo")
    at.sidebar.number_input(key="f:tf_min").set_value(20).run()
    at.sidebar.selectbox(key="f:type").set_value("auction").run()
    no_exception(at)
    expected = Mirror(demo_db).search_domains({"tf_min": "20", "type": "auction"})
    assert total_shown(at) == expected["meta"]["total"] > 0
    assert url_value(at, "tf_min") == "20" and url_value(at, "type") == "auction"  # a bookmarkable URL
    assert names_listed(at) == [r["name"] for r in expected["data"]]


def test_a_closed_filter_group_draws_no_widgets_and_keeps_its_filters_in_force(demo_db):
    mirror = Mirror(demo_db)
    at = app()
    no_exception(at)
    opened = groups_open(at)
    assert opened["Source and type"] and not opened["SEO metrics"] and not opened["Price"]
    assert len(at.sidebar.number_input) == 0  # TF, CF, DA, price, age...: all in closed groups, none built
    bookmark = app(tf_min="20")  # a filter arriving from outside opens its group
    assert groups_open(bookmark)["SEO metrics"]
    assert bookmark.sidebar.number_input(key="f:tf_min").value == 20
    bookmark.session_state["f:group:seo"] = False  # the user closes the group
    bookmark.run()
    with pytest.raises(KeyError):
        bookmark.sidebar.number_input(key="f:tf_min")
    assert "Min Trust Flow: 20" in [c.value for c in bookmark.sidebar.caption]  # said under the closed group
    expected = mirror.search_domains({"tf_min": "20", "tld": ".com"})["meta"]["total"]
    bookmark.sidebar.text_input(key="f:tld").set_value(".com").run()  # a change elsewhere
    no_exception(bookmark)
    assert url_value(bookmark, "tf_min") == "20" and total_shown(bookmark) == expected > 0
    assert not groups_open(bookmark)["SEO metrics"]  # stays closed


def test_the_table_leads_with_the_whole_name_and_reads_at_a_glance(demo_db):
    at = app(sort="-effective_price")
    no_exception(at)
    assert headers(at) == ["Domain", "Price", "EUR", "Bids", "Ends in", "TF", "CF", "DA", "RD", "Age", "Score",
                           "Source", "TLD", "Buy"]  # fmt: skip (no value column before an appraisal)
    expected = Mirror(demo_db).search_domains({"sort": "-effective_price"})["data"]
    rows = cells(at)
    first = expected[0]
    assert rows[0][0] == first["name"]  # whole, never cut
    assert rows[0][1] == f"{first['effective_price']:,.0f} {first['currency']}" or rows[0][1] == (
        f"{first['effective_price']:,.2f} {first['currency']}")
    eur = first["effective_price_eur"]
    assert eur is not None and rows[0][2] in (f"{eur:,.0f} EUR", f"{eur:,.2f} EUR")  # beside the native price
    assert not {"None", "nan", "NaN", "<NA>"} & {cell for row in rows for cell in row}
    blank_tf = [row for row, record in zip(rows, expected) if record["trust_flow"] is None]
    assert blank_tf and all(row[5] == "" for row in blank_tf)  # an absent metric is a blank cell
    ends = [row[4] for row, record in zip(rows, expected) if record["auction_end_date"]]
    assert ends and all(re.fullmatch(r"\d+d \d+h|\d+h \d+m|\d+m", e) for e in ends)  # a countdown, not a stamp


def test_a_column_title_sorts_every_result_not_the_page(demo_db):
    at = app(tld=".fr,.de")
    no_exception(at)
    query = header_link(at, "Price")
    assert query["sort"] == "-effective_price" and query["tld"] == ".fr,.de" and "page" not in query
    sorted_at = app(**{k: v for k, v in query.items()})
    no_exception(sorted_at)
    top = Mirror(demo_db).search_domains({"tld": ".fr,.de", "sort": "-effective_price", "per_page": "100"})["data"]
    assert names_listed(sorted_at) == [r["name"] for r in top[:50]]
    highest = max(r["effective_price"] for r in Mirror(demo_db).export_rows({"tld": ".fr,.de"})
                  if r["effective_price"] is not None)  # fmt: skip
    assert top[0]["effective_price"] == highest  # the mirror's highest, not the page's
    assert header_link(sorted_at, "Price")["sort"] == "effective_price"  # a second click turns it around
    assert sorted_at.selectbox(key="sort").value == "-effective_price"
    assert "Price, highest first" in sorted_at.selectbox(key="sort").format_func("-effective_price")


def test_a_bookmarked_search_reopens_with_its_filters_sort_and_page(demo_db):
    at = app(tld=".fr,.de", sort="-trust_flow", page="2")
    no_exception(at)
    expected = Mirror(demo_db).search_domains({"tld": ".fr,.de", "sort": "-trust_flow", "page": "2", "per_page": "50"})
    assert total_shown(at) == expected["meta"]["total"]
    assert at.sidebar.text_input(key="f:tld").value == ".fr,.de"
    assert names_listed(at) == [r["name"] for r in expected["data"]]


def test_a_filter_change_goes_back_to_page_one(demo_db):
    at = app(page="5")
    no_exception(at)
    assert at.caption[0].value.startswith("Page 5 of")
    at.sidebar.text_input(key="f:tld").set_value(".fr").run()
    no_exception(at)
    expected = Mirror(demo_db).search_domains({"tld": ".fr"})
    assert at.caption[0].value.startswith(f"Page 1 of {expected['meta']['last_page']}")
    assert names_listed(at) == [r["name"] for r in expected["data"]]
    assert "page" not in at.query_params
    at.button(key="to:Next ›").click().run()
    assert at.caption[0].value.startswith("Page 2 of") and url_value(at, "page") == "2"


def test_a_bookmark_past_the_last_page_opens_the_last_page(demo_db):
    at = app(tld=".fr", page="999")
    no_exception(at)
    last = Mirror(demo_db).search_domains({"tld": ".fr"})["meta"]["last_page"]
    assert at.caption[0].value.startswith(f"Page {last} of {last}") and names_listed(at)


def test_the_column_chooser_is_kept_in_the_url(demo_db):
    at = app()
    at.multiselect(key="cols").set_value(["name", "tf", "language"]).run()
    no_exception(at)
    assert headers(at) == ["Domain", "TF", "Lang"]
    assert url_value(at, "cols") == "name,tf,language"
    again = app(cols="name,tf,language")
    assert headers(again) == ["Domain", "TF", "Lang"]


def test_the_listing_extension_filters_reach_the_sidebar_and_the_query_layer(demo_db):
    at = open_groups(app(), "names", "seo")
    at.sidebar.checkbox(key="f:no_numbers").check().run()
    at.sidebar.checkbox(key="f:no_dashes").check().run()
    at.sidebar.number_input(key="f:length_max").set_value(8).run()
    at.sidebar.text_input(key="f:not_contains").set_value("shop,online").run()
    at.sidebar.number_input(key="f:tf_cf_ratio_min").set_value(0.5).run()
    no_exception(at)
    params = {"no_numbers": "1", "no_dashes": "1", "length_max": "8", "not_contains": "shop,online",
              "tf_cf_ratio_min": "0.5"}  # fmt: skip
    expected = Mirror(demo_db).search_domains(params)
    assert 0 < total_shown(at) == expected["meta"]["total"] < Mirror(demo_db).search_domains({})["meta"]["total"]
    for name in names_listed(at):
        label = name.split(".")[0]
        assert len(label) <= 8 and "-" not in label and not any(c.isdigit() for c in label)
        assert "shop" not in name and "online" not in name


def test_the_csv_holds_exactly_the_rows_the_button_counts(demo_db):
    from toolkit.ui import pages

    at = app(tld=".fr")
    no_exception(at)
    button = at.get("download_button")[0]
    total = Mirror(demo_db).search_domains({"tld": ".fr"})["meta"]["total"]
    assert f"Download all {total:,} rows (CSV)" in button.proto.label
    mirror = Mirror(demo_db, readonly=True)
    data = pages.csv_of_all({"tld": ".fr"}, mirror=mirror, plan="enterprise", pending=False)
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(data.decode())))
    assert len(rows) == total and {r["tld"] for r in rows} == {".fr"}
    assert rows[0]["name"] and "historical_traffic" not in rows[0]


def test_a_rerun_never_counts_the_whole_mirror(demo_db, monkeypatch):
    """Mirror.status() is six counts over every row (a second on the full demo): no page but
    Sync may call it, and a rerun asks emptiness from the cache."""
    calls = []
    original = Mirror.status
    monkeypatch.setattr(Mirror, "status", lambda self: calls.append(1) or original(self))
    at = open_groups(app(), "seo")
    at.sidebar.number_input(key="f:tf_min").set_value(10).run()
    no_exception(at)
    assert calls == []
    app("sync")
    assert len(calls) == 1


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
    at = app("detail", name=name)
    no_exception(at)
    assert at.subheader[0].value == name
    assert changes > 1
    history = charts_titled(at)["Price history"]
    assert max(len(s["data"]) for s in history["series"]) == changes  # every history row is charted
    assert history["xAxis"]["type"] == "time"
    assert history["yAxis"][1]["minInterval"] == 1 and history["yAxis"][1]["interval"] >= 1  # whole bids
    fields = record_fields(at)
    assert "first_seen_at" in fields and "web.archive.org/web/*/" + name in at.markdown[0].value
    assert "None" not in fields.values() and "—" in fields.values()  # absent values are dashes
    assert fields["name"] == name
    # First and last seen as people read them, with no "T07:00:00Z" for Markdown to take for
    # an emoji name (Streamlit would load its emoji code for the page).
    seen = next(c.value for c in at.caption if c.value.startswith("First seen"))
    first = datetime.fromisoformat(fields["first_seen_at"].replace("Z", "+00:00"))
    assert seen.startswith(f"First seen {first:%d %b %Y %H:%M} UTC, last seen ")
    assert not re.search(r":\w+:", " ".join(e.value for e in [*at.caption, *at.markdown]))
    old = app("detail", id=str(listing_id))  # a bookmark by listing id still opens
    no_exception(old)
    assert old.subheader[0].value == name and url_value(old, "name") == name


def test_domain_detail_finds_a_name_by_part_and_shows_every_listing_of_it(demo_db):
    from toolkit.store.writer import save_listings

    mirror = Mirror(demo_db)
    record = mirror.search_domains({"has_bids": "1", "per_page": "1"})["data"][0]
    other = {**record, "id": 99_000_001, "source": "sedo" if record["source"] != "sedo" else "dynadot",
             "price": 777.0, "max_bid": None, "effective_price": 777.0, "trust_flow": None}  # fmt: skip
    save_listings(mirror.connection(), [other], origin="sync")
    label = record["name"].split(".")[0]
    at = app("detail", name=label[: max(3, len(label) - 2)])
    no_exception(at)
    picker = at.selectbox(key="detail_pick")
    assert record["name"] in picker.options
    picker.set_value(record["name"]).run()
    no_exception(at)
    assert url_value(at, "name") == record["name"]
    assert len(at.table) == 1 and record_fields(at)["name"] == record["name"]  # side by side, then the fields
    side = at.table[0].value
    assert list(side.columns) == [f"{r['source']} #{r['id']}" for r in
                                  (Mirror(demo_db).get_domain(i)["data"] for i, _, _ in
                                   Mirror(demo_db).listings_named(record["name"]))]  # fmt: skip
    assert side.loc["Price", f"{other['source']} #{other['id']}"] == f"777 {other['currency']}"
    assert side.loc["Trust Flow", f"{other['source']} #{other['id']}"] == "—"


def test_pending_delete_names_are_explorable_with_filters_and_suffix_families(demo_db):
    at = app("pending")
    no_exception(at)
    mirror = Mirror(demo_db)
    assert total_shown(at) == mirror.search_pending_delete({})["meta"]["total"] > 0
    assert headers(at)[:3] == ["Domain", "Drops", "Status"] and "TF" in headers(at)
    at.sidebar.text_input(key="p:tld").set_value("uk").run()
    no_exception(at)
    expected = mirror.search_pending_delete({"tld": "uk"})
    tlds = {r["tld"] for r in mirror.search_pending_delete({"tld": "uk", "per_page": "200"})["data"]}
    assert "co.uk" in tlds and all(t == "uk" or t.endswith(".uk") for t in tlds)  # uk: every .uk suffix
    assert total_shown(at) == expected["meta"]["total"] > 0
    assert names_listed(at) == [r["domain"] for r in expected["data"]]
    at.sidebar.multiselect(key="p:status").set_value(["pendingDelete"]).run()
    no_exception(at)
    assert total_shown(at) == mirror.search_pending_delete({"tld": "uk", "status": "pendingDelete"})["meta"]["total"]
    query = header_link(at, "Domain")
    assert query["sort"] == "domain" and query["view"] == "pending"


def test_moving_from_pending_delete_to_explore_drops_the_filters_explore_refuses(demo_db):
    at = app("pending", source="czds-daily", tld="uk", status="pendingDelete")
    no_exception(at)
    at.sidebar.radio(key="view").set_value("explore").run()
    no_exception(at)
    assert not at.error
    assert "source" not in at.query_params and "status" not in at.query_params
    assert total_shown(at) == Mirror(demo_db).search_domains({"tld": "uk"})["meta"]["total"]


def test_the_calendar_reopens_from_its_url_and_its_day_menu_follows_the_filter(demo_db):
    mirror = Mirror(demo_db)
    month = mirror.now().date().replace(day=1)
    at = app("calendar", dates="drops", cal_tld="uk", month=f"{month:%Y-%m}")
    no_exception(at)
    assert at.radio(key="cal_kind").value == "drops" and at.text_input(key="cal_tld").value == "uk"
    frame = mirror.pending_df({"include_past": "1", "tld": "uk"}, columns=["estimated_drop_date"])
    in_month = frame["estimated_drop_date"].dropna().str.startswith(month.strftime("%Y-%m"))
    assert any(c.value.startswith(f"{int(in_month.sum()):,} domains in") for c in at.caption)
    day_menu = next(s for s in at.selectbox if str(s.key).startswith("cal_day"))
    counts = frame["estimated_drop_date"].dropna().value_counts()
    for option in day_menu.options:  # every label counts the filtered drops of its day
        day, shown = re.match(r"\w{3} (\d{2}) \w{3} \(([\d,]+)\)", option).groups()
        assert int(shown.replace(",", "")) == counts[f"{month:%Y-%m}-{day}"]


def test_the_streamlit_config_hides_the_developer_toolbar_for_every_way_of_starting():
    import tomllib

    from toolkit.ui import STREAMLIT_OPTIONS, streamlit_flags

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    flat = {f"{section}.{key}": value for section, values in config.items() for key, value in values.items()}
    assert flat == STREAMLIT_OPTIONS and flat["client.toolbarMode"] == "viewer"
    assert "--client.toolbarMode=viewer" in streamlit_flags()


def test_trust_flow_page_counts_all_the_filtered_rows_without_webgl(demo_db):
    at = app("trust-flow", source="dynadot")
    no_exception(at)
    rows = Mirror(demo_db).domains_df({"source": "dynadot"}, columns=["trust_flow", "citation_flow"])
    both = rows.dropna()
    in_grid = both[both["trust_flow"].between(0, 100) & both["citation_flow"].between(0, 100)]
    heatmap = charts_titled(at)["Trust Flow vs Citation Flow"]
    assert heatmap["series"][0]["type"] == "heatmap"
    cells = heatmap_cells(heatmap)  # (CF, TF) -> listings
    assert sum(cells.values()) == len(in_grid) > 0  # every matching row with both, not a sample
    tf, cf = in_grid.iloc[0]
    assert cells[(str(int(cf)), str(int(tf)))] == ((in_grid["trust_flow"] == tf) & (in_grid["citation_flow"] == cf)).sum()
    assert not at.get("plotly_chart")  # no Plotly (nor WebGL) by default: the point cloud is opt-in
    lines = [m[0] if isinstance(m, list) else m for m in heatmap["series"][0]["markLine"]["data"]]
    assert any(m.get("name") == "TF = CF" for m in lines)
    assert at.caption[0].value.startswith(f"Counts over all {len(rows):,} matching listings (not a sample); "
                                          f"{len(rows) - len(in_grid):,} without both")  # fmt: skip


def test_a_tf_cf_region_lists_its_domains_and_opens_in_explore(demo_db):
    at = app("trust-flow", source="dynadot", tf_min="5")
    at.slider(key="region_tf").set_value((0, 30)).run()
    at.slider(key="region_cf").set_value((20, 60)).run()
    no_exception(at)
    assert url_value(at, "tf_range") == "0-30" and url_value(at, "cf_range") == "20-60"  # a bookmark keeps it
    region = {"source": "dynadot", "tf_min": "5", "tf_max": "30", "cf_min": "20", "cf_max": "60"}
    expected = Mirror(demo_db).search_domains({**region, "sort": "-trust_flow", "per_page": "25"})
    said = next(h for h in drawn_html(at) if "matching listings in" in h)
    assert said.startswith(f"<p><b>{expected['meta']['total']:,}</b> matching listings in TF 5–30, CF 20–60")
    link = dict(parse_qsl(html.unescape(re.search(r'href="\?([^"]+)"', said).group(1))))
    assert link == {"view": "explore", **region, "sort": "-trust_flow"}
    shown = results_html(at)
    assert [html.unescape(n) for n in re.findall(r'class="edt-name">([^<]+)<', shown)] == \
        [r["name"] for r in expected["data"]]  # fmt: skip
    again = app("trust-flow", source="dynadot", tf_min="5", tf_range="0-30", cf_range="20-60")
    assert again.slider(key="region_tf").value == (0, 30) and again.slider(key="region_cf").value == (20, 60)


def test_the_zone_share_is_by_topic_or_by_source(demo_db):
    at = app("trust-flow", source="dynadot")
    counts = Mirror(demo_db).chart_counts({"source": "dynadot"})
    topics = next(c for title, c in charts_titled(at).items() if title.startswith("CF far"))
    shares = {label: share for share, label, *_ in topics["series"][0]["data"]}
    inside, outside = counts.zone_by_topic["Business"]
    assert shares["Business"] == pytest.approx(100 * inside / (inside + outside))
    at.radio(key="zone_by").set_value("source").run()
    no_exception(at)
    assert url_value(at, "zone_by") == "source"
    by_source = next(c for title, c in charts_titled(at).items() if title.startswith("CF far"))
    assert by_source["yAxis"][0]["data"] == ["dynadot"] and [i[1] for i in by_source["series"][0]["data"]] == ["dynadot"]


def test_the_sampled_points_to_lasso_are_opt_in(demo_db):
    at = app("trust-flow", source="dynadot")
    at.toggle(key="tf_points").set_value(True).run()
    no_exception(at)
    assert url_value(at, "points") == "1"
    rows = Mirror(demo_db).domains_df({"source": "dynadot"}, columns=["trust_flow", "citation_flow"])
    scatter = [t for n in range(len(at.get("plotly_chart"))) for t in figure(at, n)["data"] if t["type"] == "scattergl"]
    assert sum(len(t.get("x", [])) for t in scatter) == int(rows.notna().all(axis=1).sum()) > 0


def test_archive_page_counts_all_the_filtered_rows(demo_db):
    at = app("archive", language="FR")
    no_exception(at)
    assert len(at.get("echarts_chart")) == 4 and not at.get("plotly_chart")
    rows = Mirror(demo_db).domains_df({"language": "FR"}, columns=["age", "wayback_snapshots"])
    assert at.caption[0].value.startswith(f"Counts over all {len(rows):,} matching listings (not a sample)")
    titled = charts_titled(at)
    assert set(titled) == {"Domain age", "First Wayback snapshot", "Wayback snapshots vs age", "Language"}
    per_age = {int(age): n for age, n in titled["Domain age"]["series"][0]["data"]}
    expected = rows["age"].dropna().astype(int).value_counts()
    assert {a: n for a, n in per_age.items() if n} == expected.to_dict()
    snapshots = heatmap_cells(titled["Wayback snapshots vs age"])
    assert sum(snapshots.values()) == int(rows.notna().all(axis=1).sum())


def test_drop_calendar_counts_the_months_pending_drops(demo_db):
    at = app("calendar")
    no_exception(at)
    at.radio(key="cal_kind").set_value("drops").run()
    no_exception(at)
    assert url_value(at, "dates") == "drops"  # the calendar's settings are in the URL
    mirror = Mirror(demo_db)
    month = mirror.now().date().replace(day=1)
    frame = mirror.pending_df({"include_past": "1"}, columns=["estimated_drop_date"])
    in_month = frame["estimated_drop_date"].dropna().str.startswith(month.strftime("%Y-%m")).sum()
    assert any(c.value.startswith(f"{in_month:,} domains in") for c in at.caption)
    assert at.get("download_button"), "the .ics download is offered"
    assert any("window" in c.value and "most likely day" in c.value for c in at.caption)
    assert not at.dataframe  # the day's drops are Pending-delete's table, not a grid
    day = url_value(at, "day")
    on_day = {"include_past": "1", "drop_date_from": day, "drop_date_to": day}
    expected = mirror.search_pending_delete({**on_day, "per_page": "100"})
    assert names_listed(at) == [r["domain"] for r in expected["data"]] and names_listed(at)
    assert headers(at)[:3] == ["Domain", "Drops", "Window"]
    for row, record in zip(cells(at), expected["data"]):  # each drop's window, from the record's own bounds
        start, end = (date.fromisoformat(record[k]) for k in ("drop_window_start", "drop_window_end"))
        assert row[2] == (f"{start:%d %b}" if start == end else f"{start:%d %b} – {end:%d %b} ({(end - start).days + 1} days)")
    link = all_link(at)
    assert link["view"] == "pending" and (link["drop_date_from"], link["drop_date_to"]) == (day, day)
    assert mirror.search_pending_delete(search_of(link))["meta"]["total"] == expected["meta"]["total"]
    opened = app("pending", **search_of(link))  # the page it opens counts the same drops
    no_exception(opened)
    assert total_shown(opened) == expected["meta"]["total"]


def test_the_calendar_lists_the_days_auctions_as_explores_table_soonest_first(demo_db):
    mirror = Mirror(demo_db)
    at = app("calendar")
    no_exception(at)
    day = url_value(at, "day")
    ends = {"ends_after": day, "ends_before": (date.fromisoformat(day) + timedelta(days=1)).isoformat()}
    expected = mirror.search_domains({**ends, "sort": "auction_end_date", "per_page": "100"})
    assert expected["meta"]["total"] > 0
    assert names_listed(at) == [r["name"] for r in expected["data"]]
    assert headers(at)[:2] == ["Domain", "Price"] and "TF" in headers(at)
    shown = len(expected["data"])
    summary = "All" if expected["meta"]["total"] == shown else f"The first {shown} of {expected['meta']['total']:,}"
    assert summary in results_html(at)
    link = all_link(at)  # opens every one of them in Explore, soonest first
    assert link["view"] == "explore" and link["sort"] == "auction_end_date"
    assert mirror.search_domains(search_of(link))["meta"]["total"] == expected["meta"]["total"]
    opened = app("explore", **search_of(link))
    no_exception(opened)
    assert total_shown(opened) == expected["meta"]["total"] and names_listed(opened)[0] == expected["data"][0]["name"]


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


def test_the_watchlist_lists_new_matches_and_marks_them_seen_only_when_asked(demo_db):
    from datetime import timedelta

    from toolkit.sync import watchlist as saved

    mirror = Mirror(demo_db)
    saved.save_search(mirror, "french", {"tld": ".fr"})
    conn = mirror.connection()
    with conn:  # the search was saved a day before the demo's latest arrivals
        conn.execute("UPDATE saved_searches SET created_at = ?",
                     [(mirror.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")])  # fmt: skip
    entry = saved.saved_searches(mirror)[0]
    new = entry["new_matches"]
    assert new > 0
    at = app("watchlist")
    no_exception(at)
    expected = mirror.search_domains({**saved.new_matches_params(entry), "sort": "-first_seen_at", "per_page": "100"})
    assert names_listed(at) == [r["name"] for r in expected["data"]]  # the new names themselves
    at.button(key="open:french").click().run()
    no_exception(at)
    assert url_value(at, "tld") == ".fr"
    assert saved.saved_searches(mirror)[0]["new_matches"] == new  # opening them did not mark them seen
    at = app("watchlist")
    at.button(key="seen:french").click().run()
    no_exception(at)
    assert saved.saved_searches(mirror)[0]["new_matches"] == 0


def test_the_watchlist_watches_names_and_shows_their_stage(demo_db):
    """Names typed on the page are watched (a bad one refused, nothing added); a checked name
    shows its stage, the window expected next and where the mirror lists it."""
    from toolkit.sync import watched_names as watched

    at = app("watchlist")
    no_exception(at)
    at.text_area(key="watch_names_input").input("www.example.com, kettleharbor.nu")
    at.button(key="FormSubmitter:watch_names-Watch").click().run()
    no_exception(at)
    assert any("is a subdomain; watch example.com; nothing was added" in e.value for e in at.error)
    mirror = Mirror(demo_db)
    assert watched.watched_names(mirror) == []
    listed = mirror.search_domains({"per_page": "1"})["data"][0]["name"]
    at.text_area(key="watch_names_input").input(f"kettleharbor.nu\n{listed}")
    at.button(key="FormSubmitter:watch_names-Watch").click().run()
    no_exception(at)
    assert [r["name"] for r in watched.watched_names(mirror)] == sorted(["kettleharbor.nu", listed])
    seen = watched.Observation("kettleharbor.nu", "2026-11-20T06:30:00Z", statuses=["serverHold"],
                               expires_at="2026-11-01T00:00:00Z", pending="serverHold")  # fmt: skip
    from toolkit.ingest.lifecycle import predict_drop_window

    watched.record_observation(mirror, seen, predict=predict_drop_window)
    watched.queue_listed(mirror)
    at = app("watchlist")
    no_exception(at)
    shown = next(d.value for d in at.dataframe if "stage" in d.value.columns).set_index("name")
    window, _ = predict_drop_window("nu", "serverHold", date(2026, 11, 20))
    assert shown.loc["kettleharbor.nu", "stage"] == "expired"
    assert shown.loc["kettleharbor.nu", "expected"] == f"{window.start} – {window.end}"
    assert shown.loc[listed, "listed"].startswith(mirror.search_domains({"per_page": "1"})["data"][0]["source"])


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


@pytest.mark.parametrize("view", ["explore", "pending", "detail", "trust-flow", "archive", "calendar", "watchlist",
                                  "sync"])  # fmt: skip
def test_no_page_writes_what_markdown_takes_for_an_emoji_name(demo_db, view):
    """`:00:` (as in `T07:00:00Z`) reads as an emoji shortcode: Streamlit then loads its emoji
    code (260 kB) for the page. Text of every Markdown element, the sidebar's too."""
    name = Mirror(demo_db).search_domains({"has_bids": "1", "per_page": "1"})["data"][0]["name"]
    at = app(view, **({"name": name} if view == "detail" else {}))
    no_exception(at)
    kinds = ("markdown", "caption", "header", "subheader", "title", "info", "warning", "success", "error")
    texts = [e.value for kind in kinds for e in at.get(kind)]
    assert texts and not [t for t in texts if re.search(r":[\w+-]+:", t)]


def test_the_sync_button_runs_a_job_against_the_remote(demo_db, demo_template, tmp_path, monkeypatch):
    from toolkit.serve.server import BackgroundServer, create_app

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


def test_the_sync_page_fetches_the_free_feeds_without_a_key(demo_db, tmp_path, monkeypatch):
    from test_feeds import NASK, Publisher

    publisher = Publisher()
    try:
        publisher.publish("/pl.txt", (NASK / "2022-07-05.txt").read_bytes(), datetime(2026, 8, 21, tzinfo=timezone.utc))
        config = tmp_path / "feeds.toml"
        config.write_text(f'[feeds.nask-pl]\nurl = "{publisher.url}/pl.txt"\n')
        monkeypatch.setenv("EDT_CONFIG", str(config))
        monkeypatch.setenv("EDT_BUDGET_FILE", str(tmp_path / "budget.sqlite"))
        at = app("sync")
        no_exception(at)
        assert "nask-pl" in at.multiselect(key="feeds_pick").value  # the enabled feeds are chosen
        at.multiselect(key="feeds_pick").set_value(["nask-pl"])
        at.button(key="feeds_run").click().run()
        no_exception(at)
    finally:
        publisher.close()
    stored = connect(str(demo_db)).execute("SELECT count(*) FROM pending_delete WHERE source = 'droplist'").fetchone()[0]
    assert stored > 1_500
    assert [s.value for s in at.success] == [f"nask-pl: ok: {stored:,} rows ({stored:,} new, 0 updated)"]
    feeds = at.dataframe[-1].value
    assert feeds.set_index("feed").loc["nask-pl", "state"] == "fresh"


def test_a_pending_delete_name_opens_its_own_detail(demo_db):
    mirror = Mirror(demo_db)
    row = mirror.search_pending_delete({"per_page": "1"})["data"][0]
    assert not mirror.listings_named(row["domain"])  # listed nowhere: only the inventory knows it
    at = app("pending")
    no_exception(at)
    assert names_listed(at)[0] == row["domain"]
    detail = app("detail", name=row["domain"])
    no_exception(detail)
    assert detail.subheader[0].value == row["domain"]
    assert detail.metric[1].value == row["whois_status"]
    assert detail.metric[2].value.startswith("—") or detail.metric[2].value.split(" / ")[0].isdigit()


def test_the_domain_page_shows_comparable_results(tmp_path, monkeypatch):
    from test_results import comps_mirror

    db, _ = comps_mirror(tmp_path)
    monkeypatch.setenv("EDT_DB", str(db))
    monkeypatch.setenv("EDT_NOW", "2026-08-21T09:00:00+00:00")
    at = app("detail", name="kettleharbor.com")
    no_exception(at)
    assert "Comparable results" in [h.value for h in at.subheader]
    comps = next(h for h in drawn_html(at) if "for, and why it is alike" in h)
    assert comps.index("kettlehouse.com") < comps.index("harborkettle.net")
    assert "shares &#x27;kettle&#x27;" in comps and "ended 2026-08-20 on dynadot" in comps


def test_the_domain_page_shows_the_price_range_and_its_coverage(tmp_path, monkeypatch):
    from toolkit.analysis.appraise import appraise, coverage_note
    from toolkit.demo import load_demo

    db = tmp_path / "lapse.db"
    conn = connect(str(db))
    load_demo(conn, scale="small", days=21)
    conn.close()
    with Mirror(db) as mirror:
        summary = appraise(mirror)
        listing_id, low, high = mirror.connection().execute(
            "SELECT id, value_low, value_high FROM listings WHERE value_low IS NOT NULL LIMIT 1").fetchone()
        name = mirror.connection().execute("SELECT name FROM listings WHERE id = ?", [listing_id]).fetchone()[0]
    monkeypatch.setenv("EDT_DB", str(db))
    at = app("detail", name=name, id=str(listing_id))
    no_exception(at)
    assert f"{low:,.0f} – {high:,.0f}" in [m.value for m in at.metric]
    assert any(c.value.startswith(coverage_note(summary)) for c in at.caption)
    # The table: the range beside the price once appraised, the best deals first, the coverage under it.
    at = app(sort="-deal", cols="name,price,eur,value,deal")
    no_exception(at)
    assert headers(at)[:5] == ["Domain", "Price", "EUR", "Value (EUR)", "Value/price"]
    with Mirror(db) as mirror:
        best = mirror.search_domains({"sort": "-deal", "per_page": "50"})["data"]
    assert names_listed(at) == [r["name"] for r in best]
    first = best[0]
    value = first["live_mid"] if first["live_mid"] is not None else first["value_mid"]  # an auction with bids: live
    assert f"×{value / first['effective_price_eur']:,.1f}" in results_html(at)
    assert any(c.value.startswith(f"Value: {coverage_note(summary)}") for c in at.caption)
    assert {"Value (EUR)", "Live (EUR)"} <= set(headers(app()))  # shown by default once the mirror has ranges
    # An auction with bids: its live estimate beside its range, on its page and in the table.
    with Mirror(db) as mirror:
        bid_id, bid_name, live_low, live_high = mirror.connection().execute(
            "SELECT id, name, live_low, live_high FROM listings WHERE live_mid IS NOT NULL AND value_low IS NOT NULL "
            "LIMIT 1").fetchone()  # fmt: skip
        by_live = mirror.search_domains({"sort": "-live_mid", "per_page": "50"})["data"]
    at = app("detail", name=bid_name, id=str(bid_id))
    no_exception(at)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Live estimate (EUR, 80% range, given the bidding)"] == f"{live_low:,.0f} – {live_high:,.0f}"
    assert "Value (EUR, 80% range)" in shown
    at = app(sort="-live_mid", cols="name,live")
    assert names_listed(at) == [r["name"] for r in by_live]
    assert f"{by_live[0]['live_low']:,.0f} – {by_live[0]['live_high']:,.0f}" in results_html(at)

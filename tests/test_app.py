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

from conftest import feeds_only_mirror, LAPSE_TODAY, lapse_now, small_demo
from streamlit.testing.v1 import AppTest

from toolkit import Mirror
from toolkit.sources import SOURCES
from toolkit.store.labels import STATUS_WORDS
from toolkit.store.schema import connect

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "toolkit" / "ui" / "script" / "page_script.py")  # the page script app.py serves


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
    return [
        json.loads(e.proto.json)[0]["html"] for e in at.get("bidi_component") if e.proto.component_name == "edt_html"
    ]


def results_html(at: AppTest) -> str:
    return next(h for h in drawn_html(at) if 'class="edt-table"' in h)


def names_listed(at: AppTest) -> list[str]:
    """The domain names of the results table, in order (each links to its detail page)."""
    return [unquote(n) for n in re.findall(r'href="\?view=detail&amp;name=([^"&]+)[&"]', results_html(at))]


def record_fields(at: AppTest) -> dict[str, tuple[str, str]]:
    """The domain page's "Every field" table: field name (on hover) -> (its label, the shown text)."""
    drawn = next(h for h in drawn_html(at) if "edt-fields" in h and '<th colspan="2">' in h)
    rows = re.findall(r'<tr><td title="([^":]*)[^"]*">(.*?)</td><td>(.*?)</td></tr>', drawn)
    return {html.unescape(name): (html.unescape(label), html.unescape(value)) for name, label, value in rows}


def html_rows(drawn: str) -> list[list[str]]:
    """The cells of a drawn table's body rows, as text."""
    body = drawn.split("<tbody>", 1)[1]
    return [
        [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr>(.*?)</tr>", body)
    ]


def follow(at: AppTest, href: str) -> AppTest:
    """A plain click on a link the pages draw (`?page=2`): its query written over the URL, then a
    rerun, as the tables' component does in place (navigation.follow_link)."""
    from toolkit.ui.navigation import follow_link

    after = follow_link(href, {k: url_value(at, k) for k in at.query_params})
    for key in list(at.query_params):
        del at.query_params[key]
    at.query_params.update(after)
    return at.run()


def table_settings(at: AppTest) -> AppTest:
    """Open the results table's settings (sort, rows per page, columns), drawn only while open."""
    at.session_state["table_settings"] = True
    return at.run()


def page_text(at: AppTest) -> str:
    """Every text a person reads on the page (tags and hover titles left out)."""
    kinds = ("markdown", "caption", "header", "subheader", "title", "info", "warning", "success", "error", "text")
    texts = [str(e.value) for kind in kinds for e in at.get(kind)]
    texts += [f"{m.label} {m.value}" for m in at.metric]
    for kind in (
        "selectbox",
        "multiselect",
        "radio",
        "text_input",
        "button",
        "number_input",
        "checkbox",
        "toggle",
        "slider",
        "date_input",
        "text_area",
        "expander",
    ):
        for widget in at.get(kind):
            texts.append(str(getattr(widget, "label", "") or ""))
            texts.append(str(getattr(widget, "help", "") or ""))  # read on hover, read all the same
            texts += [str(o) for o in getattr(widget, "options", []) or []]
    for drawn in drawn_html(at):
        drawn = re.sub(r"<style>.*?</style>", " ", drawn, flags=re.S)
        texts.append(html.unescape(re.sub(r"<[^>]+>", " ", drawn)))
    for frame in at.dataframe:
        texts += [str(c) for c in frame.value.columns] + [str(v) for v in frame.value.astype(str).to_numpy().ravel()]
    for shown in at.table:
        texts += [str(c) for c in shown.value.columns] + [str(i) for i in shown.value.index]
        texts += [str(v) for v in shown.value.astype(str).to_numpy().ravel()]
    return "\n".join(texts)


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


def test_a_mirror_of_reported_sales_alone_is_not_called_empty(tmp_path, monkeypatch):
    from toolkit.ingest.sales import ingest_sales

    path, sales = tmp_path / "mirror.db", tmp_path / "sales.csv"
    sales.write_text("Domain,Price,Date,Venue\nkettlehouse.com,1200,2025-05-10,NameJet\n")
    with Mirror(path, create=True) as mirror:
        ingest_sales(mirror, sales)
        assert not mirror.is_empty()
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    at = app()
    no_exception(at)
    assert at.header[0].value == "Explore listings"  # not the first-run panel, whose demo would mix in
    said = " ".join(c.value for c in at.caption)
    assert "the mirror holds no listing yet: `edt sync --feeds` fetches the free public feeds" in said


def test_domain_pages_of_a_feeds_only_mirror_say_where_each_came_from_in_words(tmp_path, monkeypatch):
    path = feeds_only_mirror(tmp_path)
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    listing = app("detail", name="greenkettle.net")
    no_exception(listing)
    said = page_text(listing)
    assert "GoDaddy's listings file" in said and "ingest:godaddy" not in said
    pending = app("detail", name="fjallstuga.se")
    no_exception(pending)
    heading = next(m.value for m in pending.markdown if "Pending delete" in m.value)
    assert heading.startswith("**Pending delete** · ") and "(pending delete)" not in heading


def test_an_idn_reads_in_letters_with_its_xn_form_on_hover(demo_db):
    from toolkit.store.writer import save_listings

    mirror = Mirror(demo_db)
    seen = mirror.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    listing = {"id": 9_900_001, "name": "xn--bcher-kva.com", "source": "sedo", "type": "closeout", "price": 480.0}
    with mirror.connection() as conn:
        save_listings(
            conn, [{**listing, "currency": "EUR", "tld": ".com", "created_at": seen}], origin="sync", observed_at=seen
        )
    explore = app("explore", contains="bcher")
    no_exception(explore)
    assert names_listed(explore) == ["xn--bcher-kva.com"]  # the link keeps the name the mirror holds
    assert (
        '<a href="?view=detail&amp;name=xn--bcher-kva.com&amp;id=9900001" target="_self" class="edt-name" '
        'title="xn--bcher-kva.com">bücher.com</a>' in results_html(explore)
    )
    page = app("detail", name="xn--bcher-kva.com")
    no_exception(page)
    assert page.subheader[0].value == "bücher.com" and "xn--bcher-kva.com" in page.subheader[0].proto.help


def test_explore_filters_through_the_widgets_match_the_query_layer(demo_db):
    at = app()
    no_exception(at)
    assert total_shown(at) == Mirror(demo_db).search_domains({})["meta"]["total"]
    open_groups(at, "seo", "source")
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
    assert not any(opened.values())  # every group closed at first: the page opens on its table
    assert len(at.sidebar.number_input) == len(at.sidebar.text_input) == len(at.sidebar.selectbox) == 0
    bookmark = app(tf_min="20")  # a filter arriving from outside opens its group
    assert groups_open(bookmark)["SEO metrics"]
    assert bookmark.sidebar.number_input(key="f:tf_min").value == 20
    bookmark.session_state["f:group:seo"] = False  # the user closes the group
    bookmark.run()
    with pytest.raises(KeyError):
        bookmark.sidebar.number_input(key="f:tf_min")
    assert "Min Trust Flow: 20" in [c.value for c in bookmark.sidebar.caption]  # said under the closed group
    expected = mirror.search_domains({"tf_min": "20", "tld": ".com"})["meta"]["total"]
    open_groups(bookmark, "source")
    bookmark.sidebar.text_input(key="f:tld").set_value(".com").run()  # a change elsewhere
    no_exception(bookmark)
    assert url_value(bookmark, "tf_min") == "20" and total_shown(bookmark) == expected > 0
    assert not groups_open(bookmark)["SEO metrics"]  # stays closed


def test_the_table_leads_with_the_whole_name_and_reads_at_a_glance(demo_db):
    at = app(sort="-effective_price")
    no_exception(at)
    assert headers(at) == [
        "Domain",
        "Keep",
        "Price",
        "EUR",
        "Bids",
        "Ends in",
        "TF",
        "CF",
        "DA",
        "RD",
        "Age",
        "Score",
        "Source",
        "Buy",
    ]  # no value column before an appraisal; the actions beside the name; the TLD is the name's
    expected = Mirror(demo_db).search_domains({"sort": "-effective_price"})["data"]
    rows = cells(at)
    first = expected[0]
    assert rows[0][0] == first["name"]  # whole, never cut
    assert rows[0][1] == "☆◎"  # shortlist it, watch it
    price, eur = first["effective_price"], first["effective_price_eur"]
    cents = lambda value: f"{round(value):,}" if value >= 100 else f"{value:,.2f}".removesuffix(".00")  # noqa: E731
    assert rows[0][2] == f"{cents(price)} {first['currency']}"  # cents below 100 only
    assert eur is not None and rows[0][3] == f"{cents(eur)} EUR"  # beside the native price
    assert not {"None", "nan", "NaN", "<NA>"} & {cell for row in rows for cell in row}
    source = next(s for s in __import__("toolkit.sources", fromlist=["SOURCES"]).SOURCES if s.slug == first["source"])
    assert rows[0][12] == source.name  # the platform by its name, not its slug
    blank_tf = [row for row, record in zip(rows, expected) if record["trust_flow"] is None]
    assert blank_tf and all(row[6] == "" for row in blank_tf)  # an absent metric is a blank cell
    ends = [row[5] for row, record in zip(rows, expected) if record["auction_end_date"]]
    assert ends and all(re.fullmatch(r"\d+d \d+h|\d+h \d+m|\d+m", e) for e in ends)  # a countdown, not a stamp


def test_a_column_title_sorts_every_result_not_the_page(demo_db):
    at = app(tld=".fr,.de")
    no_exception(at)
    query = header_link(at, "Price")
    # in one currency: a price column of USD, EUR and JPY ranked by the number alone misleads
    assert query["sort"] == "-effective_price_eur" and query["tld"] == ".fr,.de" and "page" not in query
    sorted_at = app(**{k: v for k, v in query.items()})
    no_exception(sorted_at)
    top = Mirror(demo_db).search_domains({"tld": ".fr,.de", "sort": "-effective_price_eur", "per_page": "100"})["data"]
    assert names_listed(sorted_at) == [r["name"] for r in top[:50]]
    frame = Mirror(demo_db).domains_df({"tld": ".fr,.de"}, columns=["currency", "effective_price_eur"])
    assert frame["currency"].nunique() > 1
    highest = frame["effective_price_eur"].max()
    assert top[0]["effective_price_eur"] == highest  # the mirror's highest, not the page's
    assert header_link(sorted_at, "Price")["sort"] == "effective_price_eur"  # a second click turns it around
    assert "Price (EUR), highest first" in sorted_at.caption[0].value  # the sort said in words
    table_settings(sorted_at)
    assert sorted_at.selectbox(key="sort").value == "-effective_price_eur"
    words = sorted_at.selectbox(key="sort").format_func
    assert "Price (EUR), highest first" in words("-effective_price_eur")
    assert words("-effective_price") == "Price in its own currency, highest first"


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
    open_groups(at, "source")
    at.sidebar.text_input(key="f:tld").set_value(".fr").run()
    no_exception(at)
    expected = Mirror(demo_db).search_domains({"tld": ".fr"})
    assert at.caption[0].value.startswith(f"Page 1 of {expected['meta']['last_page']}")
    assert names_listed(at) == [r["name"] for r in expected["data"]]
    assert "page" not in at.query_params
    pager = re.search(r'<p class="edt-pager">(.*?)</p>', results_html(at)).group(1)
    assert '<span class="edt-dim">‹ Previous</span>' in pager  # page 1: nothing before it
    follow(at, html.unescape(re.search(r'<a href="(\?[^"]+)"[^>]*>Next ›</a>', pager).group(1)))
    no_exception(at)
    assert at.caption[0].value.startswith("Page 2 of") and url_value(at, "page") == "2"
    second = Mirror(demo_db).search_domains({"tld": ".fr", "page": "2"})
    assert names_listed(at) == [r["name"] for r in second["data"]]


def test_a_bookmark_past_the_last_page_opens_the_last_page(demo_db):
    at = app(tld=".fr", page="999")
    no_exception(at)
    last = Mirror(demo_db).search_domains({"tld": ".fr"})["meta"]["last_page"]
    assert at.caption[0].value.startswith(f"Page {last} of {last}") and names_listed(at)


def test_the_column_chooser_is_kept_in_the_url(demo_db):
    at = table_settings(app())
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
    params = {
        "no_numbers": "1",
        "no_dashes": "1",
        "length_max": "8",
        "not_contains": "shop,online",
        "tf_cf_ratio_min": "0.5",
    }
    expected = Mirror(demo_db).search_domains(params)
    assert 0 < total_shown(at) == expected["meta"]["total"] < Mirror(demo_db).search_domains({})["meta"]["total"]
    for name in names_listed(at):
        label = name.split(".")[0]
        assert len(label) <= 8 and "-" not in label and not any(c.isdigit() for c in label)
        assert "shop" not in name and "online" not in name


def test_the_csv_holds_exactly_the_rows_the_button_counts(demo_db):
    from toolkit.ui.pages import search_results

    at = app(tld=".fr")
    no_exception(at)
    button = at.get("download_button")[0]
    total = Mirror(demo_db).search_domains({"tld": ".fr"})["meta"]["total"]
    assert f"Download all {total:,} rows (CSV)" in button.proto.label
    mirror = Mirror(demo_db, readonly=True)
    data = search_results.csv_of_all({"tld": ".fr"}, mirror=mirror, plan="enterprise", pending=False)
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
    at = open_groups(app(), "source")
    assert "Aged Domains (deleted ccTLD)" in at.sidebar.selectbox(key="f:source").options  # sources by name
    assert "GoDaddy Auctions" in at.sidebar.selectbox(key="f:source").options
    assert "Answers as the Enterprise plan" in groups_open(at)  # the plan in force, said in its group's title
    at.session_state["plan_group"] = True  # opened: its picker
    at.run()
    assert "Authority+" in at.sidebar.selectbox(key="plan").options  # plans by name
    at.sidebar.selectbox(key="plan").set_value("pro").run()
    no_exception(at)
    assert "Aged Domains (deleted ccTLD)" not in at.sidebar.selectbox(key="f:source").options
    assert "deleted-ccTLD database needs the Authority plan" in " ".join(c.value for c in at.sidebar.caption)
    assert "Answers as the Pro plan" in groups_open(at) and url_value(at, "plan") == "pro"


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
    assert "first_seen_at" in fields and any("web.archive.org/web/*/" + name in m.value for m in at.markdown)
    shown = [value for _, value in fields.values()]
    assert "None" not in shown and "—" in shown  # absent values are dashes
    assert fields["name"] == ("Domain", name) and fields["trust_flow"][0] == "Trust Flow"  # labelled
    record = Mirror(demo_db).get_domain(listing_id)["data"]
    assert fields["source"][1] != record["source"]  # the platform by name
    # The table rounds a price from 100 up; every field shows it to the cent, as stored.
    cents_name, cents, currency = conn.execute(
        "SELECT name, effective_price, currency FROM listings WHERE effective_price >= 100 AND "
        "effective_price != CAST(effective_price AS INTEGER) AND closed_at IS NULL ORDER BY id LIMIT 1"
    ).fetchone()
    exact = app("detail", name=cents_name)
    assert record_fields(exact)["effective_price"][1] == f"{cents:,.2f} {currency}"
    spoken, code = conn.execute("SELECT name, language FROM listings WHERE language = 'DE' LIMIT 1").fetchone()
    assert record_fields(app("detail", name=spoken))["language"][1] == "German"  # the language by name, not DE
    # First and last seen as people read them, with no "T07:00:00Z" for Markdown to take for
    # an emoji name (Streamlit would load its emoji code for the page).
    seen = next(c.value for c in at.caption if c.value.startswith("First seen"))
    first = datetime.fromisoformat(record["first_seen_at"].replace("Z", "+00:00"))
    assert seen.startswith(f"First seen {first.day} {first:%b %Y %H:%M} UTC, last seen ")
    assert fields["first_seen_at"][1] == f"{first.day} {first:%b %Y %H:%M} UTC"
    assert not re.search(r":\w+:", " ".join(e.value for e in [*at.caption, *at.markdown]))
    old = app("detail", id=str(listing_id))  # a bookmark by listing id still opens
    no_exception(old)
    assert old.subheader[0].value == name and url_value(old, "name") == name


def test_domain_detail_finds_a_name_by_part_and_shows_every_listing_of_it(demo_db):
    from toolkit.store.writer import save_listings

    mirror = Mirror(demo_db)
    record = mirror.search_domains({"has_bids": "1", "per_page": "1"})["data"][0]
    other = {
        **record,
        "id": 99_000_001,
        "source": "sedo" if record["source"] != "sedo" else "dynadot",
        "price": 777.0,
        "max_bid": None,
        "effective_price": 777.0,
        "trust_flow": None,
    }
    save_listings(mirror.connection(), [other], origin="sync")
    label = record["name"].split(".")[0]
    at = app("detail", name=label[: max(3, len(label) - 2)])
    no_exception(at)
    picker = at.selectbox(key="detail_pick")
    assert record["name"] in picker.options
    picker.set_value(record["name"]).run()
    no_exception(at)
    assert url_value(at, "name") == record["name"]
    assert len(at.table) == 1 and record_fields(at)["name"][1] == record["name"]  # side by side, then the fields
    side = at.table[0].value
    by_name = {s.slug: s.name for s in SOURCES}
    assert list(side.columns) == [
        f"{by_name[r['source']]} #{r['id']}"
        for r in (Mirror(demo_db).get_domain(i)["data"] for i, _, _ in Mirror(demo_db).listings_named(record["name"]))
    ]
    column = f"{by_name[other['source']]} #{other['id']}"
    assert side.loc["Price", column] == f"777 {other['currency']}"
    assert side.loc["Trust Flow", column] == "—"


def test_pending_delete_names_are_explorable_with_filters_and_suffix_families(demo_db):
    at = app("pending")
    no_exception(at)
    mirror = Mirror(demo_db)
    assert total_shown(at) == mirror.search_pending_delete({})["meta"]["total"] > 0
    assert headers(at)[:4] == ["Domain", "Watch", "Drops", "Status"] and "TF" in headers(at)
    open_groups(at, "source", prefix="p:")
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
    at.sidebar.radio(key="view").set_value("pending").run()  # and back: they were set aside, not lost
    no_exception(at)
    assert url_value(at, "source") == "czds-daily" and url_value(at, "status") == "pendingDelete"
    assert (
        total_shown(at)
        == Mirror(demo_db).search_pending_delete({"source": "czds-daily", "tld": "uk", "status": "pendingDelete"})[
            "meta"
        ]["total"]
    )


def test_explores_own_filters_come_back_after_a_look_at_pending_delete(demo_db):
    mirror = Mirror(demo_db)
    at = app("explore", tld="com", tf_min="20", has_bids="1")
    no_exception(at)
    at.sidebar.radio(key="view").set_value("pending").run()
    no_exception(at)
    assert "tf_min" not in at.query_params and "has_bids" not in at.query_params and not at.warning
    assert total_shown(at) == mirror.search_pending_delete({"tld": "com"})["meta"]["total"]
    at.sidebar.radio(key="view").set_value("explore").run()
    no_exception(at)
    assert url_value(at, "tf_min") == "20" and url_value(at, "has_bids") == "1"
    expected = mirror.search_domains({"tld": "com", "tf_min": "20", "has_bids": "1"})["meta"]["total"]
    assert total_shown(at) == expected < mirror.search_domains({"tld": "com"})["meta"]["total"]


def _every_move(views: list[str]) -> list[tuple[str, str]]:
    """A walk through every ordered pair of pages (an Eulerian circuit of the complete graph),
    starting and ending at the first."""
    left = {view: [other for other in views if other != view] for view in views}
    stack, walk = [views[0]], []
    while stack:
        if left[stack[-1]]:
            stack.append(left[stack[-1]].pop())
        else:
            walk.append(stack.pop())
    walk.reverse()
    return list(zip(walk, walk[1:]))


def test_every_page_keeps_its_own_settings_walking_through_the_sidebar(demo_db):
    """Each page set away from its defaults, then every page opened from every other through
    the sidebar: a page shows its own columns, sort and settings, never another page's (Explore's
    `cols=...,tf` once opened Pending-delete with a TF column alone)."""
    from toolkit.ui.navigation import OWN_KEYS
    from toolkit.ui.pages import PAGES
    from toolkit.ui.pages.search_results import sort_label
    from toolkit.ui.table import LISTING_TABLE, PENDING_TABLE

    name = Mirror(demo_db).search_domains({"has_bids": "1", "per_page": "1"})["data"][0]["name"]
    titles = {"explore": {c.key: c.title for c in LISTING_TABLE}, "pending": {c.key: c.title for c in PENDING_TABLE}}
    chosen = {
        "explore": (["name", "price", "deal", "bids", "ends", "tf"], "-bids_count"),
        "pending": (["domain", "window", "status", "tld"], "domain"),
    }
    at = app("explore", tld=".com")
    settings = {  # each page's own settings, set through its widgets
        "explore": lambda: (
            table_settings(at),
            at.multiselect(key="cols").set_value(chosen["explore"][0]),
            at.selectbox(key="sort").set_value(chosen["explore"][1]),
        ),
        "pending": lambda: (
            table_settings(at),
            at.multiselect(key="cols").set_value(chosen["pending"][0]),
            at.selectbox(key="sort").set_value(chosen["pending"][1]),
        ),
        "detail": lambda: at.text_input(key="detail_name").set_value(name),
        "trust-flow": lambda: at.slider(key="region_tf").set_value((10, 40)),
        "calendar": lambda: at.radio(key="cal_kind").set_value("drops"),
    }

    def shows_its_own(view: str) -> None:
        no_exception(at)
        assert at.sidebar.radio(key="view").value == view and url_value(at, "view") == view
        strangers = {k for keys in OWN_KEYS.values() for k in keys} - set(OWN_KEYS.get(view, ()))
        assert not strangers & set(at.query_params), (view, dict(at.query_params))
        assert url_value(at, "tld") == ".com"  # the filters go along
        if view in chosen:
            columns, sort = chosen[view]
            assert headers(at) == [titles[view][k] for k in columns], view
            assert url_value(at, "sort") == sort and sort_label(sort) in at.caption[0].value
        elif view == "detail":
            assert at.subheader[0].value == name and url_value(at, "name") == name
        elif view == "trust-flow":
            assert at.slider(key="region_tf").value == (10, 40) and url_value(at, "tf_range") == "10-40"
        elif view == "calendar":
            assert at.radio(key="cal_kind").value == "drops" and url_value(at, "dates") == "drops"

    views = list(PAGES)
    for view in views:
        at.sidebar.radio(key="view").set_value(view).run()
        if view in settings:
            settings[view]()
            at.run()
        shows_its_own(view)
    moves = _every_move(views[-1:] + views[:-1])  # from the page the settings ended on
    assert len(moves) == len(views) * (len(views) - 1)
    for before, after in moves:
        assert at.sidebar.radio(key="view").value == before
        at.sidebar.radio(key="view").set_value(after).run()
        shows_its_own(after)


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
    assert (
        cells[(str(int(cf)), str(int(tf)))] == ((in_grid["trust_flow"] == tf) & (in_grid["citation_flow"] == cf)).sum()
    )
    assert not at.get("plotly_chart")  # no Plotly (nor WebGL) by default: the point cloud is opt-in
    lines = [m[0] if isinstance(m, list) else m for m in heatmap["series"][0]["markLine"]["data"]]
    assert any(m.get("name") == "TF = CF" for m in lines)
    assert at.caption[0].value.startswith(
        f"Counts over all {len(rows):,} matching listings (not a sample); {len(rows) - len(in_grid):,} without both"
    )


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
    assert [html.unescape(n) for n in re.findall(r'class="edt-name">([^<]+)<', shown)] == [
        r["name"] for r in expected["data"]
    ]
    again = app("trust-flow", source="dynadot", tf_min="5", tf_range="0-30", cf_range="20-60")
    assert again.slider(key="region_tf").value == (0, 30) and again.slider(key="region_cf").value == (20, 60)


def test_a_chart_is_made_once_per_mirror_generation_filters_and_plan(demo_db, monkeypatch):
    """A chart page's figures are made and converted once for the same data: another visitor,
    or a rerun, skips Plotly; a write to the mirror makes them anew."""
    from toolkit.analysis import charts
    from toolkit.store.writer import save_listings

    made = []
    real = charts.tf_cf_heatmap
    monkeypatch.setattr(charts, "tf_cf_heatmap", lambda counts: made.append(1) or real(counts))
    first = app("trust-flow", tld=".de")
    again = app("trust-flow", tld=".de")  # another session, the same data
    no_exception(again)
    assert len(made) == 1 and chart(again) == chart(first)
    app("trust-flow", tld=".fr")
    assert len(made) == 2  # other filters, another chart
    mirror = Mirror(demo_db)
    record = mirror.search_domains({"tld": ".de", "per_page": "1"})["data"][0]
    save_listings(mirror.connection(), [{**record, "trust_flow": 77, "citation_flow": 78}], origin="sync")
    changed = app("trust-flow", tld=".de")
    assert len(made) == 3 and chart(changed) != chart(first)  # the mirror changed: made anew


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
    assert by_source["yAxis"][0]["data"] == ["Dynadot"] and [i[1] for i in by_source["series"][0]["data"]] == [
        "Dynadot"
    ]


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
    assert headers(at)[:4] == ["Domain", "Watch", "Drops", "Window"]
    for row, record in zip(cells(at), expected["data"]):  # each drop's window, from the record's own bounds
        start, end = (date.fromisoformat(record[k]) for k in ("drop_window_start", "drop_window_end"))
        assert row[3] == (
            f"{start.day} {start:%b}"
            if start == end
            else f"{start.day} {start:%b} – {end.day} {end:%b} ({(end - start).days + 1} days)"
        )
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
    assert headers(at)[:3] == ["Domain", "Keep", "Price"] and "TF" in headers(at)
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

    from toolkit.ui.pages.drop_calendar import ics_for_windows

    drops = [
        ("a.nu", date(2026, 3, 5), date(2026, 3, 4), date(2026, 3, 5)),
        ("b.nu", date(2026, 3, 5), date(2026, 3, 4), date(2026, 3, 5)),
        ("c.nu", date(2026, 3, 9), date(2026, 3, 8), date(2026, 3, 11)),
        ("d.se", date(2026, 3, 6), date(2026, 3, 6), date(2026, 3, 6)),
        ("e.com", date(2026, 3, 7), None, None),
    ]
    events = Calendar.from_ical(ics_for_windows(drops, "Pending-delete drops")).walk("VEVENT")
    got = {(e.decoded("dtstart"), e.decoded("dtend")): str(e["summary"]) for e in events}
    assert got == {
        (
            date(2026, 3, 4),
            date(2026, 3, 6),
        ): "Pending-delete drops: 2 domains, most likely Thu 5 Mar, window 4 Mar–5 Mar (2 days)",
        (
            date(2026, 3, 8),
            date(2026, 3, 12),
        ): "Pending-delete drops: 1 domain, most likely Mon 9 Mar, window 8 Mar–11 Mar (4 days)",
        (date(2026, 3, 6), date(2026, 3, 7)): "Pending-delete drops: 1 domain, on Fri 6 Mar",
        (date(2026, 3, 7), date(2026, 3, 8)): "Pending-delete drops: 1 domain, on Sat 7 Mar",
    }
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
    assert any("strong links" in m.value and "Trust Flow 15+" in m.value for m in again.markdown)  # a sentence


def test_the_watchlist_lists_new_matches_and_marks_them_seen_only_when_asked(demo_db):
    from datetime import timedelta

    from toolkit.sync import saved_searches as saved

    mirror = Mirror(demo_db)
    saved.save_search(mirror, "french", {"tld": ".fr"})
    conn = mirror.connection()
    with conn:  # the search was saved a day before the demo's latest arrivals
        conn.execute(
            "UPDATE saved_searches SET created_at = ?",
            [(mirror.now() - timedelta(days=1)).strftime("%Y-%m-%dT%H:%M:%SZ")],
        )
    entry = saved.saved_searches(mirror)[0]
    new = entry["new_matches"]
    assert new > 0
    at = app("watchlist")
    no_exception(at)
    assert not drawn_html(at)  # the new matches wait in a closed group
    at.session_state["new:french"] = True
    at.run()
    expected = mirror.search_domains({**saved.new_matches_params(entry), "sort": "-first_seen_at", "per_page": "100"})
    assert names_listed(at) == [r["name"] for r in expected["data"]]  # the new names themselves
    at.button(key="open:french").click().run()
    no_exception(at)
    assert url_value(at, "tld") == ".fr"
    assert saved.saved_searches(mirror)[0]["new_matches"] == new  # opening them did not mark them seen
    at = app("watchlist")
    at.session_state["new:french"] = True
    at.run()
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
    seen = watched.Observation(
        "kettleharbor.nu",
        "2026-11-20T06:30:00Z",
        statuses=["serverHold"],
        expires_at="2026-11-01T00:00:00Z",
        pending="serverHold",
    )
    from toolkit.ingest.lifecycle import predict_drop_window

    watched.record_observation(mirror, seen, predict=predict_drop_window)
    watched.queue_listed(mirror)
    at = app("watchlist")
    no_exception(at)
    shown = {row[0]: row for row in html_rows(next(h for h in drawn_html(at) if ">Stage<" in h))}
    window, _ = predict_drop_window("nu", "serverHold", date(2026, 11, 20))
    assert shown["kettleharbor.nu"][1] == "expired"
    assert shown["kettleharbor.nu"][4] == f"{window.start} – {window.end}"
    from toolkit.ui.table import platform

    first = mirror.search_domains({"per_page": "1"})["data"][0]
    assert shown[listed][5].startswith(f"{platform(first['source'])} ")  # the platform by name, not its slug
    assert "#" not in shown[listed][5] and first["source"] not in shown[listed][5]


def test_check_now_asks_the_registries_about_the_watched_names_on_screen(demo_db, monkeypatch):
    """The names job (`edt watch names --check`) from the Watchlist page: the same polite
    lookups, over a real socket to a local RDAP server playing the registries' real answers."""
    from test_watch_names import Registry

    from toolkit.sync.watched_names import watch_names, watched_names

    registry = Registry()
    try:
        monkeypatch.setenv("EDT_RDAP_BOOTSTRAP_URL", registry.url + "/bootstrap.json")
        monkeypatch.setenv("EDT_NOW", "2022-03-10T06:30:00Z")  # the registries' first day (test_watch_names.DAYS)
        mirror = Mirror(demo_db)
        watch_names(mirror, ["themarquetry.com", "kettleharbor.nu"])
        at = app("watchlist")
        no_exception(at)
        before = {row[0]: row for row in html_rows(next(h for h in drawn_html(at) if ">Stage<" in h))}
        assert before["themarquetry.com"][1] == "not checked yet"
        at.button(key="check_names").click().run()
        no_exception(at)
    finally:
        registry.server.shutdown()
    asked = sorted(path.rsplit("/", 1)[-1] for path in registry.requests if "/domain/" in path)
    assert asked == ["kettleharbor.nu", "themarquetry.com"]  # each of the names on screen, once
    assert any(c.value.startswith("names: 2 checked (2 asked of their registries)") for c in at.caption)
    stages = {row["name"]: row["stage"] for row in watched_names(Mirror(demo_db))}
    assert stages == {"themarquetry.com": "registered", "kettleharbor.nu": "registered"}
    shown = {row[0]: row for row in html_rows(next(h for h in drawn_html(at) if ">Stage<" in h))}
    assert shown["themarquetry.com"][1] == "registered" and shown["themarquetry.com"][6]  # checked just now


def test_sync_page_shows_each_datasets_freshness(demo_db):
    at = app("sync")
    no_exception(at)
    rows = html_rows(next(h for h in drawn_html(at) if ">dataset<" in h))
    assert [row[0] for row in rows] == [
        "Platform listings",
        "Auctions with bids",
        "Deleted ccTLD names",
        "Pending-delete names",
    ]
    assert {row[-1] for row in rows} == {"not synced yet (demo data)"}  # demo data only
    assert any("This mirror holds the small demo (seed 9)" in i.value for i in at.info)
    assert any("EDT_API_KEY" in i.value for i in at.info)


@pytest.mark.parametrize("view", ["explore", "detail", "trust-flow", "archive", "calendar", "watchlist", "sync"])
def test_every_page_renders_without_an_exception(demo_db, view):
    at = app(view)
    no_exception(at)
    assert at.sidebar.radio(key="view").value == view


@pytest.mark.parametrize(
    "view", ["explore", "pending", "detail", "trust-flow", "archive", "calendar", "watchlist", "sync"]
)
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
        no_exception(at)  # the demo's mirror: refused, in words (the service's rows would go beside the demo's)
        assert any("holds the demo" in e.value and "--clear-demo" in e.value for e in at.error)
        at.checkbox(key="sync_clear_demo").check().run()  # the switch: the demo goes once the service answered
        at.button(key="sync_run").click().run()
        no_exception(at)
        assert any(s.value.startswith("Removed the demo rows: ") for s in at.success)
    assert connect(str(demo_db)).execute("SELECT count(*) FROM listings WHERE origin = 'demo'").fetchone()[0] == 0
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
    stored = (
        connect(str(demo_db)).execute("SELECT count(*) FROM pending_delete WHERE source = 'droplist'").fetchone()[0]
    )
    assert stored > 1_500
    assert [s.value for s in at.success] == [f"nask-pl: ok: {stored:,} rows ({stored:,} new, 0 updated)"]
    feeds = {row[0].split(":")[0]: row for row in html_rows(next(h for h in drawn_html(at) if ">feed<" in h))}
    assert feeds["nask-pl"][4] == "fresh"


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
    assert detail.metric[1].value == STATUS_WORDS[row["whois_status"]][0]  # in words, the EPP code on hover
    assert row["whois_status"] in detail.metric[1].proto.help
    assert detail.metric[2].value.startswith("—") or detail.metric[2].value.split(" / ")[0].isdigit()


def test_the_domain_page_shows_comparable_results(tmp_path, monkeypatch):
    from test_results import comps_mirror

    db, _ = comps_mirror(tmp_path)
    monkeypatch.setenv("EDT_DB", str(db))
    monkeypatch.setenv("EDT_NOW", "2026-08-21T09:00:00+00:00")
    at = app("detail", name="kettleharbor.com")
    no_exception(at)
    assert "Comparable sales" in [h.value for h in at.subheader]
    comps = next(h for h in drawn_html(at) if ">Why alike" in h)
    assert comps.index("kettlehouse.com") < comps.index("harborkettle.net")  # most alike first
    assert "shares &#x27;kettle&#x27;" in comps and "<td>20 Aug</td><td>Dynadot</td>" in comps
    assert 'href="?view=detail&amp;name=kettlehouse.com"' in comps  # each to its own page
    titles = dict(re.findall(r'<th[^>]*><a href="\?([^"]+)"[^>]*>([A-Za-z ]+)', comps))
    by_price = follow(at, "?" + html.unescape(next(q for q, t in titles.items() if t == "EUR")))
    no_exception(by_price)
    assert url_value(by_price, "comps_sort") == "-eur"  # sorted by what it sold for, highest first
    sorted_comps = next(h for h in drawn_html(by_price) if ">Why alike" in h)
    shown = [float(v.replace(",", "")) for v in re.findall(r'<td class="num">([\d,.]+) EUR</td>', sorted_comps)]
    assert shown == sorted(shown, reverse=True) and len(shown) > 1


# -- a time-lapse demo: the page a bid is decided on, in words ------------------------------


@pytest.fixture()
def lapse_db(lapse_template, tmp_path, monkeypatch) -> Path:
    path = tmp_path / "lapse.db"
    shutil.copy(lapse_template, path)
    monkeypatch.setenv("EDT_NOW", lapse_now().isoformat())
    monkeypatch.setenv("EDT_DB", str(path))
    monkeypatch.delenv("EDT_PLAN", raising=False)
    monkeypatch.delenv("EDT_API_KEY", raising=False)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    return path


def _one(db: Path, sql: str, *args) -> tuple:
    found = connect(str(db)).execute(sql, args).fetchone()
    assert found is not None, sql
    return found


def _raw_words() -> dict[str, re.Pattern]:
    """What must never be read on a page: the mirror's field and parameter names, EPP codes
    (their words are shown, the code on hover), None, and crontab lines."""
    from toolkit.query.params import DOMAIN_PARAMS, PENDING_PARAMS, RESULT_PARAMS
    from toolkit.store.labels import LISTING_LABELS, PENDING_LABELS
    from toolkit.store.schema import RESULT_COLUMNS, WATCHED_NAME_COLUMNS

    names = {
        *LISTING_LABELS,
        *PENDING_LABELS,
        *DOMAIN_PARAMS,
        *PENDING_PARAMS,
        *RESULT_PARAMS,
        *RESULT_COLUMNS,
        *WATCHED_NAME_COLUMNS,
        "last_ok",
        "age_hours",
        "rows_seen",
        "started_at",
        "finished_at",
    }
    raw = sorted(n for n in names if "_" in n)
    return {
        "a field name": re.compile(r"(?<![\w/.-])(" + "|".join(map(re.escape, raw)) + r")(?![\w-])"),
        # the codes written as code (camelCase); quarantine, transition, ok read as words
        "an EPP code": re.compile(r"\b(" + "|".join(c for c in STATUS_WORDS if c != c.lower()) + r")\b"),
        "None": re.compile(r"\bNone\b"),
        "a cron line": re.compile(r"(?<!\S)(?:[\d*/,-]+ +){4}[\d*/,-]+(?!\S)|\bcron\b"),
    }


def raw_words_in(text: str) -> list[str]:
    found = [(what, m.group(0).strip()) for what, pattern in _raw_words().items() for m in pattern.finditer(text)]
    # five fields of numbers are a row of a table; a crontab line has a star among them
    return [f"{what}: {word!r}" for what, word in found if what != "a cron line" or "*" in word or word == "cron"]


def test_the_raw_word_check_sees_them():
    text = "Trust Flow 20 · last_ok 2026 · redemptionPeriod · None · 0 */4 * * * · mirror /tmp/test_x0/m.db"
    assert raw_words_in(text) == [
        "a field name: 'last_ok'",
        "an EPP code: 'redemptionPeriod'",
        "None: 'None'",
        "a cron line: '0 */4 * * *'",
    ]
    assert raw_words_in("in redemption (the code on hover), daily at 06:30, Trust Flow 15+") == []


def _every_page(db: Path) -> dict[str, dict[str, str]]:
    """Every page, and the domain page of each kind of listing, as bookmarks."""
    sold = _one(db, "SELECT name FROM auction_results WHERE sold = 1 ORDER BY ended_at DESC LIMIT 1")[0]
    unsold = _one(db, "SELECT name FROM auction_results WHERE sold = 0 ORDER BY ended_at DESC LIMIT 1")[0]
    running = _one(
        db,
        "SELECT name FROM listings WHERE type = 'auction' AND bids_count > 0 AND value_low IS NOT NULL "
        "AND closed_at IS NULL AND auction_end_date > ? ORDER BY id LIMIT 1",
        lapse_now().isoformat(),
    )[0]
    closeout = _one(
        db,
        "SELECT name FROM listings WHERE type = 'closeout' AND source != 'regfree' AND closed_at IS "
        "NULL ORDER BY id LIMIT 1",
    )[0]
    regfree = _one(db, "SELECT name FROM listings WHERE source = 'regfree' ORDER BY id LIMIT 1")[0]
    pending = Mirror(db).search_pending_delete({"per_page": "1"})["data"][0]["domain"]
    pages = {view: {} for view in ("explore", "pending", "trust-flow", "archive", "calendar", "watchlist", "sync")}
    kinds = (
        ("a sold auction", sold),
        ("an unsold auction", unsold),
        ("a running auction", running),
        ("a closeout", closeout),
        ("a dropped ccTLD name", regfree),
        ("a pending-delete name", pending),
    )
    pages |= {f"detail of {what}": {"name": name} for what, name in kinds}
    pages["calendar of drops"] = {"dates": "drops"}
    pages["explore, every column"] = {
        "cols": ",".join(c.key for c in __import__("toolkit.ui.table", fromlist=["x"]).LISTING_TABLE)
    }
    return pages


def test_no_page_shows_a_raw_field_name_an_epp_code_without_words_none_or_a_cron_line(lapse_db):
    """Every page rendered (and the domain page of each kind of listing, with a watched name,
    a shortlisted listing and a sync run on the watchlist and sync pages): its text read
    against the field names, the EPP codes, None and crontab lines. Each page of a demo mirror
    says it holds the demo."""
    from toolkit.sync.watched_names import watch_names
    from toolkit.sync.saved_searches import shortlist_add

    mirror = Mirror(lapse_db)
    shortlist_add(mirror, mirror.search_domains({"has_bids": "1", "per_page": "1"})["data"][0]["id"], "bid up to 400")
    watch_names(mirror, ["kettleharbor.nu"], note="for the shop")
    with connect(str(lapse_db)) as conn:
        conn.execute(
            "INSERT INTO sync_runs (job, started_at, finished_at, status, rows_seen, error) VALUES "
            "('bids', '2026-12-05T08:00:00Z', '2026-12-05T08:01:00Z', 'failed', NULL, 'HTTP 503')"
        )
    found = {}
    for page, query in _every_page(lapse_db).items():
        at = app(page.split(" ")[0].rstrip(","), **query)
        no_exception(at)
        if page.startswith("watchlist"):
            at.session_state["new:demo: .fr with Trust Flow 15+"] = True  # a search's new matches, opened
            at.run()
        if page in ("explore", "pending"):  # every filter group and the plan picker open: their widgets' words
            from toolkit.ui.state import FILTER_GROUPS

            at.session_state["plan_group"] = True
            open_groups(at, *FILTER_GROUPS, prefix="p:" if page == "pending" else "f:")
            no_exception(at)
        text = page_text(at)
        assert "Demo data" in text and "the small demo (seed 7), a time-lapse of the 14 days to 5 Dec 2026" in text
        found[page] = raw_words_in(text)
    assert not {page: words for page, words in found.items() if words}, found


def test_the_domain_page_of_a_sold_auction_says_sold_and_its_price(lapse_db):
    listing_id, name, price, currency, eur, ended, bids = _one(
        lapse_db,
        "SELECT listing_id, name, final_price, currency, final_price_eur, ended_at, bids FROM "
        "auction_results WHERE sold = 1 AND bids > 1 ORDER BY ended_at DESC LIMIT 1",
    )
    at = app("detail", name=name)
    no_exception(at)
    ended_at = datetime.fromisoformat(ended.replace("Z", "+00:00"))
    said = next(m.value for m in at.markdown if m.value.startswith("**Auction on "))
    day = f"{ended_at.day} {ended_at:%b}"
    assert f"Sold for {price:,.0f} {currency} ({eur:,.0f} EUR) on {day}, after {bids} bids" in said
    assert {m.label: m.value for m in at.metric}["Sold for"] == f"{price:,.0f} {currency}"
    assert "Ends in" not in said and "Live" not in [m.label for m in at.metric]


def test_the_domain_page_of_a_running_auction_gives_its_time_left_and_both_ranges(lapse_db):
    """Time left; the current bid in its currency and EUR against the pre-auction range with its
    coverage; and for an auction with bids the live estimate (live_low, live_high) before it."""
    from toolkit.analysis.range_notes import coverage_note, live_coverage_note, value_model

    name, end, low, high = _one(
        lapse_db,
        "SELECT name, auction_end_date, value_low, value_high FROM listings "
        "WHERE type = 'auction' AND bids_count > 2 AND value_low IS NOT NULL AND "
        "closed_at IS NULL AND auction_end_date > ? ORDER BY auction_end_date "
        "LIMIT 1",
        lapse_now().isoformat(),
    )
    at = app("detail", name=name)
    no_exception(at)
    said = next(m.value for m in at.markdown if m.value.startswith("**Auction on "))
    left = datetime.fromisoformat(end.replace("Z", "+00:00")) - lapse_now()
    days, hours, minutes = left.days, left.seconds // 3600, left.seconds % 3600 // 60
    countdown = f"{days}d {hours}h" if days else f"{hours}h {minutes}m" if hours else f"{max(minutes, 1)}m"
    assert f"Ends in {countdown} (" in said
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Pre-auction range (EUR)"] == f"{low:,.0f} – {high:,.0f}" and "Current bid" in metrics
    note = coverage_note(value_model(Mirror(lapse_db)))
    assert any(f"Pre-auction range: {note}." in c.value and "EUR: " in c.value for c in at.caption)
    # An auction with bids carries the live estimate (edt appraise): shown first, with its own coverage.
    bid_name, live_low, live_high = _one(
        lapse_db,
        "SELECT name, live_low, live_high FROM listings WHERE live_mid IS "
        "NOT NULL AND value_low IS NOT NULL AND closed_at IS NULL ORDER BY "
        "bids_count DESC LIMIT 1",
    )
    both = app("detail", name=bid_name)
    no_exception(both)
    metrics = {m.label: m.value for m in both.metric}
    assert list(metrics)[3:5] == ["Live estimate (EUR)", "Pre-auction range (EUR)"]  # the row below the prices
    assert metrics["Live estimate (EUR)"] == f"{live_low:,.0f} – {live_high:,.0f}"
    live_note = live_coverage_note(value_model(Mirror(lapse_db))) or "given the bidding so far"
    assert any(f"Live estimate: {live_note}" in c.value for c in both.caption)


def test_a_listing_without_link_data_says_so_instead_of_an_all_clear(lapse_db):
    name = _one(
        lapse_db,
        "SELECT name FROM listings WHERE source != 'regfree' AND trust_flow IS NULL AND "
        "citation_flow IS NULL AND domain_authority IS NULL AND referring_domains IS NULL AND "
        "backlinks_count IS NULL AND spam_count = 0 AND closed_at IS NULL ORDER BY id LIMIT 1",
    )[0]
    at = app("detail", name=name)
    no_exception(at)
    said = next(m.value for m in at.markdown if m.value.startswith("**"))
    assert ":orange-badge[no link data]" in said
    assert [s.value for s in at.success] in ([], ["No spam word flagged."])  # never "no metric jump"
    assert any(c.value.startswith("Not checked: metric jumps (no link data)") for c in at.caption)
    assert "Metric history" not in charts_titled(at)  # no chart of nothing
    enriched = _one(
        lapse_db,
        "SELECT name FROM listings WHERE trust_flow IS NOT NULL AND archive_years IS NOT NULL "
        "AND closed_at IS NULL ORDER BY id LIMIT 1",
    )[0]
    shown = app("detail", name=enriched)
    assert not any("badge[no link data]" in m.value for m in shown.markdown)
    assert "Metric history" in charts_titled(shown)


def test_the_price_line_is_the_price_a_bid_moves_with_its_currency_on_the_axis(lapse_db):
    listing_id, name, currency, price = _one(
        lapse_db,
        "SELECT id, name, currency, effective_price FROM listings WHERE type = 'auction' AND bids_count > 3 "
        "AND closed_at IS NULL ORDER BY bids_count DESC LIMIT 1",
    )
    at = app("detail", name=name)
    no_exception(at)
    history = charts_titled(at)["Price history"]
    assert history["yAxis"][0]["name"] == f"Price ({currency})"
    line = next(s for s in history["series"] if s["name"].startswith("Price"))
    assert line["data"][-1][1] == price  # where the bids took it, not the start price
    assert line["data"][0][1] < price


def test_the_domain_page_shows_the_price_range_and_its_coverage(lapse_db):
    from toolkit.analysis.range_notes import coverage_note, value_model

    db = lapse_db
    summary = value_model(Mirror(db))
    with Mirror(db) as mirror:
        listing_id, low, high = (
            mirror.connection()
            .execute(
                "SELECT id, value_low, value_high FROM listings WHERE value_low IS NOT NULL AND type = 'auction' LIMIT 1"
            )
            .fetchone()
        )
        name = mirror.connection().execute("SELECT name FROM listings WHERE id = ?", [listing_id]).fetchone()[0]
        closeout = (
            mirror.connection()
            .execute("SELECT name FROM listings WHERE value_low IS NOT NULL AND type != 'auction' LIMIT 1")
            .fetchone()[0]
        )
    at = app("detail", name=name, id=str(listing_id))
    no_exception(at)
    assert f"{low:,.0f} – {high:,.0f}" in [m.value for m in at.metric]
    assert any(f"Pre-auction range: {coverage_note(summary)}." in c.value for c in at.caption)
    sale = app("detail", name=closeout)  # no auction: its range is what it is worth
    no_exception(sale)
    assert "Value range (EUR)" in [m.label for m in sale.metric]
    assert any(f"Value range: {coverage_note(summary)}." in c.value for c in sale.caption)
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
        bid_id, bid_name, live_low, live_high = (
            mirror.connection()
            .execute(
                "SELECT id, name, live_low, live_high FROM listings WHERE live_mid IS NOT NULL AND value_low IS NOT NULL "
                "LIMIT 1"
            )
            .fetchone()
        )
        by_live = mirror.search_domains({"sort": "-live_mid", "per_page": "50"})["data"]
    at = app("detail", name=bid_name, id=str(bid_id))
    no_exception(at)
    shown = {m.label: m.value for m in at.metric}
    assert shown["Live estimate (EUR)"] == f"{live_low:,.0f} – {live_high:,.0f}"
    assert "Pre-auction range (EUR)" in shown
    at = app(sort="-live_mid", cols="name,live")
    assert names_listed(at) == [r["name"] for r in by_live]
    assert f"{by_live[0]['live_low']:,.0f} – {by_live[0]['live_high']:,.0f}" in results_html(at)


def test_the_ending_soon_links_filter_explore_by_the_hours_left(lapse_db):
    at = app()
    no_exception(at)
    links = dict(re.findall(r'<a href="\?(ends_within=\d+)"[^>]*>(\d+ h)</a>', results_html(at)))
    assert set(links.values()) == {"1 h", "6 h", "24 h"}
    follow(at, "?ends_within=6")
    no_exception(at)
    expected = Mirror(lapse_db).search_domains({"ends_within": "6"})
    assert total_shown(at) == expected["meta"]["total"] > 0
    assert names_listed(at) == [r["name"] for r in expected["data"]]
    assert "<b>6 h</b>" in results_html(at) and "ending within 6 hours" not in results_html(at)
    assert groups_open(at)["Dates"] and at.sidebar.number_input(key="f:ends_within").value == 6
    ends = [
        datetime.fromisoformat(r["auction_end_date"].replace("Z", "+00:00"))
        for r in Mirror(lapse_db).export_rows({"ends_within": "6"})
    ]
    assert ends and all(lapse_now() < end <= lapse_now() + timedelta(hours=6) for end in ends)


def test_the_calendar_opens_on_today(lapse_db):
    at = app("calendar")
    no_exception(at)
    days = {
        date.fromisoformat(r["auction_end_date"][:10])
        for r in Mirror(lapse_db).export_rows({})
        if r["auction_end_date"]
    }
    assert LAPSE_TODAY in days and url_value(at, "day") == LAPSE_TODAY.isoformat()
    option = json.dumps(next(c for t, c in charts_titled(at).items() if t.startswith("Auction ends")))
    assert "auctions ending" in option and "drops" not in option.lower()  # its colour bar counts auctions, not drops


def test_the_domain_page_shortlists_and_watches_the_name(lapse_db):
    from toolkit.sync.watched_names import watched_names
    from toolkit.sync.saved_searches import shortlist

    name = _one(
        lapse_db, "SELECT name FROM listings WHERE closed_at IS NULL AND source != 'regfree' ORDER BY id LIMIT 1"
    )[0]
    at = app("detail", name=name)
    at.button(key="page_shortlist").click().run()
    at.button(key="page_watch").click().run()
    no_exception(at)
    mirror = Mirror(lapse_db)
    assert [item["name"] for item in shortlist(mirror)] == [name]
    assert [row["name"] for row in watched_names(mirror)] == [name]
    assert at.button(key="page_shortlist").label == "★ On your shortlist"
    assert at.button(key="page_watch").label == "◉ Watched"
    assert any(name in s.value for s in at.success)
    listed = app("watchlist")
    assert name in results_html(listed) and "★" in results_html(listed)  # on the watchlist's shortlist
    at.button(key="page_shortlist").click().run()  # a second click takes it off
    assert shortlist(Mirror(lapse_db)) == []


def test_a_name_whose_pending_drop_date_passed_is_found_and_a_search_counts_every_match(lapse_db):
    """The API answers a pending-delete name only while its drop is ahead; the domain page still
    finds a name whose drop date passed, and says so. A part of a name counts every live
    listing that contains it, not the 20 it offers."""
    today = lapse_now().date().isoformat()
    (gone,) = _one(
        lapse_db,
        "SELECT domain FROM pending_delete p WHERE estimated_drop_date < ? AND NOT EXISTS "
        "(SELECT 1 FROM listings l WHERE l.name = p.domain) ORDER BY id LIMIT 1",
        today,
    )
    at = app("detail", name=gone)
    no_exception(at)
    said = " ".join(m.value for m in at.markdown)
    assert "**Was pending delete**" in said and "has passed; it may have dropped" in said
    assert not at.warning
    word, count = _one(
        lapse_db,
        "SELECT substr(name, 1, 3), count(*) FROM listings WHERE closed_at IS NULL AND live_until > ? "
        "GROUP BY 1 HAVING count(*) > 20 ORDER BY 2 DESC LIMIT 1",
        lapse_now().isoformat(),
    )
    at = app("detail", name=word)
    no_exception(at)
    label = at.selectbox(key="detail_pick").label
    contained = Mirror(lapse_db).search_domains({"contains": word, "per_page": "1"})["meta"]["total"]
    assert label.startswith(f"{contained:,} live listings contain “{word}”: the ") and contained > 20, label


def test_a_dropped_cctld_name_has_no_empty_price_chart(lapse_db):
    (name,) = _one(lapse_db, "SELECT name FROM listings WHERE source = 'regfree' ORDER BY id LIMIT 1")
    at = app("detail", name=name)
    no_exception(at)
    assert "No price: a dropped ccTLD name is free to register" in " ".join(c.value for c in at.caption)
    assert "No rows match" not in page_text(at)


def test_the_sync_page_names_jobs_and_feeds_in_words(lapse_db):
    from toolkit.store.jobs import JOBS
    from toolkit.store.labels import JOB_WORDS

    at = app("sync")
    no_exception(at)
    demo_runs = next(h for h in drawn_html(at) if ">played<" in h)
    rows = html_rows(demo_runs)
    assert rows and {row[0] for row in rows} <= set(JOB_WORDS.values()) and not {row[0] for row in rows} & set(JOBS)
    assert all("<th></th>" not in h and ">on<" not in h for h in drawn_html(at))  # every column titled
    options = at.multiselect(key="feeds_pick").options
    assert "GoDaddy auctions ending today (godaddy-ending)" in options


@pytest.mark.parametrize("month", ["9999-12", "0001-01", "2026-13"])
def test_a_calendar_bookmark_of_a_month_no_drop_falls_in_opens_this_month(demo_db, month):
    at = app("calendar", month=month)
    no_exception(at)
    assert "month" not in at.query_params  # this month, the default, is not written into the URL
    assert any(date.today().strftime("%B %Y") in c.value for c in at.caption)


def test_a_one_letter_name_on_the_domain_page_asks_for_more_letters_not_says_none_contains_it(demo_db):
    at = app("detail", name="a")
    no_exception(at)
    [warning] = [w.value for w in at.warning]
    assert "type two letters or more" in warning and "No listing is named or" not in warning


def test_an_auction_first_seen_after_its_end_is_not_called_unsold(demo_db):
    """A feed's file listed it once, after it ended, with 3 bids: its bidding was never read."""
    from toolkit.store.results import derive_results

    conn = connect(str(demo_db))
    listing_id, name = _one(
        demo_db, "SELECT id, name FROM listings WHERE type = 'auction' AND source != 'regfree' ORDER BY id LIMIT 1"
    )
    conn.execute("DELETE FROM listing_history WHERE listing_id = ?", [listing_id])
    conn.execute(
        "INSERT INTO listing_history (listing_id, observed_at, max_bid, bids_count) VALUES (?, ?, 55, 3)",
        [listing_id, "2026-11-27T08:00:00Z"],
    )
    conn.execute(
        "UPDATE listings SET auction_end_date = '2026-11-27T06:00:00Z', last_seen_at = '2026-11-27T08:00:00Z', "
        "bids_count = 3, max_bid = 55 WHERE id = ?",
        [listing_id],
    )
    derive_results(conn, now="2026-11-27T09:00:00Z")
    conn.commit()
    at = app("detail", name=name)
    no_exception(at)
    text = page_text(at)
    assert "its result is not known (the mirror first saw it after its end)" in text and "Unsold" not in text


def test_a_name_listed_on_two_platforms_opens_the_listing_clicked_and_keeps_it_in_the_url(demo_db):
    from toolkit.sources import source_by_slug

    name, first, source = _one(
        demo_db,
        "SELECT name, id, source FROM listings WHERE closed_at IS NULL AND source NOT IN ('regfree', 'sedo') "
        "AND type = 'auction' ORDER BY id LIMIT 1",
    )
    second = 9_990_001  # the same name as a closeout on another platform
    conn = connect(str(demo_db))
    columns = [r[1] for r in conn.execute("PRAGMA table_info(listings)") if r[1] not in ("id", "source", "type")]
    conn.execute(
        f"INSERT INTO listings (id, source, type, {', '.join(columns)}) "
        f"SELECT ?, 'sedo', 'closeout', {', '.join(columns)} FROM listings WHERE id = ?",
        [second, first],
    )
    conn.commit()
    from toolkit.ui import table

    cell = next(c for c in table.LISTING_TABLE if c.key == "name").cell
    assert f"name={name}&amp;id={second}" in cell({"name": name, "id": second}, datetime.now(timezone.utc))
    for wanted in (first, second):
        source = _one(demo_db, "SELECT source FROM listings WHERE id = ?", wanted)[0]
        at = app("detail", name=name, id=str(wanted))
        no_exception(at)
        assert url_value(at, "id") == str(wanted)
        headline = next(m.value for m in at.markdown if m.value.startswith("**"))
        assert source_by_slug(source).name in headline
        assert any(f"id={first}" in h and f"id={second}" in h for h in drawn_html(at))  # each opens on its own


def test_a_refused_filter_is_said_with_the_sidebars_labels_and_plans_by_name(demo_db):
    at = app("explore", tf_min="30", tf_max="10")
    no_exception(at)
    [error] = [e.value for e in at.error]
    assert "Min Trust Flow 30 is above Max Trust Flow 10" in error and "tf_min" not in error and "tf_max" not in error
    pending = app("pending", plan="pro")
    no_exception(pending)
    assert any("the plan in force is Pro." in w.value for w in pending.warning)


def test_a_links_filter_with_a_value_it_cannot_take_is_said_not_dropped_silently(demo_db):
    at = app("explore", tf_min="abc", price_max="-5")
    no_exception(at)
    [warning] = [w.value for w in at.warning if w.value.startswith("Left out of the link's filters")]
    assert "“abc”" in warning and "“-5”" in warning and "tf_min" not in warning
    assert "tf_min" not in at.query_params

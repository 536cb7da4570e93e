"""Language from archived page text: capture choice, text extraction and decoding, offline
detection (py3langid), and `enrich(language=True)` end to end through httpx.MockTransport
(a 429 with Retry-After and a cut-off page among the answers). No request leaves the test."""

from __future__ import annotations

import gzip
import json
import sys
from collections import Counter
from pathlib import Path

import httpx
import pytest

from conftest import NOW, small_demo
from toolkit import Mirror
from toolkit.enrich import language as lang
from toolkit.enrich.language import (
    LOW_CONFIDENCE,
    NO_CAPTURE,
    PAGE_KEY,
    TOO_SHORT,
    ArchivedPage,
    LanguageUnavailable,
    check_page_body,
    decode_html,
    detect_language,
    latest_home_page,
    page_text,
)
from toolkit.enrich.cache import cache_put
from toolkit.enrich.listings import PROGRESS_KEY, enrich
from toolkit.enrich.polite import MIN_INTERVAL
from toolkit.enrich.wayback import CDX_FIELDS, WaybackSummary, parse_cdx_json
from toolkit.store.writer import close_listings, save_listings

EN = (
    "Welcome to our family bakery. Since 1987 we have baked fresh bread every morning with flour from local mills, "
    "and our small team still shapes every loaf by hand. Visit the shop on the market square, order a birthday cake "
    "online, or read about the courses we run on weekends for people who want to learn how to bake at home."
)
FR = (
    "Bienvenue dans notre boulangerie familiale. Depuis 1987, nous préparons chaque matin du pain frais avec de la "
    "farine issue des moulins de la région, et notre petite équipe façonne encore chaque baguette à la main. Passez "
    "nous voir sur la place du marché, commandez un gâteau d'anniversaire en ligne ou découvrez les ateliers que "
    "nous organisons le week-end pour apprendre à faire son pain chez soi."
)
DE = (
    "Willkommen in unserer Familienbäckerei. Seit 1987 backen wir jeden Morgen frisches Brot mit Mehl aus den "
    "Mühlen der Umgebung, und unser kleines Team formt noch immer jeden Laib von Hand. Besuchen Sie unseren Laden "
    "am Marktplatz, bestellen Sie eine Geburtstagstorte online oder lesen Sie mehr über unsere Backkurse am "
    "Wochenende für alle, die zu Hause selbst backen möchten."
)
SV = (
    "Välkommen till vårt familjebageri. Sedan 1987 har vi bakat färskt bröd varje morgon med mjöl från kvarnar i "
    "trakten, och vårt lilla team formar fortfarande varje limpa för hand. Besök butiken vid torget, beställ en "
    "födelsedagstårta på nätet eller läs om kurserna vi håller på helgerna för dig som vill lära dig att baka "
    "hemma i ditt eget kök."
)
PL = (
    "Witamy w naszej rodzinnej piekarni. Od 1987 roku każdego ranka pieczemy świeży chleb z mąki pochodzącej z "
    "okolicznych młynów, a nasz niewielki zespół wciąż formuje każdy bochenek ręcznie. Odwiedź nasz sklep przy "
    "rynku, zamów tort urodzinowy przez internet albo przeczytaj o weekendowych warsztatach dla osób, które chcą "
    "nauczyć się piec chleb w domu."
)
ES = (
    "Bienvenidos a nuestra panadería familiar. Desde 1987 horneamos pan fresco cada mañana con harina de los "
    "molinos de la comarca, y nuestro pequeño equipo sigue dando forma a cada barra a mano. Visite la tienda en la "
    "plaza del mercado, encargue una tarta de cumpleaños por internet o infórmese sobre los cursos que ofrecemos "
    "los fines de semana para aprender a hacer pan en casa."
)
NL = (
    "Welkom bij onze familiebakkerij. Sinds 1987 bakken we elke ochtend vers brood met meel van molens uit de "
    "buurt, en ons kleine team vormt nog steeds elk brood met de hand. Kom langs in de winkel aan het marktplein, "
    "bestel online een verjaardagstaart of lees meer over de cursussen die we in het weekend geven voor iedereen "
    "die thuis zelf brood wil leren bakken."
)


def html_page(text: str, *, head: str = "", lang_attr: str = "") -> str:
    return (
        f"<!DOCTYPE html><html{lang_attr}><head>{head}<title>Bakery</title>"
        "<style>body { font-family: serif } p::after { content: 'style text' }</style>"
        "<script>var banner = 'Dieser Text steht in einem Skript und zählt nicht';</script></head>"
        f"<body><nav><a href='/'>Home</a></nav><main><h1>Bakery</h1><p>{text}</p></main>"
        "<noscript>Bitte aktivieren Sie JavaScript</noscript><template><p>verborgen</p></template>"
        "</body></html>"
    )


# -- text and decoding ------------------------------------------------------------------


def test_page_text_skips_code_and_decodes_entities():
    body = (
        "<html><head><title>Caf&eacute; &amp; bar</title><style>.x{color:red}</style>"
        "<script type='text/javascript'>if (a < b) { document.write('<p>no</p>') }</script></head>"
        "<body><h1>Ol&aacute;&nbsp;mundo</h1><p>One<br>two <b>th</b>ree &#8212; &#x263A; &lt;tag&gt;</p>"
        "<noscript>enable JavaScript</noscript><template><div>inert</div></template>"
        "<!-- a comment --><script/><p>after</p></body></html>"
    )
    assert page_text(body.encode()) == "Café & bar Olá\xa0mundo One two three — ☺ <tag> after".replace("\xa0", " ")


def test_charset_from_header_meta_bom_or_utf8():
    text = "Välkommen till bageriet på torget, öppet även på söndagar"
    latin = f'<html><head><meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"></head><body>{text}'
    assert page_text(latin.encode("latin-1")) == text
    html5 = "<meta charset='windows-1250'><p>Zażółć gęślą jaźń</p>"
    assert page_text(html5.encode("cp1250")) == "Zażółć gęślą jaźń"
    # the HTTP header wins over a meta tag that disagrees with it
    assert page_text(latin.encode("utf-8"), "text/html; charset=utf-8") == text
    assert decode_html(b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "text/html; charset=iso-8859-1") == "<p>café</p>"  # BOM first
    # no charset anywhere: UTF-8, and bytes that do not decode are replaced, not fatal
    assert page_text(b"<p>caf\xc3\xa9 \xff ok</p>") == "café \ufffd ok"
    assert page_text(b"<meta charset=no-such-codec><p>caf\xc3\xa9</p>") == "café"
    # "iso-8859-1" means windows-1252, as in browsers: 0x93/0x94 are quotes
    assert page_text(b"<p>\x93quoted\x94</p>", "text/html; charset=iso-8859-1") == "\u201cquoted\u201d"


# -- detection --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, code", [(EN, "EN"), (FR, "FR"), (DE, "DE"), (SV, "SV"), (PL, "PL"), (ES, "ES"), (NL, "NL")]
)
def test_detects_paragraphs(text, code):
    found = detect_language(page_text(html_page(text).encode()))
    assert (found.language, found.reason) == (code, None)
    assert found.label == code.lower() and found.probability >= lang.MIN_PROBABILITY and found.letters >= 200


def test_short_or_mixed_text_is_undetermined():
    short = detect_language("Under construction. Coming soon!")
    assert (short.language, short.reason, short.letters) == (None, TOO_SHORT, 27)
    assert detect_language(EN[:150]).reason == TOO_SHORT
    crumbs = detect_language("Home About Contact Shop Login " * 12)  # letters enough, no language
    assert (crumbs.language, crumbs.reason) == (None, LOW_CONFIDENCE) and crumbs.probability < 0.9
    assert detect_language(EN[:200] + " " + FR[:200]).reason == LOW_CONFIDENCE
    assert detect_language(FR[:120], min_letters=50).language == "FR"


def test_missing_detector_names_the_extra(monkeypatch, tmp_path):
    monkeypatch.setattr(lang, "_IDENTIFIER", None)
    monkeypatch.setitem(sys.modules, "py3langid", None)  # `import py3langid` now raises ImportError
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)
    with pytest.raises(LanguageUnavailable, match=r'pip install "expired-domains-toolkit\[language\]"'):
        detect_language(EN)
    assert detect_language("too short").reason == TOO_SHORT  # needs no model

    mirror = tiny_mirror(tmp_path)
    sent: list[httpx.Request] = []
    with pytest.raises(LanguageUnavailable, match=r"expired-domains-toolkit\[language\]"):
        enrich(mirror, rdap=False, language=True, transport=httpx.MockTransport(sent.append), sleep=no_sleep)
    assert sent == []  # refused before any request
    enrich(mirror, rdap=False, transport=httpx.MockTransport(lambda r: httpx.Response(200, json=[])), sleep=no_sleep)

    from click.testing import CliRunner

    from toolkit.cli import cli

    result = CliRunner().invoke(cli, ["enrich", "--db", str(mirror.path), "--no-wayback", "--no-rdap", "--language"])
    assert result.exit_code == 2
    assert (
        'edt: --language: language detection needs py3langid: pip install "expired-domains-toolkit[language]"'
        in result.output
    )
    nothing = CliRunner().invoke(cli, ["enrich", "--db", str(mirror.path), "--no-wayback", "--no-rdap"])
    assert nothing.exit_code == 2 and "nothing to do" in nothing.output


# -- which capture ----------------------------------------------------------------------


def cdx_body(domain: str, rows: list[tuple[str, str, str, str]]) -> bytes:
    """A JSON-form CDX answer: (timestamp, original, mimetype, statuscode) per capture."""
    key = ",".join(reversed(domain.split("."))) + ")/"
    data = [list(CDX_FIELDS)] + [
        [key, ts, orig, mime, status, f"D{i}", "-" if status == "-" else "1200"]
        for i, (ts, orig, mime, status) in enumerate(rows)
    ]
    return json.dumps(data).encode()


def test_latest_home_page_is_the_latest_html_200():
    page = parse_cdx_json(
        cdx_body(
            "example.com",
            [
                ("20090105101010", "http://example.com/", "text/html", "200"),
                ("20160203040506", "http://www.example.com:80/", "text/html; charset=utf-8", "200"),
                ("20180101000000", "https://example.com/", "text/html", "301"),
                ("20190101000000", "https://example.com/", "warc/revisit", "-"),
                ("20200101000000", "https://example.com/", "image/png", "200"),
                ("20211300000000", "https://example.com/", "text/html", "200"),  # month 13: no date, not chosen
            ],
        )
    )
    chosen = latest_home_page(page.captures)
    assert chosen == ArchivedPage("20160203040506", "http://www.example.com:80/")
    assert chosen.url == "https://web.archive.org/web/20160203040506id_/http://www.example.com:80/"
    assert latest_home_page(page.captures[2:5]) is None


def test_old_cache_entries_still_read():
    old = {
        "domain": "example.com",
        "snapshots": 3,
        "first_date": "1997-01-26",
        "last_date": "1997-12-11",
        "pages": 1,
        "malformed": 0,
        "bad_timestamps": 0,
        "duplicates": 0,
        "complete": True,
    }
    assert WaybackSummary.from_json(old).snapshots == 3
    assert WaybackSummary.from_json({**old, PAGE_KEY: {"timestamp": "1", "original": "x"}}).snapshots == 3
    assert ArchivedPage.from_json(old.get(PAGE_KEY)) is None


def test_cut_off_page_detected():
    request = httpx.Request("GET", "https://web.archive.org/web/2016id_/http://x.com/")
    whole = httpx.Response(200, content=b"<p>whole</p>", request=request)
    check_page_body(whole)
    cut = httpx.Response(200, content=b"<p>who", headers={"Content-Length": "12"}, request=request)
    with pytest.raises(ValueError, match="cut off: 6 of 12 bytes"):
        check_page_body(cut)
    gz = httpx.Response(
        200,
        content=gzip.compress(b"<p>whole</p>"),
        request=request,
        headers={"Content-Length": "999", "Content-Encoding": "gzip"},
    )
    check_page_body(gz)  # a decoded length says nothing about the encoded one


# -- enrich(language=True) end to end ---------------------------------------------------


def no_sleep(seconds: float) -> None:
    pass


def tiny_mirror(tmp_path: Path) -> Mirror:
    mirror = Mirror(tmp_path / "tiny.db", clock=lambda: NOW, create=True)
    save_listings(
        mirror.connection(),
        [{"id": 1, "name": "example.com", "source": "sedo", "type": "auction"}],
        origin="sync",
        observed_at="2026-11-20T08:00:00Z",
    )
    return mirror


class FakeArchive:
    """CDX answers by domain, archived pages by path (queued; the last one repeats). Records
    each request with the fake clock's time; an unknown request fails the test."""

    def __init__(self, cdx: dict[str, bytes], pages: dict[str, list[httpx.Response]], clock: list[float]):
        self.cdx, self.pages, self.clock = cdx, pages, clock
        self.requests: list[tuple[float, httpx.Request]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append((self.clock[0], request))
        assert request.url.host == "web.archive.org", request.url
        if request.url.path == "/cdx/search/cdx":
            return httpx.Response(
                200, content=self.cdx[request.url.params["url"]], headers={"Content-Type": "application/json"}
            )
        queue = self.pages.get(request.url.path)
        assert queue, f"unexpected request {request.url}"
        response = queue.pop(0) if len(queue) > 1 else queue[0]
        return httpx.Response(response.status_code, headers=response.headers, content=response.content)


def html(body: bytes, content_type: str = "text/html; charset=utf-8", **headers: str) -> httpx.Response:
    return httpx.Response(200, content=body, headers={"Content-Type": content_type, **headers})


def demo_selection(tmp_path: Path, n: int) -> tuple[Mirror, list[tuple[int, str]]]:
    """The small demo mirror with only its first `n` listings (by id) left live."""
    path = small_demo(tmp_path / "demo.db", seed=5)
    mirror = Mirror(path, clock=lambda: NOW)
    frame = mirror.domains_df({}, columns=["id", "name"])
    rows = sorted(zip(frame["id"].astype(int).tolist(), frame["name"].str.lower().tolist()))
    conn = mirror.connection()
    close_listings(conn, [i for i, _ in rows[n:]], closed_at="2026-11-21T00:00:00Z")
    return mirror, rows[:n]


def languages(mirror: Mirror, ids: list[int]) -> list[str | None]:
    conn = mirror.connection()
    return [conn.execute("SELECT language FROM listings WHERE id = ?", (i,)).fetchone()[0] for i in ids]


def test_enrich_language_end_to_end(tmp_path):
    mirror, rows = demo_selection(tmp_path, 7)
    ids = [i for i, _ in rows]
    conn = mirror.connection()
    with conn:  # known starting values: none, then an old EN that a French page replaces, ...
        conn.executemany(
            "UPDATE listings SET language = ? WHERE id = ?", zip([None, "EN", None, None, None, "DE", "IT"], ids)
        )
    stamp = "20160203040506"

    def cdx_for(name: str, home: bool = True) -> bytes:
        rows_ = [("20090105101010", f"http://{name}/", "text/html", "200")] if home else []
        rows_ += [
            ("20180101000000", f"https://{name}/", "text/html", "301"),
            ("20190101000000", f"https://{name}/", "warc/revisit", "-"),
        ]
        if home:
            rows_.insert(1, (stamp, f"http://www.{name}/", "text/html", "200"))
        return cdx_body(name, rows_)

    def path(name: str) -> str:
        return f"/web/{stamp}id_/http://www.{name}/"

    names = [n for _, n in rows]
    de_body = html_page(DE).encode()
    sv_body = html_page(SV, head='<meta http-equiv="Content-Type" content="text/html; charset=iso-8859-1">')
    clock = [0.0]

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    def detect(archive: FakeArchive, wayback: bool):
        """Languages (and the Wayback columns, or not) from this archive, on the fake clock."""
        transport = httpx.MockTransport(archive)
        return enrich(
            mirror, wayback=wayback, rdap=False, language=True, transport=transport, sleep=sleep, clock=lambda: clock[0]
        )

    archive = FakeArchive(
        {name: cdx_for(name, home=i != 6) for i, name in enumerate(names)},
        {
            path(names[0]): [html(html_page(EN).encode())],
            path(names[1]): [
                httpx.Response(429, headers={"Retry-After": "5"}, text="Too Many Requests"),
                html(html_page(FR).encode()),
            ],
            # cut off in transit: shorter than its Content-Length, asked again
            path(names[2]): [
                html(de_body[: len(de_body) // 3], **{"Content-Length": str(len(de_body))}),
                html(de_body),
            ],
            path(names[3]): [html(sv_body.encode("latin-1"), "text/html")],  # charset from the meta tag
            path(names[4]): [html(html_page(PL).encode())],
            path(names[5]): [html(b"<html><body><h1>Under construction</h1><p>Coming soon.</p></body></html>")],
        },
        clock,
    )
    report = detect(archive, wayback=True)

    assert report.errors == [] and report.finished and report.processed == 7
    assert languages(mirror, ids) == ["EN", "FR", "DE", "SV", "PL", "DE", "IT"]  # undetermined: left as they were
    assert report.language_detected == Counter({"EN": 1, "FR": 1, "DE": 1, "SV": 1, "PL": 1})
    assert report.language_undetermined == Counter({TOO_SHORT: 1, NO_CAPTURE: 1})
    assert (report.language_fetched, report.language_cached, report.wayback_fetched) == (6, 0, 7)
    # 7 CDX + 6 pages + the 429's and the cut-off page's second tries
    assert len(archive.requests) == report.traffic.requests == 15
    assert (report.traffic.throttled, report.traffic.retried) == (1, 2) and report.traffic.waited >= 5
    times = [t for t, _ in archive.requests]
    assert all(b - a >= MIN_INTERVAL["web.archive.org"] - 1e-9 for a, b in zip(times, times[1:]))  # paced per host
    pages = [r for _, r in archive.requests if r.url.path.startswith("/web/")]
    assert str(pages[0].url) == f"https://web.archive.org/web/{stamp}id_/http://www.{names[0]}/"
    assert all(r.headers["User-Agent"].startswith("expired-domains-toolkit/") for _, r in archive.requests)
    assert mirror.get_domain(ids[0])["data"]["wayback_snapshots"] == 4  # the Wayback columns too
    assert (
        "language: 5 detected (DE 1, EN 1, FR 1, PL 1, SV 1), 2 undetermined "
        f"({NO_CAPTURE} 1, {TOO_SHORT} 1); 6 fetched, 0 from cache"
    ) in report.lines()
    assert conn.execute("SELECT COUNT(*) FROM mirror_meta WHERE key = ?", (PROGRESS_KEY,)).fetchone()[0] == 0
    cached = dict(conn.execute("SELECT domain, outcome FROM enrich_cache WHERE kind = 'language'").fetchall())
    assert cached == {**{n: "ok" for n in names[:5]}, names[5]: "undetermined", names[6]: "undetermined"}

    # a second run, with or without the Wayback columns, asks the archive nothing
    for wayback in (True, False):
        silent = FakeArchive({}, {}, clock)
        again = detect(silent, wayback=wayback)
        assert silent.requests == [] and again.traffic.requests == 0 and again.language_cached == 7
        assert again.language_detected == report.language_detected
        assert languages(mirror, ids) == ["EN", "FR", "DE", "SV", "PL", "DE", "IT"]


def test_language_reads_cdx_when_the_cached_summary_has_no_page(tmp_path):
    mirror = tiny_mirror(tmp_path)
    conn = mirror.connection()
    old = {
        "domain": "example.com",
        "snapshots": 99,
        "first_date": "2001-05-05",
        "last_date": "2020-01-01",
        "pages": 1,
        "malformed": 0,
        "bad_timestamps": 0,
        "duplicates": 0,
        "complete": True,
    }
    cache_put(conn, "wayback", "example.com", fetched_at="2026-11-21T00:00:00Z", outcome="ok", value=old)
    clock = [0.0]
    archive = FakeArchive(
        {"example.com": cdx_body("example.com", [("20160203040506", "http://example.com/", "text/html", "200")])},
        {"/web/20160203040506id_/http://example.com/": [html(html_page(NL).encode())]},
        clock,
    )
    # the Wayback step alone is content with the old entry
    report = enrich(mirror, rdap=False, transport=httpx.MockTransport(archive), sleep=no_sleep)
    assert archive.requests == [] and report.wayback_cached == 1
    # the language step needs the page, so the CDX rows are read again; wayback columns untouched
    report = enrich(
        mirror, wayback=False, rdap=False, language=True, transport=httpx.MockTransport(archive), sleep=no_sleep
    )
    paths = [r.url.path for _, r in archive.requests]
    assert paths == ["/cdx/search/cdx", "/web/20160203040506id_/http://example.com/"]
    row = mirror.get_domain(1)["data"]
    assert row["language"] == "NL" and row["wayback_snapshots"] == 99
    value = json.loads(conn.execute("SELECT value FROM enrich_cache WHERE kind = 'wayback'").fetchone()[0])
    assert value[PAGE_KEY] == {"timestamp": "20160203040506", "original": "http://example.com/"}


def test_archive_failures_are_reported_not_cached(tmp_path):
    mirror = tiny_mirror(tmp_path)
    archive = FakeArchive(
        {"example.com": cdx_body("example.com", [("20160203040506", "http://example.com/", "text/html", "200")])},
        {"/web/20160203040506id_/http://example.com/": [httpx.Response(503)]},
        [0.0],
    )
    report = enrich(
        mirror,
        wayback=False,
        rdap=False,
        language=True,
        retries=1,
        transport=httpx.MockTransport(archive),
        sleep=no_sleep,
    )
    assert [(k, d) for k, d, _ in report.errors] == [("language", "example.com")] and "503" in report.errors[0][2]
    assert report.updated == 0 and mirror.get_domain(1)["data"]["language"] is None
    conn = mirror.connection()
    assert conn.execute("SELECT COUNT(*) FROM enrich_cache WHERE kind = 'language'").fetchone()[0] == 0
    # a 404 is an answer: undetermined, cached
    archive.pages = {"/web/20160203040506id_/http://example.com/": [httpx.Response(404)]}
    report = enrich(
        mirror, wayback=False, rdap=False, language=True, transport=httpx.MockTransport(archive), sleep=no_sleep
    )
    assert report.language_undetermined == Counter({"HTTP 404": 1}) and report.errors == []
    assert conn.execute("SELECT outcome FROM enrich_cache WHERE kind = 'language'").fetchone() == ("undetermined",)

"""Hostile and odd feed files (toolkit/ingest/feed_file.py's bounds): each hostile one is refused
whole, in one line naming the feed or file and the fix, exit status 2, nothing written, while
the refusing process's own peak memory (VmHWM of a child process, not this test process's)
stays small. Odd but honest files (a BOM, CRLF line ends, a quoted comma) are read as their
publisher meant. The files are written here in each feed's real format."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from test_feeds import DAYS, NC_HEADER, Publisher, gd, godaddy_zip, nc_auctions
from toolkit.store.feed_catalog import FEEDS

ROOT = Path(__file__).resolve().parents[1]
GIB = 1 << 30
# The child prints its own peak resident memory when it exits (VmHWM: ru_maxrss would keep,
# across exec, the peak of this test process it was forked from).
CHILD = (
    "import atexit, re, sys\n"
    "atexit.register(lambda: sys.stderr.write('peak-kib %s\\n' % re.search(r'VmHWM:\\s+(\\d+)', "
    "open('/proc/self/status').read()).group(1)))\n"
    "from toolkit.cli import main\nsys.argv = ['edt', *sys.argv[1:]]\nmain()\n"
)
_RUNS = itertools.count()
PEAK_MIB = 300  # a refusal holds no more than the command itself needs


def edt(tmp_path: Path, *args: str, config: str = "") -> tuple[int, list[str], int]:
    """Run `edt ARGS` in a child process: (exit status, its output lines, its peak memory in MiB)."""
    (tmp_path / "config.toml").write_text(config)
    # a pacing bucket of its own per run: six requests a minute to one host would make the tests wait
    budget = tmp_path / f"budget-{next(_RUNS)}.db"
    env = {**os.environ, "EDT_CONFIG": str(tmp_path / "config.toml"), "EDT_BUDGET_FILE": str(budget)}
    ran = subprocess.run(
        [sys.executable, "-c", CHILD, *args], capture_output=True, text=True, timeout=120, cwd=ROOT, env=env
    )
    peak = re.search(r"^peak-kib (\d+)$", ran.stderr, flags=re.M)
    assert peak, ran.stderr
    lines = [line for line in (ran.stdout + ran.stderr).splitlines() if line and not line.startswith("peak-kib")]
    return ran.returncode, lines, int(peak.group(1)) // 1024


def listings(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT count(*) FROM listings").fetchone()[0]


def feed_config(publisher: Publisher, feed: str, path: str, extra: str = "") -> str:
    """A config with every declared feed off but `feed`, served by `publisher` at `path`."""
    off = "".join(f"[feeds.{name}]\nenabled = false\n" for name in FEEDS if name != feed)
    return off + f'[feeds.{feed}]\nenabled = true\nurl = "{publisher.url}{path}"\n{extra}'


@pytest.fixture()
def publisher():
    p = Publisher()
    yield p
    p.close()


def sync_refused(
    tmp_path: Path, publisher: Publisher, feed: str, path: str, body: bytes, extra: str = ""
) -> tuple[str, int]:
    """Serve `body`, run `edt sync --feeds FEED` on a mirror holding one listing: (the feed's one
    line, the child's peak MiB), after checking exit 2 and that the mirror kept what it held."""
    db = tmp_path / "mirror.db"
    if not db.exists():
        publisher.publish("/seed.json.zip", godaddy_zip([gd("kept.com", "BuyNow", "$5", 0, "")]), DAYS[0])
        seeded, _, _ = edt(
            tmp_path,
            "sync",
            "--db",
            str(db),
            "--feeds",
            "godaddy-closeouts",
            config=feed_config(publisher, "godaddy-closeouts", "/seed.json.zip"),
        )
        assert seeded == 0
    assert listings(db) == 1
    publisher.publish(path, body, DAYS[1])
    status, lines, peak = edt(
        tmp_path, "sync", "--db", str(db), "--feeds", feed, config=feed_config(publisher, feed, path, extra)
    )
    said = [line for line in lines if line.startswith(f"{feed}: ")]
    assert status == 2 and len(said) == 1, lines
    assert said[0].startswith(f"{feed}: format: ") and said[0].endswith("nothing of it was written"), said
    assert listings(db) == 1  # the mirror kept what it held
    return said[0], peak


def zip_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, body in members.items():
            archive.writestr(name, body)
    return buffer.getvalue()


# -- too big ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gigabyte_field(tmp_path_factory) -> Path:
    """A GoDaddy inventory zip of a few MB whose JSON holds one field of 1 GB."""
    path = tmp_path_factory.mktemp("bomb") / "all_listings.json.zip"
    chunk = b"a" * (1 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("all_listings.json", "w", force_zip64=True) as out:
            out.write(b'{"meta": {"totalRecords": 1}, "data": [{"domainName": "')
            for _ in range(1024):
                out.write(chunk)
            out.write(b'.com", "auctionType": "Bid", "price": "$5"}]}')
    return path


def test_a_field_of_a_gigabyte_is_refused_in_bounded_memory(tmp_path, gigabyte_field):
    assert gigabyte_field.stat().st_size < 8 << 20
    db = tmp_path / "mirror.db"
    status, lines, peak = edt(tmp_path, "ingest", "godaddy", "--file", str(gigabyte_field), "--db", str(db))
    assert status == 2, lines
    assert len(lines) == 1 and lines[0].startswith(
        f"edt: {gigabyte_field}!all_listings.json: line 1: a record or value longer than 1,024 KB"
    ), lines
    assert lines[0].endswith("raise --max-field-kb")
    assert listings(db) == 0 and peak < PEAK_MIB, peak


def test_an_expansion_past_the_feeds_bound_is_refused_by_the_declared_size(tmp_path, publisher):
    # 64 MB of honest records, zipped to well under 1 MB, against a bound of 16 MB set in the config
    record = json.dumps(gd("x" * 40 + ".com", "BuyNow", "$5", 0, "")).encode()
    body = b'{"meta": {}, "data": [' + b",".join([record] * (64 * (1 << 20) // len(record))) + b"]}"
    line, peak = sync_refused(
        tmp_path,
        publisher,
        "godaddy-all",
        "/all_listings.json.zip",
        zip_of({"all_listings.json": body}),
        "max_size_mb = 16\n",
    )
    assert "the file expands past 16 MB, the most a feed file may be" in line
    assert "raise max_size_mb in [feeds.godaddy-all] of the config file" in line
    assert peak < PEAK_MIB


def test_a_gzip_that_expands_past_the_bound_is_refused_as_it_unzips(tmp_path):
    # gzip declares no size up front: the stream is counted as it unzips
    path = tmp_path / "deleted_domains.txt.gz"
    block = b"".join(b"name%07d.pl\n" % i for i in range(10_000))
    with gzip.open(path, "wb", compresslevel=1) as out:
        for _ in range(300):  # 36 MB of names
            out.write(block)
    db = tmp_path / "mirror.db"
    status, lines, peak = edt(
        tmp_path, "ingest", "droplist", "--file", str(path), "--db", str(db), "--max-size-mb", "16"
    )
    assert status == 2 and len(lines) == 1, lines
    assert lines[0] == (
        f"edt: {path}: the file expands past 16 MB, the most a feed file may be; if the "
        "publisher's file really is that big, raise --max-size-mb"
    )
    assert listings(db) == 0 and peak < PEAK_MIB, peak


def test_a_line_of_a_gigabyte_is_refused_in_bounded_memory(tmp_path):
    path = tmp_path / "Namecheap_Market_Sales.csv"
    with path.open("wb") as out:
        out.write(nc_auctions([("fine.com", "5.00", 0, "2026-12-01T16:00:00Z")]))
        chunk = b"b" * (1 << 20)
        for _ in range(1024):
            out.write(chunk)
        out.write(b"\n")
    db = tmp_path / "mirror.db"
    status, lines, peak = edt(tmp_path, "ingest", "namecheap", "--file", str(path), "--db", str(db))
    assert status == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"edt: {path}: line 3: line 3 is longer than 1,024 KB"), lines
    assert listings(db) == 0 and peak < PEAK_MIB, peak


# -- not what it says ---------------------------------------------------------------------------


def test_a_zip_of_many_members_is_refused(tmp_path, publisher):
    members = {f"part-{i}.json": b"{}" for i in range(40)}
    line, peak = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", zip_of(members))
    assert "the archive holds 40 files, more than the 16 a feed archive may" in line and peak < PEAK_MIB


def test_a_zip_naming_a_path_outside_itself_is_refused(tmp_path, publisher):
    body = zip_of({"../../etc/all_listings.json": json.dumps({"data": [gd("a.com", "Bid", "$1", 0, "")]}).encode()})
    line, peak = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", body)
    assert "the archive names a file outside itself ('../../etc/all_listings.json')" in line and peak < PEAK_MIB
    assert not (tmp_path / "etc").exists()


def test_files_that_are_not_what_their_names_say(tmp_path, publisher):
    gzipped = gzip.compress(json.dumps({"data": [gd("a.com", "Bid", "$1", 0, "")]}).encode())
    line, peak = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", gzipped)
    assert "the file is named .zip but holds gzip data" in line and peak < PEAK_MIB
    zipped = zip_of({"Namecheap_Market_Sales.csv": nc_auctions([("a.com", "1.00", 0, "2026-12-01T16:00:00Z")])})
    line, _ = sync_refused(tmp_path, publisher, "namecheap-auctions", "/sales.csv", zipped)
    assert "the file is named .csv but holds a zip archive" in line
    csv_inside = zip_of({"all_listings_ending_today.json": b"domainName,auctionType,price\na.com,Bid,$1\n"})
    line, _ = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", csv_inside)
    assert "the file is named .json but is not JSON" in line
    binary = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8
    line, _ = sync_refused(tmp_path, publisher, "namecheap-auctions", "/sales.csv", binary)
    assert "not a text file (it holds NUL bytes)" in line
    for page in (b"<html><body>Down for maintenance</body></html>", b"\n<!DOCTYPE html>\n<html>\n</html>\n"):
        line, _ = sync_refused(tmp_path, publisher, "nask-pl", "/pl.txt", page)  # a list of names: any line reads
        assert "a web page, not the feed's file (the publisher's site may be down for maintenance" in line


def test_invalid_utf8_names_its_line(tmp_path, publisher):
    body = nc_auctions(
        [("cafe.com", "1.00", 0, "2026-12-01T16:00:00Z"), ("menu.com", "2.00", 0, "2026-12-01T16:00:00Z")]
    )
    latin1 = body.replace(b"menu.com", "menü.com".encode("latin-1"))
    line, peak = sync_refused(tmp_path, publisher, "namecheap-auctions", "/sales.csv", latin1)
    assert ": line 3: not UTF-8 text (byte 0xfc); convert the file to UTF-8" in line and peak < PEAK_MIB


# -- odd but honest -----------------------------------------------------------------------------


def test_a_bom_crlf_and_a_quoted_comma_are_read_as_meant(tmp_path):
    from toolkit import Mirror
    from toolkit.ingest import ingest_file

    row = (
        '"https://www.namecheap.com/market/sale/a,b/",quaint.com,2026-08-15T08:38:08Z,2026-12-01T16:00:00Z,'
        '"1,250.00",1.00,13.98,3,4,,,140.00,340,241000,2015-01-15T00:00:00Z,,,1,7,21,16,,55,14,"1,116.00"'
    )
    path = tmp_path / "Namecheap_Market_Sales.csv"
    path.write_bytes(b"\xef\xbb\xbf" + f"{NC_HEADER}\r\n{row}\r\n".encode())
    with Mirror(tmp_path / "m.db", create=True) as mirror:
        report = ingest_file(mirror, "namecheap", path, observed_at="2026-08-21T06:00:00Z")
        assert (report.listings.new, report.skipped) == (1, [])
        got = mirror.connection().execute("SELECT name, purchase_url, max_bid, bids_count FROM listings").fetchone()
        raw = json.loads(mirror.connection().execute("SELECT raw FROM raw_records").fetchone()[0])
    assert got == ("quaint.com", "https://www.namecheap.com/market/sale/a,b/", 1250.0, 3)
    assert (
        raw["feed_record"]["url"] == "https://www.namecheap.com/market/sale/a,b/"
    )  # the header's first cell, BOM gone
    assert raw["feed_record"]["goValue"] == "1,116.00"  # the last cell, its CR gone


# -- JSON a parser would choke on ---------------------------------------------------------------


def test_a_record_nested_a_hundred_thousand_deep_is_refused_in_bounded_memory(tmp_path, publisher):
    # 200 KB: ijson names each event by its whole path, so building it held gigabytes.
    deep = b"[" * 100_000 + b"]" * 100_000
    body = b'{"data": [{"domainName": "deep.com", "auctionType": "Bid", "price": "$1", "x": ' + deep + b"}]}"
    line, peak = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", zip_of({"a.json": body}))
    assert "the JSON nests arrays or objects more than 64 deep" in line and peak < PEAK_MIB


def test_the_depth_of_json_is_followed_through_strings_and_escapes_across_reads():
    import random

    from toolkit.ingest.feed_file import _JsonDepth

    def deepest(text: str) -> int:  # a character at a time, for comparison
        depth = most = 0
        inside = escaped = False
        for ch in text:
            if inside:
                escaped, inside = (False, True) if escaped else (ch == "\\", ch != '"')
            elif ch == '"':
                inside = True
            elif ch in "[{":
                depth += 1
                most = max(most, depth)
            elif ch in "]}":
                depth -= 1
        return most

    draw = random.Random(11)

    def value(level: int):
        if level > 6 or draw.random() < 0.3:
            return draw.choice(['a"b', "x\\", "[{]}", '\\\\"', 3, None, "\\" * 7])
        if draw.random() < 0.5:
            return [value(level + 1) for _ in range(draw.randrange(4))]
        return {f'k{i}\\"[': value(level + 1) for i in range(draw.randrange(4))}

    for _ in range(300):
        text = json.dumps({"data": [value(0) for _ in range(5)]})
        data, most = text.encode(), deepest(text)
        for limit in (most - 1, most):
            follow, over, at = _JsonDepth(limit), False, 0
            while at < len(data):
                size = draw.randrange(1, 40)  # reads that cut strings and runs of backslashes
                over |= follow.exceeded(data[at : at + size])
                at += size
            assert over == (most > limit) and (follow.depth, follow.in_string) == (0, False)


def test_json_with_a_bom_is_read_and_broken_json_is_one_line(tmp_path, publisher):
    from toolkit import Mirror
    from toolkit.ingest import IngestError, ingest_file

    record = json.dumps({"data": [gd("bom.com", "Bid", "$5", 0, "")]}).encode()
    path = tmp_path / "all_listings.json"
    path.write_bytes(b"\xef\xbb\xbf" + record)
    with Mirror(tmp_path / "m.db", create=True) as mirror:
        assert ingest_file(mirror, "godaddy", path, observed_at="2026-08-21T06:00:00Z").listings.new == 1
        pretty = json.dumps({"data": [gd(f"n{i}.com", "Bid", "$5", 0, "") for i in range(2000)]}, indent=1)
        lines = pretty.split("\n")
        lines[11] += " @@"  # line 12
        path.write_text("\n".join(lines))
        with pytest.raises(IngestError) as caught:
            ingest_file(mirror, "godaddy", path, observed_at="2026-08-22T06:00:00Z")
        path.write_bytes(b'{"data": [{"domainName": "s.com", "note": "\\udc80"}]}')
        with pytest.raises(IngestError) as surrogate:
            ingest_file(mirror, "godaddy", path, observed_at="2026-08-22T06:00:00Z")
    said = str(caught.value)
    assert "\n" not in said and "malformed JSON in lines 1-" in said and "(right here)" not in said
    first, last = map(int, re.search(r"lines 1-([\d,]+)", said).group(0)[6:].replace(",", "").split("-"))
    assert first <= 12 <= last
    assert "not UTF-8 text" in str(surrogate.value) and "\n" not in str(surrogate.value)


def test_a_json_record_past_max_field_kb_is_refused(tmp_path, publisher):
    record = gd("wide.com", "Bid", "$1", 0, "")
    record["note"] = "x" * 50_000
    body = json.dumps({"data": [gd("a.com", "Bid", "$1", 0, ""), record]}).encode()
    line, _ = sync_refused(
        tmp_path, publisher, "godaddy-ending", "/ending.json.zip", zip_of({"a.json": body}), "max_field_kb = 10\n"
    )
    assert "record 2 is longer than 10 KB" in line and "raise max_field_kb in [feeds.godaddy-ending]" in line


def test_an_encrypted_member_and_a_zip_declaring_a_million_entries_are_refused(tmp_path, publisher):
    body = bytearray(zip_of({"a.json": json.dumps({"data": [gd("a.com", "Bid", "$1", 0, "")]}).encode()}))
    body[6] |= 1  # the member's "encrypted" flag, in its local header ...
    central = body.rindex(b"PK\x01\x02")
    body[central + 8] |= 1  # ... and in the central directory
    line, _ = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", bytes(body))
    assert "the archive member is encrypted" in line
    many = bytearray(zip_of({"a.json": b"{}"}))
    end = many.rindex(b"PK\x05\x06")
    many[end + 8 : end + 12] = (1_000_000 % 65536).to_bytes(2, "little") * 2  # entries declared, this disk and all
    line, peak = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", bytes(many))
    assert "the archive declares 16,960 entries" in line and peak < PEAK_MIB


@pytest.mark.parametrize("value", ["inf", "nan", "1e400", "0", "-1"])
def test_a_limit_that_is_not_a_finite_number_above_zero_is_refused(tmp_path, value):
    from toolkit.store.feed_catalog import feed_table

    path = tmp_path / "all_listings.json"
    path.write_text(json.dumps({"data": [gd("a.com", "Bid", "$1", 0, "")]}))
    status, lines, _ = edt(
        tmp_path, "ingest", "godaddy", str(path), "--db", str(tmp_path / "m.db"), "--max-size-mb", value
    )
    assert status == 2 and any("--max-size-mb" in line and "above 0 and at most" in line for line in lines), lines
    assert not (tmp_path / "m.db").exists() or listings(tmp_path / "m.db") == 0
    with pytest.raises(ValueError, match=r"\[feeds.godaddy-ending\] max_field_kb = .*above 0 and at most 1,048,576"):
        feed_table({"feeds": {"godaddy-ending": {"max_field_kb": float(value)}}})


def test_a_header_alone_does_not_close_every_listing_of_the_feed(tmp_path, publisher, monkeypatch):
    db = tmp_path / "mirror.db"
    config = feed_config(publisher, "namecheap-auctions", "/sales.csv")

    def sync(day: int) -> tuple[int, list[str], int]:
        monkeypatch.setenv("EDT_NOW", f"2026-08-2{day}T06:00:00Z")  # a day apart: closing compares sightings
        return edt(tmp_path, "sync", "--db", str(db), "--feeds", "namecheap-auctions", config=config)

    ends = "2030-01-01T16:00:00Z"
    publisher.publish("/sales.csv", nc_auctions([("one.com", "5.00", 1, ends), ("two.com", "7.00", 2, ends)]), DAYS[0])
    assert sync(1)[0] == 0
    publisher.publish("/sales.csv", (NC_HEADER + "\n").encode(), DAYS[1])
    status, lines, _ = sync(2)
    said = [line for line in lines if line.startswith("namecheap-auctions: ")]
    assert status == 2 and len(said) == 1, lines
    assert "the file lists no listing, yet it would close the 2 the mirror holds open from it" in said[0]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT count(*) FROM listings WHERE closed_at IS NULL").fetchone()[0] == 2
    # a file that still lists one closes the other, as before
    publisher.publish("/sales.csv", nc_auctions([("one.com", "5.00", 1, ends)]), DAYS[2])
    assert sync(3)[0] == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT name FROM listings WHERE closed_at IS NULL").fetchall() == [("one.com",)]


def test_a_csv_whose_last_row_is_cut_inside_a_value_writes_nothing(tmp_path):
    from toolkit import Mirror
    from toolkit.ingest import IngestError, ingest_file

    path = tmp_path / "bardate_domains.csv"
    path.write_text("name,release_at\nq1.se,2030-01-01\nq2.se,2030-0")  # every column there, the last one cut
    with Mirror(tmp_path / "m.db", create=True) as mirror:
        with pytest.raises(IngestError, match=r"line 3: the last line is incomplete \('2030-0' is not a date"):
            ingest_file(mirror, "bardate", path, observed_at="2026-08-21T06:00:00Z")
        assert mirror.connection().execute("SELECT count(*) FROM pending_delete").fetchone()[0] == 0
        path.write_text("name,release_at\nq1.se,2030-01-01\nq2.se,2030-01-02")  # whole, without a final line end
        assert ingest_file(mirror, "bardate", path, observed_at="2026-08-21T06:00:00Z").pending.new == 2


# -- memory by bytes, not rows ------------------------------------------------------------------


def _wide_record(keys: int, **fields) -> dict:
    return {**{f"k{i}": 0 for i in range(keys)}, **fields}


def test_a_csv_of_a_hundred_thousand_columns_is_refused_in_bounded_memory(tmp_path, publisher):
    columns = 120_000
    rows = "".join(f"w{r}.com,12," + ",".join(["ab"] * columns) + "\n" for r in range(20))
    body = ("name,price," + ",".join(f"c{i}" for i in range(columns)) + "\n" + rows).encode()
    line, peak = sync_refused(tmp_path, publisher, "namecheap-auctions", "/sales.csv", body)
    assert "the header has 120,002 columns, more than the 1,000 a feed file may have" in line and peak < PEAK_MIB


def test_the_look_ahead_for_a_feeds_record_holds_megabytes_not_a_thousand_records(tmp_path, publisher):
    # 300 records of about 100 KB, none a GoDaddy record: held whole before the file was refused
    body = json.dumps({"data": [_wide_record(11_000, x=j) for j in range(300)]}).encode()
    line, peak = sync_refused(tmp_path, publisher, "godaddy-ending", "/ending.json.zip", zip_of({"a.json": body}))
    assert "no record has a domainName field" in line and peak < PEAK_MIB


def test_a_file_of_long_records_is_written_in_chunks_of_megabytes(tmp_path):
    from toolkit.ingest.file_ingest import CHUNK_BYTES, INGEST_CHUNK

    records = [_wide_record(11_000, **gd(f"r{j}.com", "Bid", "$5", 0, "")) for j in range(600)]
    path = tmp_path / "all_listings.json"
    path.write_text(json.dumps({"data": records}))
    assert len(records) < INGEST_CHUNK and path.stat().st_size > 2 * CHUNK_BYTES  # one chunk of rows, many of bytes
    status, lines, peak = edt(tmp_path, "ingest", "godaddy", str(path), "--db", str(tmp_path / "m.db"))
    assert status == 0 and listings(tmp_path / "m.db") == 600, lines
    assert peak < 500, peak  # 1.9 GB for 1,500 such records when a chunk was 5,000 rows whatever their size


def test_a_bound_below_a_megabyte_is_said_in_its_own_unit(tmp_path):
    path = tmp_path / "all_listings.json"
    path.write_text(json.dumps({"data": [gd(f"n{i}.com", "Bid", "$1", 0, "") for i in range(20)]}))
    status, lines, _ = edt(
        tmp_path, "ingest", "godaddy", str(path), "--db", str(tmp_path / "m.db"), "--max-size-mb", "0.0001"
    )
    assert status == 2 and any("the file expands past 104 bytes" in line for line in lines), lines  # not "past 0 MB"

"""How often does `toolkit.ingest.lifecycle.predict_drop_date` hit the registry's official date?

    python -m toolkit.analysis.backtest --db data/mirror.db
    python -m toolkit.analysis.backtest --official bardate=bardate_domains.json --evidence seen.csv

Official dates: pending-delete rows whose day the registry published: a bardate list's
`release_at`, a dated drop list (a date column, the list's day, its header or file name;
not a lifecycle prediction: `drop_date_reason` tells them apart). `--official FEED=PATH`
ingests such lists into a scratch mirror first (the `edt ingest` adapters).

Evidence: earlier sightings of the same names in one of the six statuses, with the day:
- the mirror's other pending rows: the sync's (CatchDoms's `whois_status` and
  `first_disappeared_at`) and zonediff's (left the zone on that day: serverHold);
- `--evidence PATH`: CSV `domain,status,observed_at` (your own daily RDAP or WHOIS log).
Each name's earliest sighting of a status is taken as that status's first day, as the
predictor assumes, and its prediction is compared with the official day.

The report gives, per TLD, the names with an official day, those with evidence, the share
predicted exactly and within one and three days, and why the others got no date.

Windows from daily zone snapshots (`--zones`):

    python -m toolkit.analysis.backtest --zones 'zone/nu_domains_*.txt.gz' --official 'bardate=release_lists/*.csv' --tld .nu

replays the snapshots into a scratch mirror (`edt ingest zonediff`: each name that left the
zone gets the window [last seen + days, first absent + days] and its most likely day), ingests
the official lists, pairs them by name and prints per TLD: official names, paired names, pairs
whose snapshots are one day apart, the share of those predicted exactly and within one day, the
share of all pairs whose official day lies inside the window, the mean absolute error in days,
and the outliers (official day outside the window) counted with their reason. Official names
without a pair are counted with their reason too. Any bad row or file exits 2 naming it.
"""

from __future__ import annotations

import argparse
import csv
import glob as globbing
import json
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from ..ingest.lifecycle import predict_drop_date
from ..names import split_domain
from ..query.params import PENDING_STATUSES

__all__ = [
    "Sighting",
    "Outcome",
    "TldScore",
    "official_dates",
    "mirror_sightings",
    "read_sightings",
    "backtest",
    "WindowPair",
    "WindowScore",
    "zone_pairs",
    "window_scores",
    "run_zone_backtest",
    "window_report_lines",
    "main",
]

OFFICIAL_ORIGINS = ("ingest:bardate", "ingest:droplist")
_ORIGIN_MARKS = ", ".join("?" * len(OFFICIAL_ORIGINS))  # the SQL placeholders for OFFICIAL_ORIGINS


@dataclass(frozen=True)
class Sighting:
    """A name seen in a status on a day."""

    domain: str
    status: str
    day: date


@dataclass(frozen=True)
class Outcome:
    domain: str
    official: date
    predicted: date | None
    evidence: Sighting
    reason: str

    @property
    def error_days(self) -> int | None:
        return None if self.predicted is None else (self.predicted - self.official).days


@dataclass
class TldScore:
    tld: str
    official: int = 0
    outcomes: list[Outcome] = field(default_factory=list)

    def within(self, days: int) -> int:
        return sum(1 for o in self.outcomes if o.error_days is not None and abs(o.error_days) <= days)

    @property
    def predicted(self) -> int:
        return sum(1 for o in self.outcomes if o.predicted is not None)

    def no_date_reasons(self) -> Counter:
        return Counter(o.reason for o in self.outcomes if o.predicted is None)


def official_dates(conn: sqlite3.Connection) -> dict[str, date]:
    """{domain: the registry's day} from ingested lists, predictions left out."""
    rows = conn.execute(
        "SELECT p.domain, p.estimated_drop_date, r.raw FROM pending_delete p "
        "LEFT JOIN raw_records r ON r.kind = 'pending_delete' AND r.id = p.id "
        f"WHERE p.origin IN ({_ORIGIN_MARKS}) AND p.estimated_drop_date IS NOT NULL",
        OFFICIAL_ORIGINS,
    )
    found: dict[str, date] = {}
    for domain, day, raw in rows:
        reason = (json.loads(raw) if raw else {}).get("drop_date_reason") or ""
        if not reason.startswith("predicted"):
            found[domain.lower()] = date.fromisoformat(day[:10])
    return found


def mirror_sightings(conn: sqlite3.Connection) -> list[Sighting]:
    """Pending rows not from an official list, with the day their status was first seen."""
    rows = conn.execute(
        "SELECT domain, whois_status, COALESCE(first_disappeared_at, first_seen_at) FROM pending_delete "
        f"WHERE (origin IS NULL OR origin NOT IN ({_ORIGIN_MARKS})) "
        "AND whois_status IS NOT NULL AND COALESCE(first_disappeared_at, first_seen_at) IS NOT NULL",
        OFFICIAL_ORIGINS,
    )
    return [Sighting(d.lower(), s, date.fromisoformat(t[:10])) for d, s, t in rows if s in PENDING_STATUSES]


def read_sightings(path: str | Path) -> list[Sighting]:
    """An evidence CSV: a header with `domain`, `status`, `observed_at`; bad rows raise
    ValueError naming the file and line."""
    found: list[Sighting] = []
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = {"domain", "status", "observed_at"} - set(reader.fieldnames or ())
        if missing:
            raise ValueError(
                f"{path}: line 1: the header lacks {', '.join(sorted(missing))} (expected domain,status,observed_at)"
            )
        for row in reader:
            line = reader.line_num
            status = (row["status"] or "").strip()
            if status not in PENDING_STATUSES:
                raise ValueError(f"{path}: line {line}: status {status!r} is not one of {', '.join(PENDING_STATUSES)}")
            try:
                day = date.fromisoformat((row["observed_at"] or "").strip()[:10])
            except ValueError:
                raise ValueError(
                    f"{path}: line {line}: observed_at {row['observed_at']!r} is not a date "
                    "(YYYY-MM-DD or an ISO timestamp)"
                ) from None
            found.append(Sighting(row["domain"].strip().lower().rstrip("."), status, day))
    return found


def backtest(official: Mapping[str, date], sightings: Iterable[Sighting]) -> dict[str, TldScore]:
    """Per top-level domain (`.pl` also holds `.com.pl`), the outcome of each official name that has evidence."""
    first: dict[str, dict[str, date]] = defaultdict(dict)  # domain -> status -> earliest day
    for s in sightings:
        if s.domain in official and (s.status not in first[s.domain] or s.day < first[s.domain][s.status]):
            first[s.domain][s.status] = s.day
    scores: dict[str, TldScore] = {}
    for domain, day in sorted(official.items()):
        tld = split_domain(domain)[1]  # the public suffix, with its dot: .com.pl
        registry_tld = "." + tld.rpartition(".")[2]  # scored per registry: .pl
        score = scores.setdefault(registry_tld, TldScore(registry_tld))
        score.official += 1
        seen = first.get(domain)
        if not seen:
            continue
        # The sighting the registry's timeline can use, earliest first; else the earliest.
        candidates = sorted(seen.items(), key=lambda item: item[1])
        predictions = [
            (predict_drop_date(tld, status, when), Sighting(domain, status, when)) for status, when in candidates
        ]
        (predicted, reason), evidence = next(((p, s) for p, s in predictions if p[0] is not None), predictions[0])
        score.outcomes.append(Outcome(domain, day, predicted, evidence, reason))
    return scores


def report_lines(scores: Mapping[str, TldScore]) -> list[str]:
    head = f"{'TLD':<8}{'official':>9}{'evidence':>9}{'dated':>7}{'exact':>8}{'±1 d':>8}{'±3 d':>8}{'mean err':>10}"
    lines = [head]
    totals = TldScore("all")
    for tld in sorted(scores):
        score = scores[tld]
        totals.official += score.official
        totals.outcomes += score.outcomes
        lines.append(_row(score))
    if len(scores) > 1:
        lines.append(_row(totals))
    for score in scores.values():
        for reason, n in score.no_date_reasons().most_common(3):
            lines.append(f"  {score.tld}: {n:,} without a date: {reason}")
    return lines


def _share(n: int, of: int) -> str:
    return f"{100 * n / of:.1f}%" if of else "-"


def _row(score: TldScore) -> str:
    errors = [abs(o.error_days) for o in score.outcomes if o.error_days is not None]
    mean = f"{sum(errors) / len(errors):.1f} d" if errors else "-"
    dated = score.predicted
    return (
        f"{score.tld:<8}{score.official:>9,}{len(score.outcomes):>9,}{dated:>7,}"
        f"{_share(score.within(0), dated):>8}{_share(score.within(1), dated):>8}{_share(score.within(3), dated):>8}"
        f"{mean:>10}"
    )


# -- windows from daily zone snapshots -------------------------------------------------------


@dataclass(frozen=True)
class WindowPair:
    """An official release day and the window predicted for the same name."""

    domain: str
    official: date
    estimate: date | None
    start: date | None
    end: date | None
    last_seen: date | None  # the last snapshot that held the name
    first_absent: date | None  # the first later snapshot without it

    @property
    def gap_days(self) -> int | None:
        return (
            None if self.last_seen is None or self.first_absent is None else (self.first_absent - self.last_seen).days
        )

    @property
    def error_days(self) -> int | None:
        return None if self.estimate is None else (self.estimate - self.official).days

    @property
    def in_window(self) -> bool:
        return self.start is not None and self.end is not None and self.start <= self.official <= self.end

    def outlier_reason(self) -> str | None:
        """Why the official day is outside the window, or None when it is inside."""
        if self.in_window:
            return None
        if self.start is None or self.end is None:
            return "no window: the lifecycle gives this status no fixed length"
        if self.official > self.end:
            return (
                "official day after the window: the name left the zone days before it was deactivated "
                "(its nameservers removed, or held out of the zone, before the registry deactivated it)"
            )
        return "official day before the window: deactivated before it left the zone (a stale snapshot)"

    @property
    def outside_days(self) -> int:
        """How far the official day lies outside the window (0 inside)."""
        if self.in_window or self.start is None or self.end is None:
            return 0
        return (self.official - self.end).days if self.official > self.end else (self.start - self.official).days


@dataclass
class WindowScore:
    tld: str
    official: int = 0
    pairs: list[WindowPair] = field(default_factory=list)
    unpaired: Counter = field(default_factory=Counter)

    @property
    def one_day(self) -> list[WindowPair]:
        return [p for p in self.pairs if p.gap_days == 1]

    def _share(self, hits: int, of: int) -> float | None:
        return round(hits / of, 4) if of else None

    @property
    def exact_share(self) -> float | None:
        pairs = self.one_day
        return self._share(sum(1 for p in pairs if p.error_days == 0), len(pairs))

    @property
    def within_1_share(self) -> float | None:
        pairs = self.one_day
        return self._share(sum(1 for p in pairs if p.error_days is not None and abs(p.error_days) <= 1), len(pairs))

    @property
    def window_share(self) -> float | None:
        return self._share(sum(1 for p in self.pairs if p.in_window), len(self.pairs))

    @property
    def mean_abs_error(self) -> float | None:
        errors = [abs(p.error_days) for p in self.pairs if p.error_days is not None]
        return round(sum(errors) / len(errors), 3) if errors else None

    def outliers(self) -> list[dict]:
        found: dict[str, list[WindowPair]] = defaultdict(list)
        for pair in self.pairs:
            reason = pair.outlier_reason()
            if reason is not None:
                found[reason].append(pair)
        return [
            {
                "reason": reason,
                "count": len(pairs),
                "days_outside": sorted(p.outside_days for p in pairs),
                "examples": [
                    {
                        "domain": p.domain,
                        "official": p.official.isoformat(),
                        "window": [p.start.isoformat() if p.start else None, p.end.isoformat() if p.end else None],
                        "last_seen": p.last_seen.isoformat() if p.last_seen else None,
                        "first_absent": p.first_absent.isoformat() if p.first_absent else None,
                    }
                    for p in pairs[:5]
                ],
            }
            for reason, pairs in sorted(found.items(), key=lambda item: -len(item[1]))
        ]

    def to_dict(self) -> dict:
        return {
            "tld": self.tld,
            "official": self.official,
            "pairs": len(self.pairs),
            "one_day_pairs": len(self.one_day),
            "exact_share": self.exact_share,
            "within_1_share": self.within_1_share,
            "window_share": self.window_share,
            "mean_abs_error": self.mean_abs_error,
            "outliers": self.outliers(),
        }


def _day(text: str | None) -> date | None:
    return date.fromisoformat(text[:10]) if text else None


def zone_pairs(conn: sqlite3.Connection, official: Mapping[str, date] | None = None) -> dict[str, WindowPair]:
    """{domain: WindowPair} for each official name that also has a zonediff window in the mirror."""
    from ..ingest.common import day_in_name

    official = official_dates(conn) if official is None else official
    rows = conn.execute(
        "SELECT p.domain, p.estimated_drop_date, p.drop_window_start, p.drop_window_end, p.first_disappeared_at, "
        "r.raw FROM pending_delete p LEFT JOIN raw_records r ON r.kind = 'pending_delete' AND r.id = p.id "
        "WHERE p.origin = 'ingest:zonediff'"
    )
    pairs: dict[str, WindowPair] = {}
    for domain, estimate, start, end, gone_at, raw in rows:
        domain = domain.lower()
        if domain not in official:
            continue
        record = (json.loads(raw) if raw else {}).get("feed_record") or {}
        last = None
        if isinstance(record, dict):  # the last snapshot that held the name
            last = _day(day_in_name(record.get("previous_file") or ""))
        pairs[domain] = WindowPair(
            domain, official[domain], _day(estimate), _day(start), _day(end), last, _day(gone_at)
        )
    return pairs


def window_scores(
    official: Mapping[str, date],
    pairs: Mapping[str, WindowPair],
    tld: str | None = None,
    presence: Mapping[str, str] | None = None,
) -> dict[str, WindowScore]:
    """Per registry TLD (`.nu`), the pairs and the official names without one (by `presence`
    reason, when given: {domain: why it has no pair})."""
    want = tld.strip().lower().lstrip(".") if tld else None
    scores: dict[str, WindowScore] = {}
    for domain, day in sorted(official.items()):
        registry_tld = "." + domain.rpartition(".")[2]
        if want and registry_tld != "." + want:
            continue
        score = scores.setdefault(registry_tld, WindowScore(registry_tld))
        score.official += 1
        if domain in pairs:
            score.pairs.append(pairs[domain])
        else:
            score.unpaired[(presence or {}).get(domain, "no zonediff row")] += 1
    if want and "." + want not in scores:
        scores["." + want] = WindowScore("." + want)
    return scores


def _expand(spec: str) -> list[str]:
    if Path(spec).is_dir():
        return sorted(str(p) for p in Path(spec).iterdir() if p.is_file())
    if any(ch in spec for ch in "*?["):
        found = sorted(globbing.glob(spec))
        if not found:
            raise ValueError(f"{spec}: no file matches")
        return found
    return [spec]


def _check_new_file(keep: str | Path) -> None:
    """`--db NEW_FILE` before the replay: new, in a folder that exists (one line, not an errno)."""
    from ..formats import file_in_the_way, not_a_folder

    path = Path(keep)
    if file_in_the_way(path) is not None:
        raise ValueError(not_a_folder("--db", keep))
    if path.exists():
        raise ValueError(f"--db {keep}: the file exists; the backtest keeps its mirror only in a new file")
    if not path.parent.is_dir():
        raise ValueError(f"--db {keep}: folder {path.parent} does not exist; create it or choose another path")


def run_zone_backtest(
    zones: str, official: list[str], tld: str | None = None, keep: str | Path | None = None
) -> dict[str, WindowScore]:
    """Replay `zones` (a folder or a glob of daily snapshots) and ingest the `official` lists
    (`bardate=GLOB` or `droplist=GLOB`) into a scratch mirror, then score the windows.
    Every file is read strictly: a bad row raises `IngestError`/`ValueError` naming file and line.
    `keep`: a new file to copy the scratch mirror to, only once every file was read."""
    if keep is not None:
        _check_new_file(keep)
    from ..query import Mirror
    from ..ingest import IngestError, ingest_file, snapshot_files, zone_names
    from ..ingest.feed_file import read_feed

    specs: list[tuple[str, str]] = []
    for spec in official:
        feed, _, path = spec.partition("=")
        if feed not in ("bardate", "droplist") or not path:
            raise ValueError(f"--official {spec}: expected bardate=PATH or droplist=PATH (a file, folder or glob)")
        specs += [(feed, p) for p in _expand(path)]
    with tempfile.TemporaryDirectory(prefix="edt-backtest-") as scratch:
        mirror = Mirror(Path(scratch) / "backtest.db", create=True)
        try:
            report = ingest_file(mirror, "zonediff", zones, observed_at="2000-01-01T00:00:00Z")
            for feed, path in specs:
                report = ingest_file(mirror, feed, path)
                if report.skipped:
                    first = report.skipped[0]
                    raise IngestError(
                        first.file, first.line, first.reason, "fix the list: a backtest reads official lists strictly"
                    )
            official_days = official_dates(mirror.connection())
            pairs = zone_pairs(mirror.connection(), official_days)
            if keep is not None:
                try:
                    target = sqlite3.connect(keep)
                    with target:
                        mirror.connection().backup(target)
                    target.close()
                except sqlite3.Error as exc:
                    raise ValueError(f"--db {keep}: cannot write it there ({exc}); choose a writable folder") from None
        finally:
            mirror.close()
    files = snapshot_files(zones)
    first_tld, in_first = zone_names(read_feed(files[0][1]), tld=tld)
    _, in_last = zone_names(read_feed(files[-1][1]), tld=tld)
    presence: dict[str, str] = {}
    for domain in official_days:
        if domain in pairs:
            continue
        if domain.rpartition(".")[2] != first_tld:
            presence[domain] = f"no snapshot of its TLD (the snapshots are .{first_tld})"
        elif domain in in_last:
            presence[domain] = "still in the zone in the last snapshot (deactivated later, or left and came back)"
        elif domain not in in_first:
            presence[domain] = (
                "in no snapshot: never in the zone during the replay (a name without nameservers "
                "is not in the zone file)"
            )
        else:
            presence[domain] = "other"
    return window_scores(official_days, pairs, tld, presence)


def _pct(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.1f}%"


def window_report_lines(scores: Mapping[str, WindowScore]) -> list[str]:
    head = f"{'TLD':<6}{'official':>9}{'pairs':>7}{'1-day':>7}{'exact':>8}{'±1 d':>8}{'in window':>11}{'mean err':>10}"
    lines = [head]
    for tld in sorted(scores):
        sc = scores[tld]
        mean = "-" if sc.mean_abs_error is None else f"{sc.mean_abs_error:.2f} d"
        lines.append(
            f"{tld:<6}{sc.official:>9,}{len(sc.pairs):>7,}{len(sc.one_day):>7,}{_pct(sc.exact_share):>8}"
            f"{_pct(sc.within_1_share):>8}{_pct(sc.window_share):>11}{mean:>10}"
        )
    for tld in sorted(scores):
        sc = scores[tld]
        gaps = Counter(p.gap_days for p in sc.pairs)
        if gaps:
            lines.append(
                f"  {tld}: pairs by days between the two snapshots: "
                + ", ".join(f"{g} d: {n:,}" for g, n in sorted(gaps.items(), key=lambda i: (i[0] is None, i[0] or 0)))
            )
        errors = Counter(p.error_days for p in sc.pairs if p.error_days is not None)
        if errors:
            lines.append(
                f"  {tld}: estimate minus official day: "
                + ", ".join(f"{e:+d} d: {n:,}" for e, n in sorted(errors.items()))
            )
        for item in sc.outliers():
            names = ", ".join(
                f"{e['domain']} (official {e['official']}, window {e['window'][0]}..{e['window'][1]})"
                for e in item["examples"]
            )
            lines.append(
                f"  {tld}: {item['count']:,} outlier{'s' * (item['count'] != 1)}, {item['reason']}; days outside: "
                f"{', '.join(map(str, item['days_outside']))}; {names}"
            )
        for reason, n in sc.unpaired.most_common():
            lines.append(f"  {tld}: {n:,} official names without a pair: {reason}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.analysis.backtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="a mirror with official lists and sightings (default: a scratch mirror)")
    parser.add_argument(
        "--official",
        action="append",
        default=[],
        metavar="FEED=PATH",
        help="a bardate or droplist file (or folder, or glob) with official dates (repeatable)",
    )
    parser.add_argument(
        "--evidence",
        action="append",
        default=[],
        metavar="PATH",
        help="CSV domain,status,observed_at of earlier sightings (repeatable)",
    )
    parser.add_argument(
        "--zones", metavar="GLOB", help="a folder or glob of daily zone snapshots to replay (windows; a scratch mirror)"
    )
    parser.add_argument("--tld", help="with --zones: report this TLD only (e.g. .nu)")
    parser.add_argument("--json", action="store_true", help="with --zones: print the scores as JSON")
    parser.add_argument("--keep", metavar="PATH", help="with --zones: keep the scratch mirror in this new file")
    args = parser.parse_args(argv)
    if args.zones:
        if args.db or args.evidence:
            parser.error("--zones replays into a scratch mirror: drop --db and --evidence")
        if not args.official:
            parser.error("--zones needs --official bardate=GLOB (the registry's days to pair with)")
        from ..ingest import IngestError

        try:
            windows = run_zone_backtest(args.zones, args.official, args.tld, args.keep)
        except (IngestError, ValueError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps([windows[t].to_dict() for t in sorted(windows)], indent=2))
        else:
            print("\n".join(window_report_lines(windows)))
        return 0
    if not args.db and not args.official:
        parser.error("give --db MIRROR, or --official FEED=PATH (with --evidence PATH)")
    from ..query import Mirror
    from ..ingest import IngestError, ingest_file

    with tempfile.TemporaryDirectory(prefix="edt-backtest-") as scratch:
        mirror = Mirror(args.db or Path(scratch) / "backtest.db", create=True)
        try:
            for spec in args.official:
                feed, _, path = spec.partition("=")
                if feed not in ("bardate", "droplist") or not path:
                    parser.error(f"--official {spec}: expected bardate=PATH or droplist=PATH")
                for one in _expand(path):
                    ingest_file(mirror, feed, one)
            sightings = mirror_sightings(mirror.connection())
            for path in args.evidence:
                sightings += read_sightings(path)
            scores = backtest(official_dates(mirror.connection()), sightings)
        except (IngestError, ValueError, OSError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        finally:
            mirror.close()
    if not scores:
        print("no official dates: ingest a bardate list or a dated drop list (edt ingest), or pass --official")
        return 0
    print("\n".join(report_lines(scores)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

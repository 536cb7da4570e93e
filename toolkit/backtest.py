"""How often does `toolkit.lifecycle.predict_drop_date` hit the registry's official date?

    python -m toolkit.backtest --db data/mirror.db
    python -m toolkit.backtest --official bardate=bardate_domains.json --evidence seen.csv

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
"""

from __future__ import annotations

import argparse
import csv
import json
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from .lifecycle import predict_drop_date
from .names import split_domain
from .params import PENDING_STATUSES

__all__ = ["Sighting", "Outcome", "TldScore", "official_dates", "mirror_sightings", "read_sightings", "backtest", "main"]

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
            raise ValueError(f"{path}: line 1: the header lacks {', '.join(sorted(missing))} "
                             "(expected domain,status,observed_at)")  # fmt: skip
        for row in reader:
            line = reader.line_num
            status = (row["status"] or "").strip()
            if status not in PENDING_STATUSES:
                raise ValueError(f"{path}: line {line}: status {status!r} is not one of {', '.join(PENDING_STATUSES)}")
            try:
                day = date.fromisoformat((row["observed_at"] or "").strip()[:10])
            except ValueError:
                raise ValueError(f"{path}: line {line}: observed_at {row['observed_at']!r} is not a date "
                                 "(YYYY-MM-DD or an ISO timestamp)") from None  # fmt: skip
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
        predictions = [(predict_drop_date(tld, status, when), Sighting(domain, status, when))
                       for status, when in candidates]  # fmt: skip
        (predicted, reason), evidence = next(((p, s) for p, s in predictions if p[0] is not None), predictions[0])
        score.outcomes.append(Outcome(domain, day, predicted, evidence, reason))
    return scores


def report_lines(scores: Mapping[str, TldScore]) -> list[str]:
    head = (f"{'TLD':<8}{'official':>9}{'evidence':>9}{'dated':>7}{'exact':>8}{'±1 d':>8}{'±3 d':>8}"
            f"{'mean err':>10}")  # fmt: skip
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
    return (f"{score.tld:<8}{score.official:>9,}{len(score.outcomes):>9,}{dated:>7,}"
            f"{_share(score.within(0), dated):>8}{_share(score.within(1), dated):>8}{_share(score.within(3), dated):>8}"
            f"{mean:>10}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.backtest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="a mirror with official lists and sightings (default: a scratch mirror)")
    parser.add_argument("--official", action="append", default=[], metavar="FEED=PATH",
                        help="a bardate or droplist file with official dates (repeatable)")
    parser.add_argument("--evidence", action="append", default=[], metavar="PATH",
                        help="CSV domain,status,observed_at of earlier sightings (repeatable)")
    args = parser.parse_args(argv)
    if not args.db and not args.official:
        parser.error("give --db MIRROR, or --official FEED=PATH (with --evidence PATH)")
    from . import Mirror
    from .ingest import IngestError, ingest_file

    with tempfile.TemporaryDirectory(prefix="edt-backtest-") as scratch:
        mirror = Mirror(args.db or Path(scratch) / "backtest.db")
        try:
            for spec in args.official:
                feed, _, path = spec.partition("=")
                if feed not in ("bardate", "droplist") or not path:
                    parser.error(f"--official {spec}: expected bardate=PATH or droplist=PATH")
                ingest_file(mirror, feed, path)
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

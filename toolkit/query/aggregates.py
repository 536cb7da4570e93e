"""Chart aggregates: what the Trust Flow / Citation Flow and archive charts draw, counted over
every listing an `/api/domains` request matches (not a sample).

Both engines reduce the matches to the same small arrays of keys and counts: the columnar
index from the request's mask (each row counts 1), SQLite from `GROUP BY`s over the
request's WHERE (each group counts its rows). One set of functions below turns those
arrays into `ChartCounts`, so each aggregate is defined once, whichever engine answers.

Keys are held as int64 with `NULL` for a missing value, texts as codes into a list of texts
(None for NULL).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

__all__ = [
    "ChartCounts",
    "ZONE_SLOPE",
    "ZONE_OFFSET",
    "SNAPSHOT_EDGES",
    "in_zone",
    "snapshot_bin_label",
    "topic_of",
    "from_index",
    "from_sql",
    "index_holds",
]

# "CF far above TF" (links bought or spammed: many links, little trust): CF >= 2 TF + 10.
ZONE_SLOPE, ZONE_OFFSET = 2, 10
# Log-spaced snapshot bins (1-2-5 per decade): bin k >= 1 holds EDGES[k-1] <= snapshots < EDGES[k]
# (the last bin is open), bin 0 holds no snapshot at all.
SNAPSHOT_EDGES = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000)
METRIC_MAX = 100  # TF and CF are whole numbers 0-100
NULL = np.iinfo(np.int64).min
# The index columns the aggregates read, and the texts among them.
_NUMBERS = ("trust_flow", "citation_flow", "wayback_first_date", "wayback_snapshots")
_TEXTS = ("source", "ttf_topic", "language")


@dataclass(frozen=True)
class ChartCounts:
    """Counts over all `total` matching listings.

    - `tf_cf`: (TF, CF) -> listings, for rows with both (whole numbers 0-100);
      `without_tf_cf` rows lack one (or hold one outside 0-100) and are left out.
    - `zone_by_topic`, `zone_by_source`: first segment of `ttf_topic` (None: no topic), or
      source -> (inside, outside) the "CF far above TF" zone, over the rows of `tf_cf`.
    - `ages`: age in whole years (as the API's `age`: the birthday rule) -> listings;
      `first_years`: year of the first Wayback snapshot -> listings; `without_first_date`
      rows have no first snapshot date.
    - `snapshots_by_age`: (age, snapshot bin of SNAPSHOT_EDGES) -> listings, for rows with
      both a first date and a snapshot count.
    - `languages`: language (None: unknown) -> listings.
    """

    total: int
    tf_cf: dict[tuple[int, int], int]
    zone_by_topic: dict[str | None, tuple[int, int]]
    zone_by_source: dict[str | None, tuple[int, int]]
    ages: dict[int, int]
    first_years: dict[int, int]
    snapshots_by_age: dict[tuple[int, int], int]
    languages: dict[str | None, int]

    @property
    def without_tf_cf(self) -> int:
        return self.total - sum(self.tf_cf.values())

    @property
    def without_first_date(self) -> int:
        return self.total - sum(self.ages.values())

    def tf_cf_grid(self) -> np.ndarray:
        """The (TF, CF) counts as a 101 x 101 array, rows TF, columns CF."""
        grid = np.zeros((METRIC_MAX + 1, METRIC_MAX + 1), dtype=np.int64)
        for (tf, cf), n in self.tf_cf.items():
            grid[tf, cf] = n
        return grid


def in_zone(tf: Any, cf: Any) -> Any:
    """Whether (TF, CF) lies in the "CF far above TF" zone (scalars or arrays)."""
    return cf >= ZONE_SLOPE * tf + ZONE_OFFSET


def snapshot_bin_label(k: int) -> str:
    """`0`, `1`, `2–4`, ..., `100,000+`: the snapshot counts bin k holds."""
    if k <= 0:
        return "0"
    low = SNAPSHOT_EDGES[k - 1]
    if k >= len(SNAPSHOT_EDGES):
        return f"{low:,}+"
    high = SNAPSHOT_EDGES[k] - 1
    return f"{low:,}" if high == low else f"{low:,}–{high:,}"


def topic_of(ttf_topic: str | None) -> str | None:
    """The top category of a topic path (`Recreation` of `Recreation/Travel`); None when blank."""
    if ttf_topic is None:
        return None
    head = ttf_topic.split("/")[0].strip()
    return head or None


# -- the one definition of each aggregate ----------------------------------------------------
# Each takes distinct keys and the count of rows holding them (`weights`), as GROUP BY gives.


def _in_grid(tf: np.ndarray, cf: np.ndarray) -> np.ndarray:
    return (tf >= 0) & (tf <= METRIC_MAX) & (cf >= 0) & (cf <= METRIC_MAX)


def _tf_cf_cells(tf: np.ndarray, cf: np.ndarray, weights: np.ndarray) -> dict[tuple[int, int], int]:
    keep = _in_grid(tf, cf)
    side = METRIC_MAX + 1
    flat = np.bincount(tf[keep] * side + cf[keep], weights=weights[keep], minlength=side * side)
    return {(int(c // side), int(c % side)): int(flat[c]) for c in np.flatnonzero(flat)}


def _zone_counts(
    codes: np.ndarray, texts: list[str | None], tf: np.ndarray, cf: np.ndarray, weights: np.ndarray, label: Any = None
) -> dict[str | None, tuple[int, int]]:
    """label -> (inside, outside) the zone, over the rows in the grid; `label` maps a text to
    the label it counts under (several texts may share one)."""
    labels = [label(t) if label else t for t in texts]
    distinct = sorted(set(labels), key=lambda v: (v is None, v or ""))
    slot = np.array([distinct.index(v) for v in labels] or [0], dtype=np.int64)
    keep = _in_grid(tf, cf)
    at, w, zone = slot[codes[keep]], weights[keep], in_zone(tf[keep], cf[keep])
    inside = np.bincount(at[zone], weights=w[zone], minlength=len(distinct))
    outside = np.bincount(at[~zone], weights=w[~zone], minlength=len(distinct))
    return {v: (int(inside[i]), int(outside[i])) for i, v in enumerate(distinct) if inside[i] or outside[i]}


def _ages_and_years(days: np.ndarray, today: date) -> tuple[np.ndarray, np.ndarray]:
    """Age in whole years (the birthday rule of `age_in_years`) and year, of days since 1970."""
    moments = days.astype("datetime64[D]")
    years = moments.astype("datetime64[Y]").astype(np.int64) + 1970
    months = moments.astype("datetime64[M]")
    month = months.astype(np.int64) % 12 + 1
    day = (moments - months.astype("datetime64[D]")).astype(np.int64) + 1
    ahead = month * 100 + day > today.month * 100 + today.day  # this year's birthday is still to come
    return today.year - years - ahead, years


def _sums(keys: np.ndarray, weights: np.ndarray) -> dict[int, int]:
    values, where = np.unique(keys, return_inverse=True)
    sums = np.bincount(where.ravel(), weights=weights, minlength=len(values))
    return {int(v): int(n) for v, n in zip(values, sums) if n}


_BINS = len(SNAPSHOT_EDGES) + 1  # bins 0 .. len(SNAPSHOT_EDGES)


def _archive_counts(
    days: np.ndarray, bins: np.ndarray, weights: np.ndarray, today: date
) -> tuple[dict[int, int], dict[int, int], dict[tuple[int, int], int]]:
    """(ages, first years, (age, snapshot bin) counts) of the rows with a first snapshot date."""
    keep = days != NULL
    ages, years = _ages_and_years(days[keep], today)
    w, bins = weights[keep], bins[keep]
    both = bins != NULL
    low = int(ages.min(initial=0))
    joint = {divmod(key, _BINS): n for key, n in _sums((ages[both] - low) * _BINS + bins[both], w[both]).items()}
    return _sums(ages, w), _sums(years, w), {(age + low, k): n for (age, k), n in joint.items()}


def _label_counts(codes: np.ndarray, texts: list[str | None], weights: np.ndarray) -> dict[str | None, int]:
    sums = np.bincount(codes, weights=weights, minlength=len(texts))
    out: dict[str | None, int] = {}
    for text, n in zip(texts, sums):
        if n:
            out[text] = out.get(text, 0) + int(n)
    return out


# -- the columnar index ---------------------------------------------------------------------


def index_holds(index: Any) -> bool:
    """Whether the columnar index holds every column the aggregates read, in a usable form."""
    unusable = set(index.meta.get("unusable", ()))
    return all(c in index.arrays and c not in unusable for c in _NUMBERS) and all(
        c in index.meta.get("codes", {}) for c in _TEXTS
    )


def _group_by(columns: list[np.ndarray], sizes: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """GROUP BY over columns of small whole numbers (column i in 0 .. sizes[i] - 1): the
    distinct key tuples and their row counts, through one bincount of a mixed-radix key."""
    key = np.zeros(len(columns[0]), dtype=np.int64)
    for column, size in zip(columns, sizes):
        key = key * size + column
    counts = np.bincount(key, minlength=1)
    rest = np.flatnonzero(counts)
    found = counts[rest]
    keys = []
    for size in reversed(sizes):
        rest, part = np.divmod(rest, size)
        keys.append(part)
    return keys[::-1], found


def from_index(index: Any, mask: np.ndarray, today: date) -> ChartCounts:
    """The counts of the rows `mask` picks in the columnar index: the same groups the SQL
    path's GROUP BYs give, counted by bincount, then the shared definitions above."""
    rows = np.flatnonzero(mask)
    held = lambda column: index.arrays[column][rows]  # noqa: E731
    texts = {c: [*index.meta["codes"][c], None] for c in _TEXTS}  # the code past the last text is NULL
    side = METRIC_MAX + 1
    tf, cf = held("trust_flow"), held("citation_flow")
    metric = np.flatnonzero(_in_grid(tf, cf))  # NULL is the type's minimum: never in the grid
    tf, cf = tf[metric].astype(np.int64), cf[metric].astype(np.int64)
    (source, s_tf, s_cf), by_source = _group_by(
        [held("source")[metric].astype(np.int64), tf, cf], [len(texts["source"]), side, side]
    )
    (topic, t_tf, t_cf), by_topic = _group_by(
        [held("ttf_topic")[metric].astype(np.int64), tf, cf], [len(texts["ttf_topic"]), side, side]
    )
    days, snapshots = held("wayback_first_date"), held("wayback_snapshots")
    dated = np.flatnonzero(days != np.iinfo(days.dtype).min)
    days = days[dated].astype(np.int64)
    snapshots = snapshots[dated]
    bins = np.where(
        snapshots != np.iinfo(snapshots.dtype).min,
        np.searchsorted(np.array(SNAPSHOT_EDGES), snapshots, side="right"),
        _BINS,
    )
    low = int(days.min()) if len(days) else 0
    (day, bin_), by_day = _group_by([days - low, bins], [int(days.max(initial=low)) - low + 1, _BINS + 1])
    ages, years, joint = _archive_counts(day + low, np.where(bin_ == _BINS, NULL, bin_), by_day, today)
    (language,), by_language = _group_by([held("language").astype(np.int64)], [len(texts["language"])])
    return ChartCounts(
        total=len(rows),
        tf_cf=_tf_cf_cells(s_tf, s_cf, by_source),
        zone_by_topic=_zone_counts(topic, texts["ttf_topic"], t_tf, t_cf, by_topic, topic_of),
        zone_by_source=_zone_counts(source, texts["source"], s_tf, s_cf, by_source),
        ages=ages,
        first_years=years,
        snapshots_by_age=joint,
        languages=_label_counts(language, texts["language"], by_language),
    )


# -- SQLite ---------------------------------------------------------------------------------


def _snapshot_bin_sql(column: str) -> str:
    """The snapshot bin of `column` in SQL: the bins `np.searchsorted(SNAPSHOT_EDGES, n, "right")` gives."""
    steps = " ".join(f"WHEN {column} >= {edge} THEN {k}" for k, edge in reversed(list(enumerate(SNAPSHOT_EDGES, 1))))
    return f"CASE WHEN {column} IS NULL THEN NULL {steps} ELSE 0 END"


def _whole(values: list[Any]) -> np.ndarray:
    """Stored numbers as int64, NULL (and anything not a whole number) as NULL."""
    out = np.full(len(values), NULL, dtype=np.int64)
    for i, v in enumerate(values):
        if isinstance(v, int) or (isinstance(v, float) and v.is_integer()):
            out[i] = int(v)
    return out


def _coded(values: list[Any]) -> tuple[np.ndarray, list[str | None]]:
    texts: list[str | None] = []
    slots: dict[Any, int] = {}
    codes = np.zeros(len(values), dtype=np.int64)
    for i, v in enumerate(values):
        if v not in slots:
            slots[v] = len(texts)
            texts.append(v)
        codes[i] = slots[v]
    return codes, texts


def _days(values: list[Any]) -> np.ndarray:
    """`YYYY-MM-DD` texts as days since 1970; NULL for NULL or any other form."""
    known: dict[Any, int] = {}

    def day(text: Any) -> int:
        if text not in known:
            known[text] = NULL
            if isinstance(text, str) and len(text) == 10:
                try:
                    known[text] = int(np.datetime64(text, "D").astype(np.int64))
                except ValueError:
                    pass
        return known[text]

    return np.array([day(v) for v in values], dtype=np.int64)


def from_sql(conn: sqlite3.Connection, where: str, args: list[Any], today: date) -> ChartCounts:
    """The counts of the listings matching `where` (an `/api/domains` request's WHERE), by
    `GROUP BY` in SQLite: four scans, from a few dozen groups (languages) to tens of thousands
    (topic x TF x CF at full scale)."""

    def grouped(*keys: str, also: str = "") -> list[list[Any]]:
        positions = ", ".join(str(i) for i in range(1, len(keys) + 1))
        rows = conn.execute(
            f"SELECT {', '.join(keys)}, count(*) FROM listings WHERE ({where}) {also} GROUP BY {positions}", list(args)
        ).fetchall()
        return [list(column) for column in zip(*rows)] if rows else [[] for _ in range(len(keys) + 1)]

    metrics = "AND trust_flow IS NOT NULL AND citation_flow IS NOT NULL"
    source, tf, cf, by_source = grouped("source", "trust_flow", "citation_flow", also=metrics)
    topic, topic_tf, topic_cf, by_topic = grouped("ttf_topic", "trust_flow", "citation_flow", also=metrics)
    first, bins, by_first = grouped(
        "wayback_first_date", _snapshot_bin_sql("wayback_snapshots"), also="AND wayback_first_date IS NOT NULL"
    )
    language, by_language = grouped("language")
    tf_values, cf_values = _whole(tf), _whole(cf)
    topic_codes, topic_texts = _coded(topic)
    source_codes, source_texts = _coded(source)
    language_codes, language_texts = _coded(language)
    ages, years, joint = _archive_counts(_days(first), _whole(bins), np.array(by_first, dtype=np.int64), today)
    return ChartCounts(
        total=int(sum(by_language)),
        tf_cf=_tf_cf_cells(tf_values, cf_values, np.array(by_source, dtype=np.int64)),
        zone_by_topic=_zone_counts(
            topic_codes, topic_texts, _whole(topic_tf), _whole(topic_cf), np.array(by_topic, dtype=np.int64), topic_of
        ),
        zone_by_source=_zone_counts(
            source_codes, source_texts, tf_values, cf_values, np.array(by_source, dtype=np.int64)
        ),
        ages=ages,
        first_years=years,
        snapshots_by_age=joint,
        languages=_label_counts(language_codes, language_texts, np.array(by_language, dtype=np.int64)),
    )

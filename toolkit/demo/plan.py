"""The demo's listing plan: how many records a scale makes, and for every listing its source,
kind, TLD, language, theme, dates, price and bids, in id (= created_at) order (`plan_listings`),
before any record is made; and the earlier states of the auctions whose bids have a history
(`history_states`). Cheap: columns of NumPy arrays over the whole dataset.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any

import numpy as np

from ..sources import SOURCES
from .catalog import PLATFORMS, REGFREE_TLDS, Kind, Platform, langs_for
from .clock import DAY, HOUR, anchor_of, iso, month_back
from .name_maker import NameMaker
from .words import LANGS, THEMES

__all__ = [
    "Scale",
    "SCALES",
    "CHUNK",
    "LISTING_ID_BASE",
    "scale_of",
    "allocate",
    "platform_counts",
    "ListingPlan",
    "TldCodes",
    "plan_listings",
    "history_states",
    "draw_prices",
    "draw_bids",
    "regfree_batches",
    "regfree_columns",
    "pick_tlds",
    "name_columns",
]

CHUNK = 4096  # records are made this many at a time
LISTING_ID_BASE = 38_400_000
LANG_KEYS = tuple(LANGS)


@dataclass(frozen=True)
class Scale:
    """How many records a scale makes: platform listings, regfree rows, pending-delete rows."""

    listings: int
    regfree: int
    pending: int


SCALES: dict[str, Scale] = {
    "small": Scale(listings=5_000, regfree=1_500, pending=1_000),
    "full": Scale(listings=563_000, regfree=164_000, pending=120_000),
}


def scale_of(scale: str | Scale) -> Scale:
    """A `Scale`, or the one a name (`small`, `full`; case and spaces ignored) stands for."""
    if isinstance(scale, Scale):
        return scale
    key = str(scale).strip().lower()
    if key not in SCALES:
        raise ValueError(f"unknown demo scale {scale!r}; choose one of {', '.join(SCALES)}")
    return SCALES[key]


def allocate(weights: list[float], total: int, minimum: int = 1) -> list[int]:
    """Split `total` by `weights`, at least `minimum` each (the sum may exceed `total` slightly)."""
    w = np.asarray(weights, dtype=float)
    return [max(minimum, int(round(x))) for x in w / w.sum() * total]


def platform_counts(scale: str | Scale) -> dict[str, int]:
    """Listings per platform slug at a scale: the full-scale shares, at least 2 each."""
    sc = scale_of(scale)
    return dict(zip((p.slug for p in PLATFORMS), allocate([p.full for p in PLATFORMS], sc.listings, 2)))


def round_price(values: np.ndarray, rounding: str) -> np.ndarray:
    """Prices as people set them: whole units, .99, x,980 yen, 149 / 1,299."""
    if rounding == "cents99":
        return np.floor(values) + 0.99
    if rounding == "jpy":
        hundreds = np.round(values / 100) * 100
        return np.where(hundreds >= 2000, np.round(values / 1000) * 1000 - 20, np.maximum(hundreds, 100))
    if rounding == "nines":
        magnitude = 10 ** np.floor(np.log10(np.maximum(values, 10)) - 1)
        return np.maximum(np.round(values / magnitude) * magnitude - 1, 9)
    return np.round(values)


def _fetch_time(rng: np.random.Generator, moments: np.ndarray, anchor: int) -> np.ndarray:
    """Move each moment to the daily fetch (05:00-07:00 UTC) of its day, never after `anchor`."""
    day = (moments // DAY) * DAY
    fetched = day + 5 * HOUR + rng.integers(0, 2 * HOUR, moments.shape[0])
    return np.where(fetched >= anchor - 60, fetched - DAY, fetched)


def draw_prices(rng: np.random.Generator, spec: Kind, rounding: str, n: int) -> np.ndarray:
    """`n` prices of a listing kind: its fixed price, or drawn log-normal around its median,
    clipped to its range and rounded as people set them."""
    if spec.price[0] == "fixed":
        return np.full(n, float(spec.price[1]))
    _, median, sigma, low, high = spec.price
    return round_price(np.clip(median * np.exp(sigma * rng.standard_normal(n)), low, high), rounding)


def draw_bids(
    rng: np.random.Generator, price: np.ndarray, share: float, mean: float, sigma: float
) -> tuple[np.ndarray, np.ndarray]:
    """(bids, top bid) of auctions at `price`: `share` of them with bids, counts log-normal
    (`mean`, `sigma`), the top bid growing with the count; 0 and NaN without bids."""
    n = price.shape[0]
    has = rng.random(n) < share
    count = np.clip(np.ceil(np.exp(rng.normal(mean, sigma, n))), 1, 350).astype(np.int64)
    growth = 0.12 * count**1.3 * np.exp(rng.normal(0, 0.5, n))
    step = np.maximum(1.0, np.round(price * 0.05))
    top = np.maximum(np.round(price * (1 + growth)), price + step)
    return np.where(has, count, 0), np.where(has, top, np.nan)


def regfree_batches(rng: np.random.Generator, total: int, day: date) -> tuple[list[str], np.ndarray, np.ndarray]:
    """The deleted-ccTLD database's rows: (its TLDs, each row's TLD index, when each was added:
    03:00-06:00 UTC on the 1st of one of the twelve months before `day`'s, recent ones likelier)."""
    names = [t for t, _ in REGFREE_TLDS]
    counts = allocate([w for _, w in REGFREE_TLDS], total, 1)
    n = sum(counts)
    picked = np.repeat(np.arange(len(names)), counts)
    months_back = rng.choice(12, n, p=(w := 0.85 ** np.arange(12)) / w.sum())
    first_of_month = np.array(
        [int(datetime(*month_back(day, k), 1, tzinfo=timezone.utc).timestamp()) for k in range(12)]
    )
    return names, picked, first_of_month[months_back] + 3 * HOUR + rng.integers(0, 3 * HOUR, n)


# -- the listing plan: who, when, what price (cheap, whole dataset) ------------------------

REGFREE_INDEX = len(PLATFORMS)
SLUGS = np.array([p.slug for p in PLATFORMS] + ["regfree"], dtype=object)
_SOURCE = {s.slug: s for s in SOURCES}
CURRENCY = np.array([_SOURCE[p.slug].currency for p in PLATFORMS] + [None], dtype=object)
PLATFORM_NAME = np.array([_SOURCE[p.slug].name for p in PLATFORMS] + [None], dtype=object)
URL_PATTERN = [_SOURCE[p.slug].purchase_url for p in PLATFORMS] + [None]
ENRICHED = np.array([p.enriched for p in PLATFORMS] + [0.86])
ESTIBOT = np.array([p.estibot for p in PLATFORMS] + [0.0])
_MAX_KINDS = max(len(p.kinds) for p in PLATFORMS)
KIND_TYPE = np.array(
    [[k.type for k in p.kinds] + [None] * (_MAX_KINDS - len(p.kinds)) for p in PLATFORMS]
    + [["closeout"] + [None] * (_MAX_KINDS - 1)],
    dtype=object,
)
KIND_AUCTION_TYPE = np.array(
    [[k.auction_type for k in p.kinds] + [None] * (_MAX_KINDS - len(p.kinds)) for p in PLATFORMS]
    + [[None] * _MAX_KINDS],
    dtype=object,
)
THEME_WEIGHTS = np.array([1.3, 1.0, 1.1, 1.2, 1.0, 1.0, 0.7, 0.8, 0.9, 0.7, 0.4, 0.4])


@dataclass
class ListingPlan:
    """The skeleton of every listing, in id (= created_at) order."""

    today: date
    anchor: int
    tlds: list[str]
    src: np.ndarray
    kind: np.ndarray
    tld: np.ndarray
    lang: np.ndarray
    theme: np.ndarray
    brandable: np.ndarray
    created: np.ndarray
    end: np.ndarray
    price: np.ndarray
    bids: np.ndarray
    max_bid: np.ndarray
    ids: np.ndarray
    history: np.ndarray
    names: dict[int, tuple[str, list[str]]] = field(default_factory=dict)
    namer: NameMaker | None = None

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @classmethod
    def of(
        cls,
        today: date,
        anchor: int,
        tlds: list[str],
        ids: np.ndarray,
        history: np.ndarray,
        cols: dict[str, np.ndarray],
    ) -> ListingPlan:
        """A plan of the columns `cols` holds (in id order), by name."""
        return cls(
            today=today,
            anchor=anchor,
            tlds=tlds,
            ids=ids,
            history=history,
            src=cols["src"],
            kind=cols["kind"],
            tld=cols["tld"],
            lang=cols["lang"],
            theme=cols["theme"],
            brandable=cols["brandable"],
            created=cols["created"],
            end=cols["end"],
            price=cols["price"],
            bids=cols["bids"],
            max_bid=cols["max_bid"],
        )


def choose_langs(rng: np.random.Generator, tld_names: list[str], picked: np.ndarray) -> np.ndarray:
    out = np.zeros(picked.shape[0], dtype=np.int8)
    for index, tld in enumerate(tld_names):
        rows = np.flatnonzero(picked == index)
        if rows.size == 0:
            continue
        mix = langs_for(tld)
        keys = np.array([LANG_KEYS.index(k) for k, _ in mix], dtype=np.int8)
        weights = np.array([w for _, w in mix])
        out[rows] = keys[rng.choice(len(keys), rows.size, p=weights / weights.sum())]
    return out


def choose_themes(rng: np.random.Generator, n: int, tilt: tuple[tuple[str, float], ...]) -> np.ndarray:
    weights = THEME_WEIGHTS.copy()
    for theme, extra in tilt:
        weights[THEMES.index(theme)] += extra
    return rng.choice(len(THEMES), n, p=weights / weights.sum()).astype(np.int8)


class TldCodes:
    """TLD names as small codes, numbered as first asked (`names[code]` is the name)."""

    def __init__(self) -> None:
        self.names: list[str] = []
        self._codes: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        if name not in self._codes:
            self._codes[name] = len(self.names)
            self.names.append(name)
        return self._codes[name]


def pick_tlds(rng: np.random.Generator, platform: Platform, n: int) -> tuple[list[str], np.ndarray]:
    """The platform's TLD names and, for each of `n` rows, the index of one drawn by their weights."""
    names = [t for t, _ in platform.tlds]
    weights = np.array([w for _, w in platform.tlds])
    return names, rng.choice(len(names), n, p=weights / weights.sum())


def name_columns(
    rng: np.random.Generator,
    tld_id: TldCodes,
    src: int,
    kind: np.ndarray,
    names: list[str],
    picked: np.ndarray,
    themes: tuple[tuple[str, float], ...] = (),
    brandable: float | None = None,
) -> dict[str, np.ndarray]:
    """The plan's columns that make the rows' names (TLD `names[picked]`): the source and kind,
    a language and a theme drawn, and whether brandable (drawn at that share; None: none are)."""
    n = int(picked.shape[0])
    return {
        "src": np.full(n, src, dtype=np.int16),
        "kind": kind,
        "tld": np.array([tld_id(t) for t in names], dtype=np.int16)[picked],
        "lang": choose_langs(rng, names, picked),
        "theme": choose_themes(rng, n, themes),
        "brandable": rng.random(n) < brandable if brandable is not None else np.zeros(n, dtype=bool),
    }


def regfree_columns(
    rng: np.random.Generator, tld_id: TldCodes, names: list[str], picked: np.ndarray, created: np.ndarray
) -> dict[str, np.ndarray]:
    """The plan's columns of regfree rows (TLD `names[picked]`, added at `created`): a language
    and a theme drawn, no kind, price or bids."""
    n = int(picked.shape[0])
    return {
        **name_columns(rng, tld_id, REGFREE_INDEX, np.zeros(n, dtype=np.int8), names, picked),
        "created": created.astype(np.int64),
        "end": np.full(n, -1, dtype=np.int64),
        "price": np.full(n, np.nan),
        "bids": np.full(n, -1, dtype=np.int64),
        "max_bid": np.full(n, np.nan),
    }


def plan_listings(scale: str | Scale, seed: int, today: date) -> ListingPlan:
    """Sources, kinds, TLDs, dates, prices and bids of every listing; ids in created order."""
    sc = scale_of(scale)
    rng = np.random.default_rng([seed, 11])
    anchor = int(anchor_of(today).timestamp())
    tld_id = TldCodes()
    tlds = tld_id.names

    parts: list[dict[str, np.ndarray]] = []
    counts = platform_counts(sc)
    for si, platform in enumerate(PLATFORMS):
        n = counts[platform.slug]
        kw = np.array([k.weight for k in platform.kinds])
        kind = rng.choice(len(platform.kinds), n, p=kw / kw.sum()).astype(np.int8)
        names, picked = pick_tlds(rng, platform, n)
        created = np.zeros(n, dtype=np.int64)
        end = np.full(n, -1, dtype=np.int64)
        price = np.zeros(n)
        bids = np.full(n, -1, dtype=np.int64)
        max_bid = np.full(n, np.nan)
        for ki, spec in enumerate(platform.kinds):
            rows = np.flatnonzero(kind == ki)
            m = rows.size
            if m == 0:
                continue
            lo, hi = spec.duration
            if spec.type == "backorder":  # auction_end_date = the expected drop
                e = anchor + (rng.uniform(0.2, 30, m) * DAY).astype(np.int64)
                c = anchor - (rng.uniform(0, 25, m) * DAY).astype(np.int64)
            elif spec.ends:
                length = rng.uniform(lo, hi, m)
                offset = rng.random(m) * length
                ended = rng.random(m) < 0.045  # ended, not yet seen closed: not live any more
                offset = np.where(ended, -rng.uniform(0.02, 2, m), offset)
                e = anchor + (offset * DAY).astype(np.int64)
                c = e - (length * DAY).astype(np.int64)
            else:
                age = np.minimum(lo + rng.exponential(max(hi - lo, 1) / 3, m), hi)
                e = np.full(m, -1, dtype=np.int64)
                c = anchor - (age * DAY).astype(np.int64)
            c = _fetch_time(rng, c, anchor)
            if spec.ends:
                e = (e // 60) * 60  # auctions end on the minute
                c = np.where(c >= e, e - 6 * HOUR, c)
            created[rows], end[rows] = c, e
            p = draw_prices(rng, spec, platform.rounding, m)
            price[rows] = p
            if spec.type in ("auction", "backorder"):
                bids[rows], max_bid[rows] = draw_bids(rng, p, spec.bid_share, 0.7, 1.05)
        parts.append(
            {
                **name_columns(rng, tld_id, si, kind, names, picked, platform.themes, platform.brandable),
                "created": created,
                "end": end,
                "price": price,
                "bids": bids,
                "max_bid": max_bid,
            }
        )

    # Regfree: the monthly refresh of the deleted-ccTLD database, twelve batches back.
    reg_names, picked, reg_created = regfree_batches(rng, sc.regfree, today)
    reg_created = np.minimum(reg_created, anchor - HOUR)
    parts.append(regfree_columns(rng, tld_id, reg_names, picked, reg_created))
    cols = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    total = int(cols["src"].shape[0])
    order = np.lexsort((rng.random(total), cols["created"]))
    cols = {key: value[order] for key, value in cols.items()}
    ids = LISTING_ID_BASE + np.cumsum(rng.geometric(0.75, total)).astype(np.int64)
    is_auction = KIND_TYPE[cols["src"], cols["kind"]] == "auction"
    history = is_auction & (cols["bids"] >= 2) & (cols["created"] < anchor - 8 * HOUR) & (rng.random(total) < 0.5)
    plan = ListingPlan.of(today, anchor, tlds, ids, history, cols)
    # Names of the listings with a bid history are needed first (their earlier states are
    # written before the final ones): make them now, from their own random stream.
    plan.namer = NameMaker(random.Random(seed * 1_000_003 + 999_983))
    for row in np.flatnonzero(history).tolist():
        plan.names[row] = plan.namer.make(
            LANG_KEYS[plan.lang[row]], THEMES[plan.theme[row]], tlds[plan.tld[row]], bool(plan.brandable[row])
        )
    return plan


# -- listing history: earlier states of auctions with bids ---------------------------------


def history_states(plan: ListingPlan, seed: int) -> list[tuple[str, list[dict[str, Any]]]]:
    """Earlier states (fewer bids, lower top bid) of the listings flagged `history`, grouped
    by the 4-hourly poll that saw them: [(observed_at, records)] oldest first."""
    rnd = random.Random(seed * 1_000_003 + 424_242)
    grid = [plan.anchor - 4 * HOUR * j for j in range(42, 0, -1)]  # the last 7 days of bid polls
    by_time: dict[int, list[dict[str, Any]]] = {}
    for row in np.flatnonzero(plan.history).tolist():
        created = int(plan.created[row])
        end = int(plan.end[row])
        limit = min(plan.anchor, end) if end >= 0 else plan.anchor
        times = [t for t in grid if created < t < limit]
        final_bids = int(plan.bids[row])
        k = min(rnd.randint(1, 3), len(times), final_bids - 1)
        if k <= 0:
            continue
        chosen = sorted(rnd.sample(times, k))
        shares = sorted(rnd.uniform(0.05, 0.95) for _ in range(k))
        src = int(plan.src[row])
        price = float(plan.price[row])
        top = float(plan.max_bid[row])
        name = plan.names[row][0]
        pattern = URL_PATTERN[src]
        for t, share in zip(chosen, shares):
            bids = min(final_bids - 1, int(final_bids * share))
            max_bid = float(round(price + (top - price) * (bids / final_bids) ** 1.3)) if bids else None
            if max_bid is not None and max_bid <= price:
                max_bid = price + 1.0
            state = {
                "id": int(plan.ids[row]),
                "name": name,
                "tld": plan.tlds[plan.tld[row]],
                "source": SLUGS[src],
                "type": KIND_TYPE[src, plan.kind[row]],
                "auction_type": KIND_AUCTION_TYPE[src, plan.kind[row]],
                "price": price,
                "max_bid": max_bid,
                "effective_price": max_bid if max_bid is not None else price,
                "currency": CURRENCY[src],
                "bids_count": bids,
                "auction_end_date": iso(end) if end >= 0 else None,
                "purchase_url": pattern.format(name=name) if pattern else None,
                "purchase_platform": PLATFORM_NAME[src],
                "created_at": iso(created),
                "updated_at": iso(t),
            }
            by_time.setdefault(t, []).append(state)
    return [(iso(t), by_time[t]) for t in sorted(by_time)]

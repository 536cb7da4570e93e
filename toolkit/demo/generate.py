"""The demo source's generators: listing, regfree and pending-delete records.

Records are made in chunks of `CHUNK` rows, column by column with numpy, then zipped into
dicts shaped as the reference schemas, so per-record Python work stays small (the `full`
scale makes about 850,000 records). Everything random comes from generators seeded with
`(seed, purpose, chunk)`: the same seed and `today` give the same records, whatever
consumes them.

Time runs relative to `anchor_of(today)` (07:00 UTC, when the daily platform fetch has
landed): listings were created before it, auctions mostly end in the 1-10 days after it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Any

import numpy as np

from ..enrich.score import quality_score
from ..ingest.lifecycle import policy_for, predict_drop_window
from ..sources import source_by_slug
from ..store.fields import LISTING_FIELDS, PENDING_FIELDS
from .catalog import COUNTRY_OF_TLD, PENDING_TLDS, PLATFORMS, REGFREE_TLDS, langs_for, regional_topic
from .name_maker import NameMaker
from .signal_fields import archive_columns, spam_names
from .words import LANGS, THEME_TOPICS, THEMES

__all__ = [
    "Scale",
    "SCALES",
    "CHUNK",
    "anchor_of",
    "ListingPlan",
    "plan_listings",
    "history_states",
    "listing_chunks",
    "pending_chunks",
    "pending_records",
    "TldCodes",
]

CHUNK = 4096
ANCHOR_HOUR = 7  # the demo's "now": this hour UTC, after the morning fetch of every platform
DAY = 86_400
HOUR = 3_600
LISTING_KEYS = tuple(LISTING_FIELDS)
ARCHIVE_KEYS = (
    "archive_years",
    "archive_longest_gap",
    "archive_redirect_share",
    "archive_parked",
    "archive_parked_reason",
    "archive_continuity",
)  # what `edt enrich` adds (toolkit.signals.wayback_content)
PENDING_KEYS = tuple(PENDING_FIELDS)
LANG_KEYS = tuple(LANGS)
_EPOCH_ORD = date(1970, 1, 1).toordinal()
_WAYBACK_START = date(1996, 5, 10).toordinal()
_ID_BASE_LISTINGS = 38_400_000
_ID_BASE_PENDING = 1_874_000


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


def anchor_of(today: date) -> datetime:
    """The demo's "now": 07:00 UTC on `today`, after the morning fetch of every platform."""
    return datetime.combine(today, time(ANCHOR_HOUR, 0), tzinfo=timezone.utc)


def _scale(scale: str | Scale) -> Scale:
    if isinstance(scale, Scale):
        return scale
    try:
        return SCALES[scale]
    except KeyError:
        raise ValueError(f"unknown demo scale {scale!r}; choose one of {', '.join(SCALES)}") from None


def allocate(weights: list[float], total: int, minimum: int = 1) -> list[int]:
    """Split `total` by `weights`, at least `minimum` each (the sum may exceed `total` slightly)."""
    w = np.asarray(weights, dtype=float)
    return [max(minimum, int(round(x))) for x in w / w.sum() * total]


def platform_counts(scale: str | Scale) -> dict[str, int]:
    """Listings per platform slug at a scale: the full-scale shares, at least 2 each."""
    sc = _scale(scale)
    return dict(zip((p.slug for p in PLATFORMS), allocate([p.full for p in PLATFORMS], sc.listings, 2)))


# -- column helpers ------------------------------------------------------------------------


def _opt(values: np.ndarray, present: np.ndarray) -> list:
    """Python values (int/float) with None where not `present`."""
    out = values.astype(object)
    out[~present] = None
    return out.tolist()


def _ts(seconds: np.ndarray, present: np.ndarray | None = None) -> list:
    """Epoch seconds -> canonical `YYYY-MM-DDTHH:MM:SSZ` (None where not present)."""
    text = np.datetime_as_string(seconds.astype("datetime64[s]"), unit="s", timezone="UTC").astype(object)
    if present is not None:
        text[~present] = None
    return text.tolist()


def _days(ordinals: np.ndarray, present: np.ndarray | None = None) -> list:
    """Proleptic ordinals -> `YYYY-MM-DD` (None where not present)."""
    text = np.datetime_as_string((ordinals - _EPOCH_ORD).astype("datetime64[D]")).astype(object)
    if present is not None:
        text[~present] = None
    return text.tolist()


def _whole_years(first_ord: np.ndarray, today: date) -> np.ndarray:
    d = (first_ord - _EPOCH_ORD).astype("datetime64[D]")
    years = d.astype("datetime64[Y]").astype(np.int64) + 1970
    months = d.astype("datetime64[M]").astype(np.int64) % 12 + 1
    days = (d - d.astype("datetime64[M]")).astype(np.int64) + 1
    later = (months > today.month) | ((months == today.month) & (days > today.day))
    return today.year - years - later.astype(np.int64)


def _round_price(values: np.ndarray, rounding: str) -> np.ndarray:
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


# -- the listing plan: who, when, what price (cheap, whole dataset) ------------------------

_REGFREE_INDEX = len(PLATFORMS)
_SLUGS = np.array([p.slug for p in PLATFORMS] + ["regfree"], dtype=object)
_CURRENCY = np.array([source_by_slug(p.slug).currency for p in PLATFORMS] + [None], dtype=object)
_PLATFORM_NAME = np.array([source_by_slug(p.slug).name for p in PLATFORMS] + [None], dtype=object)
_URL_PATTERN = [source_by_slug(p.slug).purchase_url for p in PLATFORMS] + [None]
_ENRICHED = np.array([p.enriched for p in PLATFORMS] + [0.86])
_ESTIBOT = np.array([p.estibot for p in PLATFORMS] + [0.0])
_MAX_KINDS = max(len(p.kinds) for p in PLATFORMS)
_TYPE = np.array(
    [[k.type for k in p.kinds] + [None] * (_MAX_KINDS - len(p.kinds)) for p in PLATFORMS]
    + [["closeout"] + [None] * (_MAX_KINDS - 1)],
    dtype=object,
)
_AUCTION_TYPE = np.array(
    [[k.auction_type for k in p.kinds] + [None] * (_MAX_KINDS - len(p.kinds)) for p in PLATFORMS]
    + [[None] * _MAX_KINDS],
    dtype=object,
)
_THEME_WEIGHTS = np.array([1.3, 1.0, 1.1, 1.2, 1.0, 1.0, 0.7, 0.8, 0.9, 0.7, 0.4, 0.4])


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


def _choose_langs(rng: np.random.Generator, tld_names: list[str], picked: np.ndarray) -> np.ndarray:
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


def _choose_themes(rng: np.random.Generator, n: int, tilt: tuple[tuple[str, float], ...]) -> np.ndarray:
    weights = _THEME_WEIGHTS.copy()
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


def plan_listings(scale: str | Scale, seed: int, today: date) -> ListingPlan:
    """Sources, kinds, TLDs, dates, prices and bids of every listing; ids in created order."""
    sc = _scale(scale)
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
        names = [t for t, _ in platform.tlds]
        tw = np.array([w for _, w in platform.tlds])
        picked = rng.choice(len(names), n, p=tw / tw.sum())
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
            if spec.price[0] == "fixed":
                p = np.full(m, float(spec.price[1]))
            else:
                _, median, sigma, low, high = spec.price
                p = _round_price(np.clip(median * np.exp(sigma * rng.standard_normal(m)), low, high), platform.rounding)
            price[rows] = p
            if spec.type in ("auction", "backorder"):
                has = rng.random(m) < spec.bid_share
                count = np.clip(np.ceil(np.exp(rng.normal(0.7, 1.05, m))), 1, 350).astype(np.int64)
                growth = 0.12 * count**1.3 * np.exp(rng.normal(0, 0.5, m))
                step = np.maximum(1.0, np.round(p * 0.05))
                top = np.maximum(np.round(p * (1 + growth)), p + step)
                bids[rows] = np.where(has, count, 0)
                max_bid[rows] = np.where(has, top, np.nan)
        parts.append(
            {
                "src": np.full(n, si, dtype=np.int16),
                "kind": kind,
                "tld": np.array([tld_id(t) for t in names], dtype=np.int16)[picked],
                "lang": _choose_langs(rng, names, picked),
                "theme": _choose_themes(rng, n, platform.themes),
                "brandable": rng.random(n) < platform.brandable,
                "created": created,
                "end": end,
                "price": price,
                "bids": bids,
                "max_bid": max_bid,
            }
        )

    # Regfree: the monthly refresh of the deleted-ccTLD database, twelve batches back.
    reg_names = [t for t, _ in REGFREE_TLDS]
    reg_counts = allocate([w for _, w in REGFREE_TLDS], sc.regfree, 1)
    n = sum(reg_counts)
    picked = np.repeat(np.arange(len(reg_names)), reg_counts)
    months_back = rng.choice(12, n, p=(w := 0.85 ** np.arange(12)) / w.sum())
    first_of_month = np.array(
        [int(datetime(*_month_back(today, k), 1, tzinfo=timezone.utc).timestamp()) for k in range(12)]
    )
    reg_created = first_of_month[months_back] + 3 * HOUR + rng.integers(0, 3 * HOUR, n)
    reg_created = np.minimum(reg_created, anchor - HOUR)
    parts.append(
        {
            "src": np.full(n, _REGFREE_INDEX, dtype=np.int16),
            "kind": np.zeros(n, dtype=np.int8),
            "tld": np.array([tld_id(t) for t in reg_names], dtype=np.int16)[picked],
            "lang": _choose_langs(rng, reg_names, picked),
            "theme": _choose_themes(rng, n, ()),
            "brandable": np.zeros(n, dtype=bool),
            "created": reg_created.astype(np.int64),
            "end": np.full(n, -1, dtype=np.int64),
            "price": np.full(n, np.nan),
            "bids": np.full(n, -1, dtype=np.int64),
            "max_bid": np.full(n, np.nan),
        }
    )
    cols = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    total = cols["src"].shape[0]
    order = np.lexsort((rng.random(total), cols["created"]))
    cols = {key: value[order] for key, value in cols.items()}
    ids = _ID_BASE_LISTINGS + np.cumsum(rng.geometric(0.75, total)).astype(np.int64)
    is_auction = _TYPE[cols["src"], cols["kind"]] == "auction"
    history = is_auction & (cols["bids"] >= 2) & (cols["created"] < anchor - 8 * HOUR) & (rng.random(total) < 0.5)
    plan = ListingPlan(today=today, anchor=anchor, tlds=tlds, ids=ids, history=history, **cols)
    # Names of the listings with a bid history are needed first (their earlier states are
    # written before the final ones): make them now, from their own random stream.
    plan.namer = NameMaker(random.Random(seed * 1_000_003 + 999_983))
    for row in np.flatnonzero(history).tolist():
        plan.names[row] = plan.namer.make(
            LANG_KEYS[plan.lang[row]], THEMES[plan.theme[row]], tlds[plan.tld[row]], bool(plan.brandable[row])
        )
    return plan


def _month_back(today: date, k: int) -> tuple[int, int]:
    month = today.year * 12 + today.month - 1 - k
    return month // 12, month % 12 + 1


# -- listing history: earlier states of auctions with bids ---------------------------------

_HISTORY_KEYS = (
    "id",
    "name",
    "tld",
    "source",
    "type",
    "auction_type",
    "price",
    "max_bid",
    "effective_price",
    "currency",
    "bids_count",
    "auction_end_date",
    "purchase_url",
    "purchase_platform",
    "created_at",
    "updated_at",
)


def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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
        pattern = _URL_PATTERN[src]
        for t, share in zip(chosen, shares):
            bids = min(final_bids - 1, int(final_bids * share))
            max_bid = float(round(price + (top - price) * (bids / final_bids) ** 1.3)) if bids else None
            if max_bid is not None and max_bid <= price:
                max_bid = price + 1.0
            values = (
                int(plan.ids[row]),
                name,
                plan.tlds[plan.tld[row]],
                _SLUGS[src],
                _TYPE[src, plan.kind[row]],
                _AUCTION_TYPE[src, plan.kind[row]],
                price,
                max_bid,
                max_bid if max_bid is not None else price,
                _CURRENCY[src],
                bids,
                _iso(end) if end >= 0 else None,
                pattern.format(name=name) if pattern else None,
                _PLATFORM_NAME[src],
                _iso(created),
                _iso(t),
            )
            by_time.setdefault(t, []).append(dict(zip(_HISTORY_KEYS, values)))
    return [(_iso(t), by_time[t]) for t in sorted(by_time)]


# -- SEO metrics (shared by listings and pending-delete rows) -------------------------------


def _seo(rng: np.random.Generator, n: int, enriched: np.ndarray, today: date, spam_share: float = 0.03) -> dict:
    """Correlated metrics with believable shapes; only meaningful where `enriched`."""
    today_ord = today.toordinal()
    max_years = (today_ord - _WAYBACK_START) / 365.25
    u = rng.random(n)
    years_back = np.where(
        u < 0.5, rng.uniform(0.6, 12, n), np.where(u < 0.87, rng.uniform(12, 22, n), rng.uniform(22, max_years, n))
    )
    years_back = np.minimum(years_back, max_years - 0.01)
    first_ago = (years_back * 365.25).astype(np.int64)
    last_ago = np.minimum(first_ago, (3 + rng.exponential(300, n)).astype(np.int64))
    authority = rng.standard_normal(n) + 0.035 * (years_back - 10)
    active_months = (first_ago - last_ago) / 30.4
    snapshots = np.exp(1.5 + 0.7 * np.log1p(active_months) + 0.6 * authority + rng.normal(0, 0.8, n))
    snapshots = np.clip(snapshots, 1, 250_000)
    rd = np.clip(np.exp(2.1 + 1.25 * authority + rng.normal(0, 0.7, n)) - 1, 0, 250_000).astype(np.int64)
    rd[rng.random(n) < 0.07] = 0
    backlinks = np.maximum(rd, (rd * np.exp(rng.normal(1.4, 1.1, n))).astype(np.int64))
    cf = np.clip(np.round(4 + 11.5 * np.log10(1 + rd) + rng.normal(0, 4.5, n)), 0, 78)
    cf = np.where(rd == 0, np.clip(np.round(rng.normal(2, 2, n)), 0, 8), cf).astype(np.int64)
    tf = np.floor(cf * rng.beta(3.2, 2.6, n)).astype(np.int64)
    over = rng.random(n) < 0.08  # a few sites with few, very trusted links
    tf = np.where(over, np.minimum(cf + rng.integers(1, 7, n), 90), tf)
    spam = enriched & (rng.random(n) < spam_share)  # many links, no trust
    rd = np.where(spam, np.maximum(rd, rng.integers(150, 3000, n)), rd)
    backlinks = np.where(spam, rd * rng.integers(20, 200, n), backlinks)
    cf = np.where(spam, rng.integers(25, 61, n), cf)
    tf = np.where(spam, rng.integers(0, 6, n), tf)
    dofollow = np.minimum(rd, np.round(rd * rng.beta(5, 2.5, n)).astype(np.int64))
    scale = np.clip(np.exp(0.5 * authority), 0.2, 5)
    edu = rng.poisson(np.minimum(rd * 0.0015 * scale, 500))
    gov = rng.poisson(np.minimum(rd * 0.0006 * scale, 200))
    da = np.clip(np.round(2 + 0.62 * cf + 2.2 * authority + rng.normal(0, 5, n)), 0, 95).astype(np.int64)
    pagerank = np.clip(np.round(1.4 * np.log10(1 + rd) + rng.normal(0, 0.6, n)), 0, 10).astype(np.int64)
    return {
        "first_ord": today_ord - first_ago,
        "last_ord": today_ord - last_ago,
        "snapshots": snapshots.astype(np.int64),
        "rd": rd,
        "backlinks": backlinks,
        "dofollow": dofollow,
        "edu": edu,
        "gov": gov,
        "cf": cf,
        "tf": tf,
        "da": da,
        "pagerank": pagerank,
        "spam": spam,
        "authority": authority,
    }


# -- the rest of a listing record: topics, tech, traffic, business profile, whois -----------

_USE_CASE_TECH: dict[str, tuple[tuple[str, ...], ...]] = {
    "ecommerce": (
        ("WooCommerce", "WordPress", "Stripe"),
        ("Shopify",),
        ("Magento", "PayPal"),
        ("PrestaShop",),
        ("Shopify", "Klaviyo"),
        ("BigCommerce",),
    ),
    "local-biz": (
        ("WordPress", "Google Maps", "Yoast SEO"),
        ("Wix",),
        ("Squarespace",),
        ("WordPress", "Elementor", "Google Maps"),
        ("Jimdo",),
    ),
    "news": (("WordPress", "Google AdSense", "Disqus"), ("Ghost",), ("WordPress", "Jetpack"), ("Drupal",)),
    "saas": (("React", "Stripe", "Intercom"), ("Next.js", "Stripe"), ("Vue.js", "HubSpot"), ("Angular", "Zendesk")),
    "forum": (("phpBB",), ("vBulletin",), ("Discourse",), ("XenForo",), ("Invision Community",)),
    "media": (("WordPress", "YouTube", "Vimeo"), ("WordPress", "Google AdSense"), ("Squarespace", "Vimeo")),
    "developer": (("GitHub Pages", "Jekyll"), ("Hugo",), ("Docusaurus", "React"), ("Gatsby",)),
}
_GENERIC_TECH = (
    "jQuery",
    "Google Analytics",
    "Google Tag Manager",
    "Bootstrap",
    "Font Awesome",
    "Cloudflare",
    "Google Fonts",
    "Joomla",
    "Yoast SEO",
    "WordPress",
)
_THEME_USE_CASES = {
    "biz": ("local-biz", "saas"),
    "tech": ("saas", "developer"),
    "health": ("local-biz", "ecommerce"),
    "home": ("local-biz", "ecommerce"),
    "travel": ("local-biz", "media"),
    "food": ("local-biz", "ecommerce"),
    "sport": ("local-biz", "forum"),
    "arts": ("media", "ecommerce"),
    "shop": ("ecommerce",),
    "news": ("news", "media"),
    "science": ("news", "developer"),
    "games": ("forum", "media"),
}
_GMB_CATEGORIES = {
    "health": ("Dentist", "Medical clinic", "Physiotherapist", "Yoga studio", "Pharmacy", "Beauty salon"),
    "food": ("Restaurant", "Bakery", "Cafe", "Wine shop", "Caterer", "Butcher shop"),
    "home": ("Plumber", "Garden center", "Furniture store", "Electrician", "Roofing contractor", "Pet groomer"),
    "biz": ("Accountant", "Law firm", "Real estate agency", "Insurance agency", "Marketing agency"),
    "travel": ("Hotel", "Campground", "Travel agency", "Bed & breakfast", "Bicycle rental"),
    "sport": ("Gym", "Golf club", "Tennis club", "Bicycle shop", "Sports club"),
    "arts": ("Photographer", "Music school", "Art gallery", "Dance school", "Book store"),
    "shop": ("Clothing store", "Jewelry store", "Gift shop", "Shoe store", "Toy store"),
}
_LOCAL_THEMES = {"health", "food", "home", "biz", "travel", "sport"}
_ADDRESSES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str]] = {
    "France": (
        ("rue de la République", "avenue Jean Jaurès", "rue Victor Hugo", "boulevard Gambetta", "rue des Lilas"),
        (
            "Paris 75011",
            "Lyon 69003",
            "Marseille 13006",
            "Bordeaux 33000",
            "Nantes 44000",
            "Lille 59000",
            "Toulouse 31000",
            "Rennes 35000",
        ),
        "{n} {street}, {zip} {city}, France",
    ),
    "Germany": (
        ("Hauptstraße", "Bahnhofstraße", "Gartenstraße", "Schulstraße", "Lindenweg"),
        ("Berlin 10115", "Hamburg 20095", "München 80331", "Köln 50667", "Leipzig 04109", "Bremen 28195"),
        "{street} {n}, {zip} {city}, Deutschland",
    ),
    "United Kingdom": (
        ("High Street", "Station Road", "Church Lane", "Victoria Road", "Mill Lane"),
        ("Leeds LS1 4AP", "Bristol BS1 5TR", "Manchester M1 2WD", "London N1 9GU", "York YO1 7HH"),
        "{n} {street}, {city} {zip}, United Kingdom",
    ),
    "Italy": (
        ("Via Roma", "Via Garibaldi", "Corso Italia", "Via Mazzini", "Piazza del Duomo"),
        ("Milano 20121", "Roma 00184", "Torino 10121", "Firenze 50122", "Bologna 40121"),
        "{street} {n}, {zip} {city}, Italia",
    ),
    "Spain": (
        ("Calle Mayor", "Avenida de la Constitución", "Calle Real", "Plaza de España"),
        ("Madrid 28013", "Barcelona 08002", "Valencia 46002", "Sevilla 41001"),
        "{street} {n}, {zip} {city}, España",
    ),
    "Netherlands": (
        ("Kerkstraat", "Dorpsstraat", "Molenweg", "Stationsplein"),
        ("Amsterdam 1017 GA", "Utrecht 3511 AB", "Rotterdam 3011 AD", "Leiden 2311 EZ"),
        "{street} {n}, {zip} {city}, Nederland",
    ),
    "United States": (
        ("Main Street", "Oak Street", "Maple Avenue", "Park Avenue", "Elm Street"),
        ("Austin 78701 TX", "Denver 80202 CO", "Portland 97204 OR", "Boston 02108 MA", "Miami 33130 FL"),
        "{n} {street}, {city}, {zip}, USA",
    ),
}
_REGISTRARS = {
    "godaddy": ("GoDaddy.com, LLC",),
    "namecheap": ("NameCheap, Inc.",),
    "namesilo": ("NameSilo, LLC",),
    "dynadot": ("Dynadot Inc",),
    "gname": ("Gname.com Pte. Ltd.",),
    "snapnames": ("Network Solutions, LLC", "Web.com Group, Inc."),
    "dropcatch": ("DropCatch.com 1067 LLC", "DropCatch.com 1349 LLC", "DropCatch.com 877 LLC"),
}
_CC_REGISTRARS = {
    ".fr": ("OVH SAS", "GANDI SAS", "IONOS SE", "LWS"),
    ".de": ("STRATO AG", "IONOS SE", "united-domains AG", "Hetzner Online GmbH"),
    ".co.uk": ("Tucows Inc", "Fasthosts Internet Ltd", "123-Reg Limited"),
    ".uk": ("Tucows Inc", "Fasthosts Internet Ltd"),
    ".nl": ("TransIP B.V.", "Hostnet B.V."),
    ".it": ("Aruba S.p.A.", "Register.it S.p.A."),
}
_GENERIC_REGISTRARS = (
    "Tucows Domains Inc.",
    "Key-Systems GmbH",
    "eNom, LLC",
    "PDR Ltd. d/b/a PublicDomainRegistry.com",
    "Register.com, Inc.",
    "Wild West Domains, LLC",
    "Porkbun LLC",
    "Squarespace Domains II LLC",
)
_NAMESERVERS = {
    "parked": (
        ("ns1.parkingcrew.net", "ns2.parkingcrew.net"),
        ("ns1.sedoparking.com", "ns2.sedoparking.com"),
        ("ns1.bodis.com", "ns2.bodis.com"),
    ),
    "registrar-default": (
        ("ns07.domaincontrol.com", "ns08.domaincontrol.com"),
        ("dns1.registrar-servers.com", "dns2.registrar-servers.com"),
        ("ns1.dynadot.com", "ns2.dynadot.com"),
    ),
    "expired": (
        ("ns1.pendingrenewaldeletion.com", "ns2.pendingrenewaldeletion.com"),
        ("ns1.expired.domains", "ns2.expired.domains"),
    ),
    "hosting": (
        ("dns10.ovh.net", "ns10.ovh.net"),
        ("jack.ns.cloudflare.com", "lily.ns.cloudflare.com"),
        ("ns1.hetzner.com", "ns2.hetzner.com"),
    ),
    "none": ((),),
}
_NS_CATEGORIES = ("parked", "registrar-default", "expired", "hosting", "none")
_NS_CUMULATIVE = tuple(zip(_NS_CATEGORIES, (0.3, 0.55, 0.75, 0.9, 1.0)))
_SPAM_TOPICS = ("Adult/Dating", "Games/Gambling", "Shopping/Health", "Business/Financial Services")
_OTHER_TOPICS = tuple(t for topics in THEME_TOPICS.values() for t in topics) + (
    "Reference/Education",
    "Society/People",
    "World",
    "Regional",
    "Home/Consumer Information",
)


def _country_code(tld: str) -> str:
    last = tld.rpartition(".")[2].upper()
    return {"UK": "GB"}.get(last, last) if len(last) == 2 else "US"


def _gmb(rnd: random.Random, parts: list[str], theme: str, tld: str, lang_key: str) -> tuple[str, str, str]:
    connectors = LANGS[lang_key].connectors
    name = " ".join(p if p in connectors else p.capitalize() for p in parts)
    category = rnd.choice(_GMB_CATEGORIES.get(theme, ("Corporate office",)))
    country = COUNTRY_OF_TLD.get(tld, "United States")
    streets, cities, template = _ADDRESSES.get(country, _ADDRESSES["United States"])
    city, _, code = rnd.choice(cities).partition(" ")
    if country == "United States":
        state, number = code.split(" ")[1], code.split(" ")[0]
        street = rnd.choice(streets)
        address = template.format(n=rnd.randint(10, 4999), street=street, city=city, zip=f"{state} {number}")
    else:
        address = template.format(n=rnd.randint(1, 180), street=rnd.choice(streets), city=city, zip=code)
    return name, category, address


_USE_CASE_NAMES = tuple(_USE_CASE_TECH)


def _pick(r: Any, seq: tuple) -> Any:
    return seq[int(r() * len(seq))]


def _tech(rnd: random.Random, theme: str) -> tuple[list[str], list[str]]:
    """(historical_tech, use_cases) of a checked archive snapshot."""
    r = rnd.random
    x = r()
    if x < 0.2:
        return [], []
    generic: list[str] = []
    for _ in range(1 + int(r() * 3) if x < 0.45 else int(r() * 3)):
        item = _pick(r, _GENERIC_TECH)
        if item not in generic:
            generic.append(item)
    if x < 0.45:
        return sorted(generic), []
    cases = [_pick(r, _THEME_USE_CASES[theme])]
    if r() < 0.1:
        other = _pick(r, _USE_CASE_NAMES)
        if other not in cases:
            cases.append(other)
    tech: list[str] = []
    for case in cases:
        for item in _pick(r, _USE_CASE_TECH[case]):
            if item not in tech:
                tech.append(item)
    for item in generic:
        if item not in tech:
            tech.append(item)
    return tech, sorted(cases)


def _traffic(rnd: random.Random, rd: int, country: str) -> tuple[int, int, list[int], dict]:
    """(etv, peak, monthly spark, detail) of a site whose traffic faded after it lapsed."""
    r = rnd.random
    peak = max(5, int(math.exp(1.1 * math.log1p(rd) + 0.8 + 1.3 * rnd.gauss(0.0, 1.0))))
    fade = 0.08 + 0.52 * r()
    top = int(r() * 7)
    spark = []
    for month in range(12):
        level = peak * (0.55 + 0.45 * month / max(top, 1)) if month <= top else peak * math.exp(-fade * (month - top))
        spark.append(int(level * (0.85 + 0.25 * r())))
    spark[top] = peak
    if r() < 0.3:
        spark[-1] = 0
    share = round(0.45 + 0.47 * r(), 2)
    detail = {
        "countries": {country: share, "other": round(1 - share, 2)},
        "keywords": max(1, int(peak / (8 + 32 * r()))),
    }
    return spark[-1], max(spark), spark, detail


def _listing_chunk(plan: ListingPlan, start: int, stop: int, seed: int, chunk: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng([seed, 12, chunk])
    rnd = random.Random(seed * 1_000_003 + chunk)
    namer = plan.namer
    assert namer is not None
    namer.rnd = rnd
    today, anchor = plan.today, plan.anchor
    n = stop - start
    sl = slice(start, stop)
    src = plan.src[sl].astype(np.int64)
    kind = plan.kind[sl].astype(np.int64)
    tld_list = [plan.tlds[t] for t in plan.tld[sl].tolist()]
    lang_keys = [LANG_KEYS[k] for k in plan.lang[sl].tolist()]
    themes = [THEMES[t] for t in plan.theme[sl].tolist()]
    brandable = plan.brandable[sl].tolist()
    names: list[str] = []
    parts: list[list[str]] = []
    for i in range(n):
        made = plan.names.get(start + i) or namer.make(lang_keys[i], themes[i], tld_list[i], brandable[i])
        names.append(made[0])
        parts.append(made[1])

    regfree = src == _REGFREE_INDEX
    created = plan.created[sl]
    end = plan.end[sl]
    price = plan.price[sl]
    bids = plan.bids[sl]
    max_bid = plan.max_bid[sl]
    has_end = end >= 0
    has_price = ~np.isnan(price)
    has_max = ~np.isnan(max_bid)

    enriched = rng.random(n) < _ENRICHED[src]
    m = _seo(rng, n, enriched, today)
    fixed = {i for i in range(n) if (start + i) in plan.names}
    spam_names(names, parts, m["spam"].tolist(), fixed, seed, chunk)
    has_wb = enriched & (rng.random(n) < 0.88)
    has_pr = enriched & (rng.random(n) < 0.7)
    has_indexed = enriched & (rng.random(n) < 0.3)
    has_traffic = enriched & has_wb & (rng.random(n) < 0.26)
    has_visitors = enriched & (rng.random(n) < 0.12)
    has_language = has_wb & (rng.random(n) < 0.94)
    has_topic = enriched & ((m["cf"] > 0) | (m["rd"] > 0)) & (rng.random(n) < 0.93)
    tech_checked = has_wb & (rng.random(n) < 0.55)
    whois = ~regfree & enriched & (rng.random(n) < 0.6)
    local = np.array([t in _LOCAL_THEMES for t in themes])
    has_gmb = enriched & (rng.random(n) < np.where(local, 0.07, 0.015))
    estibot = ~regfree & (rng.random(n) < _ESTIBOT[src])
    age = _whole_years(m["first_ord"], today)
    indexed = np.exp(rng.normal(2.0 + 0.5 * np.log1p(m["snapshots"]), 1.2, n)).astype(np.int64)
    visitors = np.exp(rng.normal(1.0 * np.log1p(m["rd"]) + 2, 1.3, n)).astype(np.int64)
    length = np.array([len(x.partition(".")[0]) for x in names])
    appraisal = np.round(np.exp(rng.normal(np.log(900) - 0.12 * (length - 8) + 0.3 * m["authority"], 1.0, n)) / 10) * 10

    # Per-row Python work only where a field is present.
    n_none: list[Any] = [None] * n
    topic = list(n_none)
    tech = list(n_none)
    cases = list(n_none)
    etv, peak, spark, traffic_detail = list(n_none), list(n_none), list(n_none), list(n_none)
    gmb_name, gmb_category, gmb_address = list(n_none), list(n_none), list(n_none)
    spam = m["spam"]
    r = rnd.random
    spam_list = spam.tolist()
    for i in np.flatnonzero(has_topic).tolist():
        x = r()
        if spam_list[i]:
            topic[i] = _pick(r, _SPAM_TOPICS)
        elif x < 0.68:
            topic[i] = _pick(r, THEME_TOPICS[themes[i]])
        elif x < 0.84 and lang_keys[i] != "en":
            topic[i] = LANGS[lang_keys[i]].world
        elif x < 0.92 and (regional := regional_topic(tld_list[i])):
            topic[i] = regional
        else:
            topic[i] = _pick(r, _OTHER_TOPICS)
    for i in np.flatnonzero(tech_checked).tolist():
        tech[i], cases[i] = _tech(rnd, themes[i])
    rd_list = m["rd"].tolist()
    for i in np.flatnonzero(has_traffic).tolist():
        etv[i], peak[i], spark[i], traffic_detail[i] = _traffic(rnd, rd_list[i], _country_code(tld_list[i]))
    for i in np.flatnonzero(has_gmb).tolist():
        gmb_name[i], gmb_category[i], gmb_address[i] = _gmb(rnd, parts[i], themes[i], tld_list[i], lang_keys[i])

    # WHOIS / RDAP snapshot of platform listings.
    w_reg = (m["first_ord"] - rng.integers(0, 200, n) - _EPOCH_ORD) * DAY + rng.integers(0, DAY, n)
    t_now = anchor - rng.integers(HOUR, 3 * DAY, n)
    expiring = rng.integers(DAY, 40 * DAY, n)
    w_exp = np.where(
        (_AUCTION_TYPE[src, kind] == "Dropped"), anchor + rng.integers(300 * DAY, 365 * DAY, n), anchor - expiring
    )
    w_changed = np.minimum(w_exp + rng.integers(0, 5 * DAY, n), t_now)
    registrar: list[Any] = list(n_none)
    w_status: list[Any] = list(n_none)
    nameservers: list[Any] = list(n_none)
    ns_category: list[Any] = list(n_none)
    types = _TYPE[src, kind]
    auction_types = _AUCTION_TYPE[src, kind]
    statuses_seen = (
        ["autoRenewPeriod", "clientHold"],
        ["clientHold", "clientTransferProhibited"],
        ["autoRenewPeriod"],
        ["redemptionPeriod"],
    )
    for i in np.flatnonzero(whois).tolist():
        slug = _SLUGS[src[i]]
        pool = _REGISTRARS.get(slug) or _CC_REGISTRARS.get(tld_list[i]) or _GENERIC_REGISTRARS
        registrar[i] = _pick(r, pool)
        if auction_types[i] == "Dropped":
            w_status[i] = ["clientTransferProhibited"]
        elif types[i] == "backorder" or auction_types[i] == "PreRelease":
            w_status[i] = ["redemptionPeriod" if r() < 0.6 else "pendingDelete"]
        elif types[i] == "closeout":
            w_status[i] = ["clientTransferProhibited"] if r() < 0.7 else ["ok"]
        else:
            w_status[i] = list(_pick(r, statuses_seen))
        x = r()
        category = next((c for c, edge in _NS_CUMULATIVE if x < edge), "none")
        ns_category[i] = category
        nameservers[i] = list(_pick(r, _NAMESERVERS[category]))

    # updated_at: the last change seen (a bid, a price cut, the daily refresh).
    bid_rows = bids > 0
    horizon = np.where(has_end, np.minimum(end, anchor), anchor)
    refresh = np.maximum(created, anchor - rng.integers(0, 30 * HOUR, n))
    refresh = np.where(has_end, np.minimum(refresh, np.maximum(end - 60, created)), refresh)
    last_bid = created + ((horizon - created) * rng.uniform(0.5, 1.0, n)).astype(np.int64)
    updated = np.where(bid_rows, last_bid, refresh)
    updated = np.where(regfree, np.minimum(created + rng.integers(0, 20 * DAY, n), anchor - HOUR), updated)
    updated = np.maximum(updated, created)

    trust = _opt(m["tf"], enriched)
    citation = _opt(m["cf"], enriched)
    authority = _opt(m["da"], enriched)
    referring = _opt(m["rd"], enriched)
    backlinks = _opt(m["backlinks"], enriched)
    edu = _opt(m["edu"], enriched)
    gov = _opt(m["gov"], enriched)
    ages = _opt(age, has_wb)
    snapshots = _opt(m["snapshots"], has_wb)
    score: list[Any] = list(n_none)
    for i in np.flatnonzero(enriched).tolist():
        score[i] = quality_score(
            trust_flow=trust[i],
            citation_flow=citation[i],
            domain_authority=authority[i],
            referring_domains=referring[i],
            backlinks_count=backlinks[i],
            ref_domains_edu=edu[i],
            ref_domains_gov=gov[i],
            age=ages[i],
            wayback_snapshots=snapshots[i],
            is_spammy=spam_list[i],
        )

    slugs = _SLUGS[src].tolist()
    seo_category: list[Any] = list(n_none)
    seo_subcategory: list[Any] = list(n_none)
    for i, slug in enumerate(slugs):
        if slug == "seodomains":
            path = (topic[i] or rnd.choice(THEME_TOPICS[themes[i]])).split("/")
            seo_category[i] = path[0]
            seo_subcategory[i] = path[1] if len(path) > 1 else None
    patterns = [_URL_PATTERN[s] for s in src.tolist()]
    effective = np.where(has_max, max_bid, price)
    languages = [LANGS[k].code for k in lang_keys]
    for i in np.flatnonzero(~has_language).tolist():
        languages[i] = None

    columns = {
        "id": plan.ids[sl].tolist(),
        "name": names,
        "tld": tld_list,
        "source": slugs,
        "type": types.tolist(),
        "auction_type": auction_types.tolist(),
        "price": _opt(price, has_price),
        "max_bid": _opt(max_bid, has_max),
        "effective_price": _opt(effective, has_price | has_max),
        "currency": _CURRENCY[src].tolist(),
        "bids_count": _opt(bids, bids >= 0),
        "auction_end_date": _ts(end, has_end),
        "estibot_appraisal": _opt(appraisal, estibot),
        "score": score,
        "is_spammy": spam.tolist(),
        "age": ages,
        "wayback_snapshots": snapshots,
        "wayback_first_date": _days(m["first_ord"], has_wb),
        "wayback_last_date": _days(m["last_ord"], has_wb),
        "pagerank": _opt(m["pagerank"], has_pr),
        "domain_authority": authority,
        "backlinks_count": backlinks,
        "referring_domains": referring,
        "trust_flow": trust,
        "citation_flow": citation,
        "ttf_topic": topic,
        "ref_domains_edu": edu,
        "ref_domains_gov": gov,
        "ref_domains_dofollow": _opt(m["dofollow"], enriched),
        "seo_domains_category": seo_category,
        "seo_domains_subcategory": seo_subcategory,
        "indexed_pages": _opt(indexed, has_indexed),
        "historical_tech": tech,
        "use_cases": cases,
        "historical_traffic_etv": etv,
        "historical_traffic_peak": peak,
        "historical_traffic_spark": spark,
        "historical_traffic_fetched_at": _ts(anchor - rng.integers(DAY, 60 * DAY, n), has_traffic),
        "historical_traffic": traffic_detail,
        "monthly_visitors": _opt(visitors, has_visitors),
        "language": languages,
        "has_gmb": has_gmb.tolist(),
        "gmb_name": gmb_name,
        "gmb_category": gmb_category,
        "gmb_address": gmb_address,
        "whois_registered_at": _ts(w_reg, whois),
        "whois_expires_at": _ts(w_exp, whois),
        "whois_last_changed_at": _ts(w_changed, whois),
        "whois_registrar": registrar,
        "whois_status": w_status,
        "whois_nameservers": nameservers,
        "whois_ns_category": ns_category,
        "whois_checked_at": _ts(
            np.where(regfree, np.maximum(updated, anchor - rng.integers(HOUR, 20 * DAY, n)), t_now), whois | regfree
        ),
        "purchase_url": [p.format(name=x) if p else None for p, x in zip(patterns, names)],
        "purchase_platform": _PLATFORM_NAME[src].tolist(),
        "created_at": _ts(created),
        "updated_at": _ts(updated),
    }
    columns.update(
        archive_columns(
            np.random.default_rng([seed, 18, chunk]), m["first_ord"], m["last_ord"], m["authority"], has_wb, nameservers
        )
    )
    keys = LISTING_KEYS + ARCHIVE_KEYS
    values = [columns[key] for key in keys]
    return [dict(zip(keys, row)) for row in zip(*values)]


def listing_chunks(plan: ListingPlan, seed: int) -> Iterator[list[dict[str, Any]]]:
    """Every listing record (platforms and regfree), in id order, `CHUNK` at a time."""
    for chunk, start in enumerate(range(0, len(plan), CHUNK)):
        yield _listing_chunk(plan, start, min(len(plan), start + CHUNK), seed, chunk)


# -- pending-delete --------------------------------------------------------------------------

_DNS = ("NXDOMAIN", "SERVFAIL", "NOERROR", None)


def _status_mix(tld: str) -> tuple[tuple[str, ...], np.ndarray, dict[str, int]]:
    """Statuses seen under `tld`, their shares, and each status's stage length in days."""
    policy = policy_for(tld)
    if policy is None:
        statuses = ("serverHold", "clientHold", "pendingDelete", "redemptionPeriod", "transition", "quarantine")
        weights = np.array([0.33, 0.2, 0.22, 0.15, 0.05, 0.05])
        return statuses, weights, {}
    days = dict(policy.days)
    ordered = sorted(days.items(), key=lambda kv: -kv[1])
    stage = {}
    for index, (status, value) in enumerate(ordered):
        later = [v for _, v in ordered[index + 1 :] if v < value]
        stage[status] = value - (max(later) if later else 0)
    statuses = tuple(days)
    weights = [np.sqrt(stage[s]) for s in statuses]
    # Statuses the registry gives no fixed length: a registrar hold, DENIC's TRANSIT.
    extra = {"de": ("transition", 0.2), "uk": ("clientHold", 0.08), "co.uk": ("clientHold", 0.08)}.get(tld)
    if extra is None and policy.tlds == ("gtld",):
        extra = ("clientHold", 0.14)
    total = sum(weights)
    shares = [w / total for w in weights]
    if extra is not None:
        shares = [s * (1 - extra[1]) for s in shares] + [extra[1]]
        statuses = (*statuses, extra[0])
    return statuses, np.array(shares), stage


def pending_chunks(scale: str | Scale, seed: int, today: date) -> Iterator[list[dict[str, Any]]]:
    """Every pending-delete record, in id (= created_at) order, `CHUNK` at a time."""
    sc = _scale(scale)
    rng = np.random.default_rng([seed, 21])
    rnd = random.Random(seed * 1_000_003 + 777_767)
    anchor = int(anchor_of(today).timestamp())
    today_ord = today.toordinal()
    monday = today_ord - today.weekday()
    tld_names = [t for t, _ in PENDING_TLDS]
    counts = allocate([w for _, w in PENDING_TLDS], sc.pending, 1)
    rows: list[tuple] = []
    for tld, count in zip(tld_names, counts):
        statuses, shares, stage = _status_mix(tld)
        status_idx = rng.choice(len(statuses), count, p=shares / shares.sum())
        past = rng.random(count) < 0.06
        mix = langs_for("." + tld)
        lang_keys = [k for k, _ in mix]
        lang_w = np.array([w for _, w in mix])
        langs = rng.choice(len(lang_keys), count, p=lang_w / lang_w.sum())
        themes = rng.choice(len(THEMES), count, p=_THEME_WEIGHTS / _THEME_WEIGHTS.sum())
        for j in range(count):
            status = statuses[status_idx[j]]
            length = stage.get(status, 40)
            remaining = None if status not in stage else dict(policy_for(tld).days)[status]
            if past[j] and remaining is not None:
                elapsed = remaining + rnd.randint(1, 14)
            else:
                elapsed = rnd.uniform(0, length)
            evidence = today_ord - int(elapsed)
            seconds = (evidence - _EPOCH_ORD) * DAY + rnd.randint(0, DAY - 1)
            rows.append((tld, status, evidence, min(seconds, anchor - HOUR), lang_keys[langs[j]], THEMES[themes[j]]))
    n = len(rows)
    # Which weekly snapshot first listed each row: this week's, or an earlier one.
    lag_weeks = rng.choice(4, n, p=[0.78, 0.14, 0.06, 0.02])
    order_key = []
    prepared = []
    for i, (tld, status, evidence, seconds, lang_key, theme) in enumerate(rows):
        evidence_monday = evidence - date.fromordinal(evidence).weekday()
        week = max(evidence_monday, monday - 7 * int(lag_weeks[i]))
        created = max((week - _EPOCH_ORD) * DAY + 2 * HOUR + rnd.randint(0, 3 * HOUR), seconds + rnd.randint(HOUR, DAY))
        created = min(created, anchor - 30 * 60)
        prepared.append((tld, status, evidence, seconds, lang_key, theme, week, created))
        order_key.append(created)
    order = np.lexsort((rng.random(n), np.array(order_key)))
    ids = _ID_BASE_PENDING + np.cumsum(rng.geometric(0.8, n))
    namer = NameMaker(rnd)
    for chunk, start in enumerate(range(0, n, CHUNK)):
        stop = min(n, start + CHUNK)
        yield pending_records(
            [prepared[i] for i in order[start:stop].tolist()],
            ids[start:stop].tolist(),
            seed,
            chunk,
            today,
            anchor,
            rnd,
            namer,
        )


def pending_records(
    prepared: list[tuple],
    ids: list[int],
    seed: int,
    chunk: int,
    today: date,
    anchor: int,
    rnd: random.Random,
    namer: NameMaker,
) -> list[dict[str, Any]]:
    """Pending-delete records of `prepared` rows `(tld, status, evidence day (ordinal), seen at
    (seconds), language key, theme, week (ordinal of its Monday), created (seconds))`:
    names, metrics, DNS, the drop window from the registry's lifecycle; checked before `anchor`."""
    crng = np.random.default_rng([seed, 22, chunk])
    m = len(prepared)
    enriched = crng.random(m) < 0.1
    metrics = _seo(crng, m, enriched, today, spam_share=0.0)
    idn = crng.random(m) < 0.015
    out = []
    for k in range(m):
        tld, status, evidence, seconds, lang_key, theme, week, created = prepared[k]
        made = namer.make_idn(lang_key, theme, "." + tld) if idn[k] else None
        domain, _ = made or namer.make(lang_key, theme, "." + tld)
        label = domain[: -len(tld) - 1]
        # the demo's sightings are daily: seen in the status on `evidence`, not the day before
        window, _ = predict_drop_window(tld, status, date.fromordinal(evidence), date.fromordinal(evidence - 1))
        drop = window.estimate if window else None
        checked = created + rnd.randint(0, max(1, anchor - created))
        if status == "transition":
            dns = "NOERROR" if rnd.random() < 0.6 else "NXDOMAIN"
        else:
            dns = rnd.choices(_DNS, (0.8, 0.08, 0.05, 0.07))[0]
        e = bool(enriched[k])
        tf, cf = int(metrics["tf"][k]), int(metrics["cf"][k])
        rd, bl, da = int(metrics["rd"][k]), int(metrics["backlinks"][k]), int(metrics["da"][k])
        snaps = int(metrics["snapshots"][k])
        values = (
            int(ids[k]),
            domain,
            tld,
            "czds-daily" if len(tld.rpartition(".")[2]) > 2 else "oi-diff",
            date.fromordinal(week).isoformat(),
            _iso(seconds),
            status,
            dns,
            drop.isoformat() if drop else None,
            _iso(checked),
            label.startswith("xn--"),
            len(label),
            quality_score(
                trust_flow=tf,
                citation_flow=cf,
                domain_authority=da,
                referring_domains=rd,
                backlinks_count=bl,
                ref_domains_edu=0,
                ref_domains_gov=0,
                age=None,
                wayback_snapshots=snaps,
                is_spammy=False,
            )
            if e
            else None,
            da if e else None,
            tf if e else None,
            cf if e else None,
            bl if e else None,
            rd if e else None,
            snaps if e else None,
            int(metrics["pagerank"][k]) if e and rnd.random() < 0.6 else None,
            LANGS[lang_key].code if e and rnd.random() < 0.9 else None,
            _iso(created),
            _iso(checked),
        )
        record = dict(zip(PENDING_KEYS, values))
        record["drop_window_start"] = window.start.isoformat() if window else None
        record["drop_window_end"] = window.end.isoformat() if window else None
        out.append(record)
    return out

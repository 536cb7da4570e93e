"""The demo's listing records (platforms and regfree), made from the plan (`plan.py`).

Records are made in chunks of `CHUNK` rows, column by column with numpy, then zipped into
dicts shaped as the reference schemas, so per-record Python work stays small (the `full`
scale makes about 850,000 records). Everything random comes from generators seeded with
`(seed, purpose, chunk)`: the same seed and `today` give the same records, whatever
consumes them.

Time runs relative to `anchor_of(today)` (07:00 UTC, when the daily platform fetch has
landed): listings were created before it, auctions mostly end in the 1-10 days after it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date
from typing import Any

import numpy as np

from ..enrich.score import quality_score
from ..signals.wayback_content import ARCHIVE_FIELDS
from ..store.fields import LISTING_FIELDS
from .clock import DAY, EPOCH_ORDINAL, HOUR
from .plan import (
    CHUNK,
    CURRENCY,
    ENRICHED,
    ESTIBOT,
    KIND_AUCTION_TYPE,
    KIND_TYPE,
    LANG_KEYS,
    PLATFORM_NAME,
    REGFREE_INDEX,
    SLUGS,
    URL_PATTERN,
    ListingPlan,
)
from .signal_fields import archive_columns, spam_names
from .site_profile import (
    LOCAL_THEMES,
    business_listing,
    country_code,
    seo_metrics,
    site_tech,
    site_traffic,
    topic_of,
    whois_of,
)
from .words import LANGS, THEME_TOPICS, THEMES

__all__ = ["LISTING_KEYS", "ARCHIVE_KEYS", "listing_chunk", "listing_chunks"]

LISTING_KEYS = tuple(LISTING_FIELDS)
ARCHIVE_KEYS = ARCHIVE_FIELDS  # what `edt enrich` adds (toolkit.signals.wayback_content)


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
    text = np.datetime_as_string((ordinals - EPOCH_ORDINAL).astype("datetime64[D]")).astype(object)
    if present is not None:
        text[~present] = None
    return text.tolist()


def _whole_years(first_ord: np.ndarray, today: date) -> np.ndarray:
    d = (first_ord - EPOCH_ORDINAL).astype("datetime64[D]")
    years = d.astype("datetime64[Y]").astype(np.int64) + 1970
    months = d.astype("datetime64[M]").astype(np.int64) % 12 + 1
    days = (d - d.astype("datetime64[M]")).astype(np.int64) + 1
    later = (months > today.month) | ((months == today.month) & (days > today.day))
    return today.year - years - later.astype(np.int64)


def listing_chunk(plan: ListingPlan, start: int, stop: int, seed: int, chunk: int) -> list[dict[str, Any]]:
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

    regfree = src == REGFREE_INDEX
    created = plan.created[sl]
    end = plan.end[sl]
    price = plan.price[sl]
    bids = plan.bids[sl]
    max_bid = plan.max_bid[sl]
    has_end = end >= 0
    has_price = ~np.isnan(price)
    has_max = ~np.isnan(max_bid)

    enriched = rng.random(n) < ENRICHED[src]
    m = seo_metrics(rng, n, enriched, today)
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
    local = np.array([t in LOCAL_THEMES for t in themes])
    has_gmb = enriched & (rng.random(n) < np.where(local, 0.07, 0.015))
    estibot = ~regfree & (rng.random(n) < ESTIBOT[src])
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
        topic[i] = topic_of(r, spam_list[i], themes[i], lang_keys[i], tld_list[i])
    for i in np.flatnonzero(tech_checked).tolist():
        tech[i], cases[i] = site_tech(rnd, themes[i])
    rd_list = m["rd"].tolist()
    for i in np.flatnonzero(has_traffic).tolist():
        etv[i], peak[i], spark[i], traffic_detail[i] = site_traffic(rnd, rd_list[i], country_code(tld_list[i]))
    for i in np.flatnonzero(has_gmb).tolist():
        gmb_name[i], gmb_category[i], gmb_address[i] = business_listing(
            rnd, parts[i], themes[i], tld_list[i], lang_keys[i]
        )

    # WHOIS / RDAP snapshot of platform listings.
    w_reg = (m["first_ord"] - rng.integers(0, 200, n) - EPOCH_ORDINAL) * DAY + rng.integers(0, DAY, n)
    t_now = anchor - rng.integers(HOUR, 3 * DAY, n)
    expiring = rng.integers(DAY, 40 * DAY, n)
    w_exp = np.where(
        (KIND_AUCTION_TYPE[src, kind] == "Dropped"), anchor + rng.integers(300 * DAY, 365 * DAY, n), anchor - expiring
    )
    w_changed = np.minimum(w_exp + rng.integers(0, 5 * DAY, n), t_now)
    registrar: list[Any] = list(n_none)
    w_status: list[Any] = list(n_none)
    nameservers: list[Any] = list(n_none)
    ns_category: list[Any] = list(n_none)
    types = KIND_TYPE[src, kind]
    auction_types = KIND_AUCTION_TYPE[src, kind]
    for i in np.flatnonzero(whois).tolist():
        registrar[i], w_status[i], ns_category[i], nameservers[i] = whois_of(
            r, SLUGS[src[i]], tld_list[i], types[i], auction_types[i]
        )

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

    slugs = SLUGS[src].tolist()
    seo_category: list[Any] = list(n_none)
    seo_subcategory: list[Any] = list(n_none)
    for i, slug in enumerate(slugs):
        if slug == "seodomains":
            path = (topic[i] or rnd.choice(THEME_TOPICS[themes[i]])).split("/")
            seo_category[i] = path[0]
            seo_subcategory[i] = path[1] if len(path) > 1 else None
    patterns = [URL_PATTERN[s] for s in src.tolist()]
    effective = np.where(has_max, max_bid, price)
    languages: list[str | None] = [LANGS[k].code for k in lang_keys]
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
        "currency": CURRENCY[src].tolist(),
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
        "purchase_platform": PLATFORM_NAME[src].tolist(),
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
        yield listing_chunk(plan, start, min(len(plan), start + CHUNK), seed, chunk)

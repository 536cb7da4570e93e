"""The built-in demo source: a realistic, deterministic mirror without network or key.

    from toolkit.demo import load_demo
    counts = load_demo(conn, scale="small", seed=42)     # or scale="full": the seed's volumes

`generate_listings` / `generate_pending` yield records shaped exactly as the reference
`Domain` and `PendingDeleteDomain` schemas (every field present, None where not enriched),
for the 22 platform sources and `regfree`; `load_demo` writes them through
`toolkit.store.writer` with `origin="demo"`. Same seed and same `today`, same records.

What is in it (see `catalog.py`): per platform volume, listing kinds (auction types,
closeouts, backorders), TLD mix, native currency, purchase links and believable prices;
the deleted-ccTLD database over 83 TLDs; the pending-delete inventory over 125 TLDs with
drop dates from `toolkit.ingest.lifecycle`; correlated SEO metrics (`generate.py`); names made of
words of the TLD's language (`words.py`, `name_maker.py`). Time is relative to `today`: the
demo's "now" is 07:00 UTC that day (after the morning fetch of every platform); without a
`today`, the demo's day is the last one whose 07:00 UTC has passed.

A demo load never mixes with real data silently: `load_demo` refuses a mirror holding
synced or ingested rows unless `force=True`; `clear_demo` removes only demo rows.

- `loader.py`     `load_demo`, `clear_demo`: the demo into the mirror and out again
- `worker.py`     the rows made ready for the writer, in a worker process for big loads
- `clock.py`      the demo's "now" (07:00 UTC on its day) and its timestamps
- `plan.py`       the scales and the listing plan: who, when, what price, in id order
- `generate.py`   the listing and regfree records; `pending.py` the pending-delete ones
- `site_profile.py`  a domain's past as a site: links, topic, tech, traffic, WHOIS
- `timelapse.py`  the demo through time (`edt demo --days N`), played by `playback.py`
- `catalog.py`    what the demo looks like: volumes, kinds, TLDs, prices, languages
- `name_maker.py`, `words.py`   names made of words of the TLD's language
- `signal_fields.py`  the judging signals the demo's records carry

The names below are imported when first used: `toolkit.demo.catalog` alone does not load
the generators or NumPy.
"""

from __future__ import annotations

from .. import lazy_exports

_LAZY = {
    "DemoRefused": ".loader",
    "SCALES": ".plan",
    "Scale": ".plan",
    "generate_listings": ".loader",
    "generate_pending": ".loader",
    "load_demo": ".loader",
    "clear_demo": ".loader",
    "clear_demo_once_answered": ".loader",
    "removal_line": ".loader",
    "demo_day": ".clock",
    "platform_counts": ".plan",
}

__all__ = list(_LAZY)

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

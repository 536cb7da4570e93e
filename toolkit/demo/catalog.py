"""What the demo source looks like: per platform volumes, listing kinds, TLD mixes,
prices (the platforms' own rows in platforms.toml); the regfree and pending-delete TLD
spreads; the languages of each TLD.

Volumes at `full` scale follow the seed (about 563,000 listings over the platforms, from
about 11 to about 189,000 each; 164,000 regfree over 83 TLDs; 120,000 pending-delete over
125 TLDs). Smaller scales keep the same shares.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields
from importlib import resources
from typing import Any

from ..sources import PLATFORM_SLUGS

__all__ = [
    "Kind",
    "Platform",
    "PLATFORMS",
    "REGFREE_TLDS",
    "PENDING_TLDS",
    "TLD_LANGS",
    "langs_for",
    "COUNTRY_OF_TLD",
    "TimeLapse",
    "TIMELAPSE",
    "timelapse_table",
]


@dataclass(frozen=True)
class Kind:
    """One listing kind of a platform: its type, auction_type, share and price model."""

    type: str  # auction | closeout | backorder
    auction_type: str | None
    weight: float
    price: tuple  # ("fixed", value) | ("lognormal", median, sigma, minimum, maximum)
    duration: tuple[float, float] = (0.0, 0.0)  # auction length in days (min, max); closeouts: listing age
    bid_share: float = 0.0  # share of listings with at least one bid
    ends: bool = True  # has an auction_end_date


@dataclass(frozen=True)
class Platform:
    slug: str
    full: int  # listings at full scale
    tlds: tuple[tuple[str, float], ...]
    kinds: tuple[Kind, ...]
    enriched: float  # share of rows with SEO metrics
    rounding: str = "whole"  # whole | cents99 | jpy | nines
    themes: tuple[tuple[str, float], ...] = ()  # theme tilt (default: even)
    brandable: float = 0.04  # share of invented brandable names
    estibot: float = 0.0  # share with an Estibot appraisal


def _t(text: str) -> tuple[tuple[str, float], ...]:
    """ ".com 72 .net 9" -> ((".com", 72.0), (".net", 9.0))"""
    parts = text.split()
    return tuple((parts[i], float(parts[i + 1])) for i in range(0, len(parts), 2))


def _tuples(row: dict[str, Any], *keys: str) -> dict[str, tuple]:
    return {key: tuple(row[key]) for key in keys if key in row}


def _platforms() -> tuple[Platform, ...]:
    """The platforms of platforms.toml, in its order (a field it leaves out keeps its default)."""
    rows = tomllib.loads(resources.files(__package__).joinpath("platforms.toml").read_text(encoding="utf-8"))
    platforms = []
    for row in rows["platform"]:
        kinds = tuple(
            Kind(**{"auction_type": None, **kind, **_tuples(kind, "price", "duration")}) for kind in row["kinds"]
        )
        pairs = {k: _t(row[k]) for k in ("tlds", "themes") if k in row}
        platforms.append(Platform(**{**row, **pairs, "kinds": kinds}))
    return tuple(platforms)


PLATFORMS: tuple[Platform, ...] = _platforms()

assert tuple(p.slug for p in PLATFORMS) == PLATFORM_SLUGS, "demo catalogue out of step with toolkit.sources"

# 83 ccTLDs of the deleted-domains database, led by the seed's ten (full-scale counts).
REGFREE_TLDS: tuple[tuple[str, float], ...] = _t(
    ".id 21000 .fr 17500 .it 14000 .co 11500 .in 10000 .de 9200 .co.uk 8400 .nl 7600 .com.au 6800 .dk 6000 "
    ".be 4200 .es 3900 .pl 3600 .ch 3300 .at 3000 .se 2800 .cz 2600 .pt 2300 .ro 2100 .hu 1900 .fi 1700 "
    ".no 1600 .sk 1450 .ie 1350 .gr 1250 .ca 1200 .us 1100 .me 1000 .io 950 .eu 900 .co.nz 850 .jp 800 "
    ".com.br 760 .com.mx 720 .cl 680 .com.ar 640 .pe 600 .co.za 570 .com.tr 540 .lt 510 .lv 480 .ee 450 "
    ".si 420 .hr 400 .rs 380 .bg 360 .lu 340 .is 320 .li 300 .uk 290 .org.uk 280 .nu 270 .tw 260 .hk 250 "
    ".sg 240 .com.my 230 .ph 220 .vn 210 .co.th 200 .kr 190 .co.il 180 .ae 170 .ma 160 .com.ng 150 .co.ke 140 "
    ".ec 130 .com.uy 120 .ge 110 .am 100 .md 95 .kz 90 .ua 85 .by 80 .cc 75 .tv 70 .ws 65 .la 60 .mu 55 .re 50 "
    ".lk 45 .com.sg 40 .com.co 36 .bz 34"
)

# 125 TLDs of the pending-delete inventory (no dot, as the reference), with full-scale weights.
PENDING_TLDS: tuple[tuple[str, float], ...] = _t(
    "com 30000 net 4200 org 3600 info 1500 biz 700 xyz 2400 online 1800 site 1300 top 1600 shop 1400 store 900 "
    "club 500 app 600 dev 400 tech 500 space 350 website 300 live 350 life 300 world 250 icu 400 vip 300 fun 250 "
    "pro 300 mobi 150 cloud 200 blog 200 news 150 agency 120 digital 150 email 100 solutions 120 services 120 "
    "network 100 link 120 click 130 best 90 today 110 media 130 group 140 "
    "de 7000 uk 1500 co.uk 4200 org.uk 300 fr 4500 nl 3300 eu 2100 be 1500 it 2800 es 1300 se 1400 nu 350 dk 1200 "
    "no 500 fi 450 ch 1100 li 60 at 900 pl 1700 cz 1000 sk 350 pt 500 ie 300 ro 400 hu 350 gr 250 bg 150 hr 150 "
    "si 120 lt 150 lv 110 ee 100 is 60 lu 80 ca 1300 us 900 co 800 in 1100 io 700 me 500 ai 300 au 200 com.au 1200 "
    "nz 150 co.nz 250 jp 600 co.jp 150 kr 150 tw 150 hk 120 sg 150 my 120 id 500 co.id 150 ph 100 vn 150 "
    "br 120 com.br 700 mx 200 com.mx 250 ar 100 com.ar 150 cl 200 pe 100 za 60 co.za 250 tr 200 com.tr 150 ru 600 "
    "ua 200 by 80 kz 80 cc 200 tv 200 ws 60 ly 60 to 80 gg 60 sh 50 ac 40 la 40 cn 400 rs 80 ge 40 md 40"
)

# Languages of each TLD's names and content: (language key of toolkit.demo.words, weight).
_GENERIC = (
    ("en", 0.82),
    ("es", 0.04),
    ("de", 0.03),
    ("fr", 0.03),
    ("pt", 0.02),
    ("it", 0.02),
    ("nl", 0.01),
    ("ja", 0.01),
    ("pl", 0.01),
    ("id", 0.01),
)
TLD_LANGS: dict[str, tuple[tuple[str, float], ...]] = {
    ".fr": (("fr", 0.92), ("en", 0.08)),
    ".re": (("fr", 1.0),),
    ".be": (("nl", 0.52), ("fr", 0.42), ("en", 0.06)),
    ".ch": (("de", 0.6), ("fr", 0.25), ("it", 0.05), ("en", 0.1)),
    ".li": (("de", 0.9), ("en", 0.1)),
    ".lu": (("fr", 0.5), ("de", 0.3), ("en", 0.2)),
    ".ca": (("en", 0.75), ("fr", 0.25)),
    ".de": (("de", 0.93), ("en", 0.07)),
    ".at": (("de", 0.93), ("en", 0.07)),
    ".it": (("it", 0.94), ("en", 0.06)),
    ".es": (("es", 0.92), ("en", 0.08)),
    ".nl": (("nl", 0.92), ("en", 0.08)),
    ".pt": (("pt", 0.92), ("en", 0.08)),
    ".jp": (("ja", 0.9), ("en", 0.1)),
    ".co.jp": (("ja", 0.95), ("en", 0.05)),
    ".pl": (("pl", 0.92), ("en", 0.08)),
    ".cz": (("cs", 0.92), ("en", 0.08)),
    ".sk": (("cs", 0.9), ("en", 0.1)),
    ".se": (("sv", 0.9), ("en", 0.1)),
    ".nu": (("sv", 0.6), ("en", 0.4)),
    ".dk": (("da", 0.92), ("en", 0.08)),
    ".no": (("no", 0.92), ("en", 0.08)),
    ".fi": (("fi", 0.92), ("en", 0.08)),
    ".id": (("id", 0.94), ("en", 0.06)),
    ".co.id": (("id", 0.95), ("en", 0.05)),
    ".ro": (("ro", 0.9), ("en", 0.1)),
    ".hu": (("hu", 0.92), ("en", 0.08)),
    ".com.tr": (("tr", 0.92), ("en", 0.08)),
    ".tr": (("tr", 0.92), ("en", 0.08)),
    ".co": (("es", 0.6), ("en", 0.4)),
    ".com.co": (("es", 0.95), ("en", 0.05)),
    ".com.mx": (("es", 0.9), ("en", 0.1)),
    ".mx": (("es", 0.9), ("en", 0.1)),
    ".com.ar": (("es", 0.95), ("en", 0.05)),
    ".ar": (("es", 0.95), ("en", 0.05)),
    ".cl": (("es", 0.92), ("en", 0.08)),
    ".pe": (("es", 0.92), ("en", 0.08)),
    ".ec": (("es", 0.92), ("en", 0.08)),
    ".com.uy": (("es", 0.95), ("en", 0.05)),
    ".com.br": (("pt", 0.94), ("en", 0.06)),
    ".br": (("pt", 0.94), ("en", 0.06)),
    ".ma": (("fr", 0.7), ("en", 0.3)),
    ".eu": (("en", 0.4), ("de", 0.2), ("fr", 0.15), ("nl", 0.1), ("it", 0.1), ("es", 0.05)),
    ".cn": (("en", 1.0),),
    ".com": _GENERIC,
    ".net": _GENERIC,
    ".org": _GENERIC,
}


def langs_for(tld: str) -> tuple[tuple[str, float], ...]:
    """Languages of names under `tld`: its own mix, else English."""
    return TLD_LANGS.get(tld, (("en", 1.0),))


# Country of a ccTLD, for business-profile addresses and Regional topics.
COUNTRY_OF_TLD: dict[str, str] = {
    ".fr": "France",
    ".re": "France",
    ".de": "Germany",
    ".at": "Austria",
    ".ch": "Switzerland",
    ".it": "Italy",
    ".es": "Spain",
    ".nl": "Netherlands",
    ".be": "Belgium",
    ".co.uk": "United Kingdom",
    ".uk": "United Kingdom",
    ".org.uk": "United Kingdom",
    ".me.uk": "United Kingdom",
    ".pl": "Poland",
    ".cz": "Czech Republic",
    ".sk": "Slovakia",
    ".se": "Sweden",
    ".dk": "Denmark",
    ".no": "Norway",
    ".fi": "Finland",
    ".pt": "Portugal",
    ".ie": "Ireland",
    ".ro": "Romania",
    ".hu": "Hungary",
    ".id": "Indonesia",
    ".in": "India",
    ".co": "Colombia",
    ".com.au": "Australia",
    ".co.nz": "New Zealand",
    ".ca": "Canada",
    ".us": "United States",
    ".jp": "Japan",
    ".co.jp": "Japan",
    ".com.br": "Brazil",
    ".com.mx": "Mexico",
    ".com.ar": "Argentina",
    ".cl": "Chile",
    ".pe": "Peru",
    ".com.tr": "Turkey",
    ".lu": "Luxembourg",
    ".co.za": "South Africa",
    ".gr": "Greece",
}

_COUNTRIES_OF_REGION = {
    "Europe": "France, Germany, Austria, Switzerland, Italy, Spain, Netherlands, Belgium, United Kingdom, Poland, "
    "Czech Republic, Slovakia, Sweden, Denmark, Norway, Finland, Portugal, Ireland, Romania, Hungary, Luxembourg, "
    "Greece",
    "Asia": "Indonesia, India, Japan, Turkey",
    "South America": "Colombia, Brazil, Argentina, Chile, Peru",
    "North America": "Mexico, Canada, United States",
    "Oceania": "Australia, New Zealand",
    "Africa": "South Africa",
}
_REGION = {country: region for region, names in _COUNTRIES_OF_REGION.items() for country in names.split(", ")}


def regional_topic(tld: str) -> str | None:
    country = COUNTRY_OF_TLD.get(tld)
    if country is None:
        return None
    return f"Regional/{_REGION[country]}/{country}"


def _doc(value: Any, doc: str) -> Any:
    return field(default=value, metadata={"doc": doc})


@dataclass(frozen=True)
class TimeLapse:
    """How the demo source changes from one day to the next (`edt demo --days N`): the realism
    parameters of the time-lapse, from the specification (section 1: 30,000-40,000 new
    listings a day, bids several times a day, new listings every morning with one large
    platform about two hours later, the deleted-ccTLD database monthly, the pending-delete
    inventory in weekly batches) and, where it is silent, the platforms' usual rules.
    `timelapse_table()` is the demo guide's table of them (docs/guides/demo.md)."""

    new_per_day: int = _doc(35_000, "new platform listings a day at full scale (the seed: 30,000-40,000)")
    delayed_platform: str = _doc("dropcatch", "the large platform whose feed lands late...")
    delay_hours: float = _doc(2.0, "... by this many hours (seen at the next morning's run)")
    bids_at_end_factor: float = _doc(
        3.5,
        "share of auctions with a bid by their end, as a multiple of the share a "
        "snapshot finds (`Kind.bid_share`, most auctions not yet ended); at most 0.9",
    )
    bid_timing: tuple[float, float] = _doc(
        (0.6, 2.2),
        "bids at a moment = final bids x (share of the bidding time gone)^g, g drawn in this range: bids come late",
    )
    unsold_to_closeout: float = _doc(
        0.25,
        "share of auctions ending without a bid that come back as a closeout on "
        "the same platform (at 80% of the price)...",
    )
    unsold_elsewhere: float = _doc(0.10, "... or as an auction on another platform (the rest: nothing)")
    relist_after_days: tuple[float, float] = _doc((0.5, 3.0), "days from the end to the relisting")
    cutting_share: float = _doc(0.5, "share of closeouts whose seller cuts the price...")
    closeout_step_days: int = _doc(7, "... every this many days...")
    closeout_step: float = _doc(0.85, "... to this share of the price...")
    closeout_floor: float = _doc(0.4, "... never below this share of the first price")
    metric_drift: float = _doc(
        0.08,
        "the largest share a metric moves over a listing's life (re-measured "
        "weekly, nearer the final value each week)...",
    )
    drifting_share: float = _doc(0.3, "... for this share of listings (the others' metrics hold still)")
    jump_share: float = _doc(
        0.03,
        "share of auctions with bids whose metrics jump before the end (where Trust "
        "Flow ends at 15 or more: 0.3x before, Trust Flow and referring domains)",
    )
    jump_days_before_end: tuple[float, float] = _doc(
        (2.0, 6.0), "days before the end the jump comes (a bids run sees it)"
    )
    pending_weeks_listed: int = _doc(
        6,
        "weekly cohorts of pending-delete names in one inventory (drop dates 5-45 "
        "days ahead); a name leaves at the first batch after its drop day",
    )
    dropped_to_regfree: float = _doc(
        0.5,
        "share of dropped names of a ccTLD the deleted-ccTLD database covers that "
        "appear there at its next monthly refresh (the others: registered again)",
    )
    regfree_taken_per_month: float = _doc(0.08, "share of regfree rows registered by someone each month")
    warmup_days: int = _doc(120, "listings created up to this long before the window may still be live in it")


def timelapse_table(parameters: "TimeLapse | None" = None) -> str:
    """The time-lapse's parameters as a Markdown table (docs/guides/demo.md's, kept current by docs/generate.py)."""
    chosen = parameters or TIMELAPSE
    lines = ["| parameter | value | what it sets |", "|---|---:|---|"]
    for item in fields(TimeLapse):
        value = getattr(chosen, item.name)
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)
        lines.append(f"| `{item.name}` | {shown} | {item.metadata['doc']} |")
    return "\n".join(lines)


TIMELAPSE = TimeLapse()

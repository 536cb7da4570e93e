"""What the demo source looks like: per platform volumes, listing kinds, TLD mixes,
prices; the regfree and pending-delete TLD spreads; the languages of each TLD.

Volumes at `full` scale follow the seed (about 563,000 listings over the platforms, from
about 11 to about 189,000 each; 164,000 regfree over 83 TLDs; 120,000 pending-delete over
125 TLDs). Smaller scales keep the same shares.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
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


_GTLD_MIX = (
    ".com 72 .net 9 .org 7 .info 2 .biz 1 .us 1.5 .co 1.5 .io 1 .me 1 .xyz 1.5 .online 0.7 .club 0.5 "
    ".shop 0.5 .store 0.4"
)

PLATFORMS: tuple[Platform, ...] = (
    Platform(
        "dynadot",
        62_000,
        _t(
            ".com 55 .net 8 .org 6 .xyz 6 .top 4 .online 3 .site 3 .shop 3 .store 2 .club 2 "
            ".info 2 .co 2 .io 2 .me 1 .ai 1"
        ),
        (Kind("closeout", None, 1.0, ("lognormal", 9.0, 0.9, 1.99, 2500.0), (1, 90), ends=False),),
        enriched=0.55,
        rounding="cents99",
        estibot=0.1,
    ),
    Platform(
        "catched",
        14_000,
        _t(".com 50 .net 8 .org 7 .de 5 .fr 5 .nl 4 .eu 4 .it 3 .be 3 .co.uk 3 .es 3 .ch 2 .at 2"),
        (Kind("auction", None, 1.0, ("lognormal", 25.0, 0.5, 10.0, 400.0), (3, 5), bid_share=0.25),),
        enriched=0.8,
    ),
    Platform(
        "dropcatch",
        189_000,
        _t(_GTLD_MIX),
        (
            Kind("auction", "Dropped", 0.70, ("fixed", 59.0), (3, 3), bid_share=0.21),
            Kind("auction", "PreRelease", 0.22, ("fixed", 59.0), (5, 10), bid_share=0.16),
            Kind("auction", "PrivateSeller", 0.08, ("lognormal", 250.0, 1.1, 20.0, 50_000.0), (7, 14), bid_share=0.08),
        ),
        enriched=0.6,
        estibot=0.35,
    ),
    Platform(
        "godaddy",
        118_000,
        _t(
            ".com 75 .net 7 .org 6 .co 2 .info 2 .us 1 .io 1 .biz 0.5 .xyz 1 .shop 0.5 "
            ".store 0.5 .online 1 .app 0.5 .dev 0.3 .ai 0.2"
        ),
        (
            Kind("auction", "Bid", 0.74, ("lognormal", 12.0, 0.6, 5.0, 5000.0), (7, 10), bid_share=0.18),
            Kind("closeout", "BuyNow", 0.26, ("lognormal", 11.0, 0.7, 5.0, 3000.0), (5, 5)),
        ),
        enriched=0.62,
        estibot=0.4,
    ),
    Platform(
        "gname",
        24_000,
        _t(".com 70 .net 8 .org 5 .top 5 .xyz 4 .cc 3 .vip 2 .cn 3"),
        (
            Kind("auction", None, 0.7, ("lognormal", 15.0, 0.6, 5.0, 2000.0), (3, 7), bid_share=0.15),
            Kind("closeout", None, 0.3, ("lognormal", 29.0, 0.9, 5.0, 5000.0), (1, 60), ends=False),
        ),
        enriched=0.7,
    ),
    Platform(
        "snapnames",
        30_000,
        _t(".com 80 .net 10 .org 6 .info 2 .biz 1 .us 1"),
        (
            Kind("auction", "PreRelease", 0.8, ("fixed", 69.0), (3, 5), bid_share=0.2),
            Kind("closeout", None, 0.2, ("lognormal", 39.0, 0.8, 9.0, 3000.0), (1, 45), ends=False),
        ),
        enriched=0.65,
        estibot=0.2,
    ),
    Platform(
        "ukdroplists",
        3_200,
        _t(".co.uk 70 .uk 20 .org.uk 8 .me.uk 2"),
        (
            Kind("backorder", None, 0.7, ("fixed", 12.0), (1, 30), bid_share=0.06),
            Kind("auction", None, 0.3, ("lognormal", 20.0, 0.6, 5.0, 800.0), (5, 7), bid_share=0.3),
        ),
        enriched=0.85,
    ),
    Platform(
        "subreg",
        5_500,
        _t(".cz 55 .sk 20 .eu 15 .com 5 .pl 3 .hu 2"),
        (
            Kind("auction", None, 0.6, ("lognormal", 12.0, 0.6, 5.0, 800.0), (5, 10), bid_share=0.15),
            Kind("closeout", None, 0.4, ("lognormal", 25.0, 0.8, 5.0, 2000.0), (1, 60), ends=False),
        ),
        enriched=0.75,
    ),
    Platform(
        "webexpire",
        7_000,
        _t(".fr 92 .re 2 .com 3 .eu 2 .be 1"),
        (
            Kind("auction", None, 0.6, ("lognormal", 29.0, 0.5, 10.0, 900.0), (7, 7), bid_share=0.25),
            Kind("backorder", None, 0.4, ("fixed", 29.0), (1, 30), bid_share=0.05),
        ),
        enriched=0.85,
    ),
    Platform(
        "parkio",
        4_200,
        _t(".io 45 .me 15 .ly 10 .to 8 .sh 6 .ac 5 .gg 5 .co 4 .ai 2"),
        (
            Kind("backorder", None, 0.55, ("fixed", 99.0), (1, 30), bid_share=0.1),
            Kind("auction", None, 0.45, ("fixed", 99.0), (10, 10), bid_share=0.3),
        ),
        enriched=0.6,
        themes=(("tech", 5.0), ("biz", 2.0), ("games", 1.0)),
        brandable=0.15,
    ),
    Platform(
        "bloomup",
        3_800,
        _t(".fr 85 .com 8 .be 3 .eu 2 .ch 2"),
        (
            Kind("auction", None, 0.6, ("lognormal", 35.0, 0.6, 10.0, 900.0), (7, 7), bid_share=0.2),
            Kind("closeout", None, 0.4, ("lognormal", 79.0, 0.7, 15.0, 2500.0), (1, 60), ends=False),
        ),
        enriched=0.9,
    ),
    Platform(
        "nicsell",
        12_000,
        _t(".de 45 .fr 15 .nl 12 .eu 10 .at 6 .ch 5 .be 4 .it 3"),
        (Kind("auction", None, 1.0, ("fixed", 10.0), (1, 7), bid_share=0.3),),
        enriched=0.75,
    ),
    Platform(
        "namesilo",
        16_000,
        _t(".com 70 .net 8 .org 6 .xyz 4 .top 3 .online 3 .info 2 .co 2 .io 2"),
        (Kind("auction", None, 1.0, ("lognormal", 15.0, 0.7, 5.0, 2000.0), (7, 7), bid_share=0.12),),
        enriched=0.65,
    ),
    Platform(
        "namecheap",
        38_000,
        _t(".com 72 .net 8 .org 6 .io 3 .co 3 .ai 2 .app 1 .dev 1 .xyz 2 .me 2"),
        (Kind("auction", None, 1.0, ("lognormal", 9.0, 0.6, 1.0, 2000.0), (3, 7), bid_share=0.2),),
        enriched=0.95,
        estibot=0.3,
    ),
    Platform(
        "sedo",
        20_000,
        _t(".de 40 .com 30 .at 6 .ch 6 .eu 5 .net 4 .org 4 .fr 3 .nl 2"),
        (Kind("auction", None, 1.0, ("fixed", 69.0), (7, 7), bid_share=0.15),),
        enriched=0.97,
    ),
    Platform(
        "gnews-domains",
        11,
        _t(".com 60 .fr 20 .net 10 .news 10"),
        (Kind("closeout", None, 1.0, ("lognormal", 1500.0, 0.6, 300.0, 20_000.0), (5, 120), ends=False),),
        enriched=1.0,
        themes=(("news", 10.0),),
        brandable=0.0,
    ),
    Platform(
        "backorders-domains",
        900,
        _t(".es 15 .pt 10 .pl 12 .be 10 .se 8 .dk 8 .fi 6 .no 5 .at 6 .ch 5 .ie 5 .hu 5 .ro 5"),
        (Kind("auction", None, 1.0, ("fixed", 30.0), (7, 7), bid_share=0.25),),
        enriched=0.85,
    ),
    Platform(
        "domainlore",
        1_500,
        _t(".co.uk 75 .uk 20 .org.uk 5"),
        (
            Kind("auction", "Spotlight", 0.2, ("lognormal", 60.0, 0.7, 10.0, 3000.0), (7, 7), bid_share=0.45),
            Kind("auction", "Hidden Gems", 0.45, ("lognormal", 15.0, 0.5, 5.0, 500.0), (7, 7), bid_share=0.3),
            Kind("auction", "SEO", 0.35, ("lognormal", 30.0, 0.6, 5.0, 900.0), (7, 7), bid_share=0.3),
        ),
        enriched=0.95,
    ),
    Platform(
        "rakkodomain",
        2_400,
        _t(".jp 45 .com 35 .net 8 .co.jp 6 .org 3 .info 3"),
        (Kind("closeout", None, 1.0, ("lognormal", 9800.0, 0.8, 1980.0, 500_000.0), (1, 90), ends=False),),
        enriched=1.0,
        rounding="jpy",
    ),
    Platform(
        "seodomains",
        9_500,
        _t(".com 55 .net 8 .org 8 .de 5 .fr 5 .co.uk 4 .it 3 .es 3 .nl 3 .pl 2 .info 2 .eu 2"),
        (Kind("closeout", None, 1.0, ("lognormal", 149.0, 0.7, 29.0, 5000.0), (1, 120), ends=False),),
        enriched=1.0,
        rounding="nines",
    ),
    Platform(
        "nameshift",
        1_300,
        _t(".com 80 .io 8 .co 5 .ai 4 .net 3"),
        (Kind("closeout", None, 1.0, ("lognormal", 2400.0, 0.8, 300.0, 95_000.0), (1, 180), ends=False),),
        enriched=0.9,
        rounding="nines",
        brandable=0.45,
    ),
    Platform(
        "namepros",
        600,
        _t(".com 85 .io 5 .co 4 .ai 3 .net 3"),
        (Kind("closeout", None, 1.0, ("lognormal", 1200.0, 0.9, 99.0, 50_000.0), (1, 180), ends=False),),
        enriched=0.4,
        rounding="nines",
        brandable=0.6,
    ),
)

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

_REGION = {
    "France": "Europe",
    "Germany": "Europe",
    "Austria": "Europe",
    "Switzerland": "Europe",
    "Italy": "Europe",
    "Spain": "Europe",
    "Netherlands": "Europe",
    "Belgium": "Europe",
    "United Kingdom": "Europe",
    "Poland": "Europe",
    "Czech Republic": "Europe",
    "Slovakia": "Europe",
    "Sweden": "Europe",
    "Denmark": "Europe",
    "Norway": "Europe",
    "Finland": "Europe",
    "Portugal": "Europe",
    "Ireland": "Europe",
    "Romania": "Europe",
    "Hungary": "Europe",
    "Luxembourg": "Europe",
    "Greece": "Europe",
    "Indonesia": "Asia",
    "India": "Asia",
    "Japan": "Asia",
    "Colombia": "South America",
    "Brazil": "South America",
    "Argentina": "South America",
    "Chile": "South America",
    "Peru": "South America",
    "Mexico": "North America",
    "Canada": "North America",
    "United States": "North America",
    "Australia": "Oceania",
    "New Zealand": "Oceania",
    "Turkey": "Asia",
    "South Africa": "Africa",
}


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

"""What a demo domain was as a site: its links and their metrics (`seo_metrics`, for listings and
pending-delete names alike), its topic, the technology and traffic of its archived pages, its
business listing and its WHOIS snapshot. Each draws from the generators it is handed, in a
fixed order, so the same seed gives the same records.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np

from .catalog import COUNTRY_OF_TLD, regional_topic
from .words import LANGS, THEME_TOPICS

__all__ = [
    "LOCAL_THEMES",
    "seo_metrics",
    "topic_of",
    "site_tech",
    "site_traffic",
    "country_code",
    "business_listing",
    "whois_of",
]

_WAYBACK_START = date(1996, 5, 10).toordinal()


def seo_metrics(rng: np.random.Generator, n: int, enriched: np.ndarray, today: date, spam_share: float = 0.03) -> dict:
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
LOCAL_THEMES = {"health", "food", "home", "biz", "travel", "sport"}
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


def country_code(tld: str) -> str:
    last = tld.rpartition(".")[2].upper()
    return {"UK": "GB"}.get(last, last) if len(last) == 2 else "US"


def business_listing(rnd: random.Random, parts: list[str], theme: str, tld: str, lang_key: str) -> tuple[str, str, str]:
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


def site_tech(rnd: random.Random, theme: str) -> tuple[list[str], list[str]]:
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


def site_traffic(rnd: random.Random, rd: int, country: str) -> tuple[int, int, list[int], dict]:
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


def topic_of(r: Callable[[], float], spammy: bool, theme: str, lang_key: str, tld: str) -> str:
    """A checked site's topic: a spam topic for a spammy one, else mostly its theme's."""
    x = r()
    if spammy:
        return _pick(r, _SPAM_TOPICS)
    if x < 0.68:
        return _pick(r, THEME_TOPICS[theme])
    if x < 0.84 and lang_key != "en":
        return LANGS[lang_key].world
    if x < 0.92 and (regional := regional_topic(tld)):
        return regional
    return _pick(r, _OTHER_TOPICS)


_STATUSES_SEEN = (
    ["autoRenewPeriod", "clientHold"],
    ["clientHold", "clientTransferProhibited"],
    ["autoRenewPeriod"],
    ["redemptionPeriod"],
)


def whois_of(
    r: Callable[[], float], slug: str, tld: str, listing_type: str, auction_type: str | None
) -> tuple[str, list[str], str, list[str]]:
    """(registrar, statuses, nameserver category, nameservers) of a platform listing's WHOIS
    snapshot: the platform's own registrar where it is one, statuses as its kind implies."""
    registrar = _pick(r, _REGISTRARS.get(slug) or _CC_REGISTRARS.get(tld) or _GENERIC_REGISTRARS)
    if auction_type == "Dropped":
        status = ["clientTransferProhibited"]
    elif listing_type == "backorder" or auction_type == "PreRelease":
        status = ["redemptionPeriod" if r() < 0.6 else "pendingDelete"]
    elif listing_type == "closeout":
        status = ["clientTransferProhibited"] if r() < 0.7 else ["ok"]
    else:
        status = list(_pick(r, _STATUSES_SEEN))
    x = r()
    category = next((c for c, edge in _NS_CUMULATIVE if x < edge), "none")
    return registrar, status, category, list(_pick(r, _NAMESERVERS[category]))

"""The words people read for the mirror's fields and codes, in one table.

Every field of a listing and of a pending-delete row has a label ("Trust Flow"), the group it
is shown in (a domain page's "Every field" groups them by kind) and a meaning, which the field
reference (docs/reference/fields.md) prints and the OpenAPI document gives the toolkit's own
fields. Beside them: the registry statuses in words (the EPP code stays on hover), the
pending-delete pipelines and the listing types by name. The app, the command line and the
docs read them here, so a field is called the same everywhere.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date

from .fields import LISTING_DERIVED_FIELDS, LISTING_EXTRA_FIELDS, LISTING_FIELDS, PENDING_EXTRA_FIELDS, PENDING_FIELDS

__all__ = [
    "platform_name",
    "Label",
    "GROUPS",
    "LISTING_LABELS",
    "PENDING_LABELS",
    "STATUS_WORDS",
    "PIPELINE_NAMES",
    "TYPE_WORDS",
    "INTERNAL_FIELDS",
    "SORT_LABELS",
    "FILTER_HELP",
    "JOB_WORDS",
    "job_name",
    "TLD_WORDS",
    "tld_words",
    "demo_words",
    "field_label",
    "sort_field_label",
    "status_words",
    "status_meaning",
    "LANGUAGE_NAMES",
    "language_name",
    "pipeline_name",
]


@dataclass(frozen=True)
class Label:
    label: str  # what a person reads: "Trust Flow"
    group: str  # a key of GROUPS
    meaning: str = ""  # one sentence: the field reference's meaning


# The groups a record's fields are shown in, in the order an investor reads them.
GROUPS: dict[str, str] = {
    "listing": "The listing",
    "price": "Price and auction",
    "value": "Price range",
    "drop": "The drop",
    "links": "Links and SEO metrics",
    "archive": "Web archive and content",
    "traffic": "Traffic and business",
    "registration": "Registration (WHOIS)",
    "signals": "Signals",
    "seen": "Seen by this mirror",
}

# Columns the mirror keeps for itself: never shown as a field.
INTERNAL_FIELDS = frozenset({"live_until"})

_SHARED: dict[str, Label] = {
    "id": Label("Listing id", "listing", "the record's id at the service"),
    "tld": Label("TLD", "listing", "the public suffix (com, co.uk)"),
    "sld": Label("Label", "listing", "the label left of the public suffix (example for example.co.uk)."),
    "hyphens": Label("Hyphens", "listing", "hyphens in the label."),
    "digits": Label("Digits", "listing", "digits in the label."),
    "origin": Label("Came from", "listing", "where the row came from (sync, demo, ...)."),
    "score": Label("Score", "links", "the service's quality score, 0-100"),
    "domain_authority": Label("Domain Authority", "links", "Moz Domain Authority, 0-100"),
    "trust_flow": Label("Trust Flow", "links", "Majestic Trust Flow, 0-100: links from trusted sites"),
    "citation_flow": Label("Citation Flow", "links", "Majestic Citation Flow, 0-100: how many links"),
    "backlinks_count": Label("Backlinks", "links", "links pointing to the domain"),
    "referring_domains": Label("Referring domains", "links", "distinct domains linking to it"),
    "wayback_snapshots": Label("Snapshots", "archive", "captures in the Internet Archive's Wayback Machine"),
    "pagerank": Label("PageRank", "links", "the former Google PageRank, 0-10"),
    "language": Label("Language", "archive", "the language of its archived content"),
    "created_at": Label("Added", "seen", "when the service first listed it (UTC)"),
    "updated_at": Label("Updated by the service", "seen", "when the service last changed it (UTC)"),
    "first_seen_at": Label("First seen", "seen", "when this mirror first saw the record (UTC)."),
    "last_seen_at": Label("Last seen", "seen", "when this mirror last saw the record (UTC)."),
}

LISTING_LABELS: dict[str, Label] = {
    **_SHARED,
    "name": Label("Domain", "listing", "the domain name"),
    "source": Label("Platform", "listing", "where it is listed (a platform, or regfree: the deleted-ccTLD database)"),
    "type": Label("Type", "listing", "auction, closeout (a fixed price) or backorder"),
    "auction_type": Label("Auction kind", "listing", "the platform's own kind of auction"),
    "price": Label("Start or asking price", "price", "the start price of an auction, the asking price of a closeout"),
    "max_bid": Label("Highest bid", "price", "the highest bid so far"),
    "effective_price": Label("Price", "price", "what it costs now: the highest bid, else the price"),
    "currency": Label("Currency", "price", "the currency of its prices"),
    "bids_count": Label("Bids", "price", "bids so far"),
    "auction_end_date": Label("Ends", "price", "when the auction ends (UTC)"),
    "estibot_appraisal": Label("Estibot appraisal", "value", "Estibot's appraisal, in USD"),
    "is_spammy": Label("Spam (service)", "signals", "the service flags the name as spam"),
    "age": Label("Age (years)", "archive", "whole years since the first web-archive snapshot"),
    "wayback_first_date": Label("First snapshot", "archive", "the day of the first web-archive capture"),
    "wayback_last_date": Label("Last snapshot", "archive", "the day of the last web-archive capture"),
    "ttf_topic": Label("Topic", "links", "the topic of its Trust Flow (Majestic)"),
    "ref_domains_edu": Label("EDU referring domains", "links", "referring domains under .edu"),
    "ref_domains_gov": Label("GOV referring domains", "links", "referring domains under .gov"),
    "ref_domains_dofollow": Label("Dofollow referring domains", "links", "referring domains whose links pass rank"),
    "seo_domains_category": Label("Category", "links", "the service's category"),
    "seo_domains_subcategory": Label("Subcategory", "links", "the service's subcategory"),
    "indexed_pages": Label("Indexed pages", "links", "pages a search engine indexes"),
    "historical_tech": Label("Past technologies", "archive", "technologies seen on its past site"),
    "use_cases": Label("Use cases", "archive", "what a buyer may use it for (ecommerce, news, ...)"),
    "historical_traffic_etv": Label("Traffic", "traffic", "estimated monthly organic traffic, the latest"),
    "historical_traffic_peak": Label("Traffic peak", "traffic", "the highest monthly traffic estimate"),
    "historical_traffic_spark": Label("Traffic by month", "traffic", "monthly traffic estimates, oldest first"),
    "historical_traffic_fetched_at": Label("Traffic measured", "traffic", "when the traffic was measured"),
    "historical_traffic": Label("Traffic history", "traffic", "the whole traffic history"),
    "monthly_visitors": Label("Monthly visitors", "traffic", "estimated visitors a month"),
    "has_gmb": Label("Google Business Profile", "traffic", "a Google Business Profile names the domain"),
    "gmb_name": Label("Business name", "traffic", "the Google Business Profile's name"),
    "gmb_category": Label("Business category", "traffic", "the Google Business Profile's category"),
    "gmb_address": Label("Business address", "traffic", "the Google Business Profile's address"),
    "whois_registered_at": Label("Registered", "registration", "when the name was first registered"),
    "whois_expires_at": Label("Expires", "registration", "when its registration expires"),
    "whois_last_changed_at": Label("Registration changed", "registration", "when its registration last changed"),
    "whois_registrar": Label("Registrar", "registration", "its registrar"),
    "whois_status": Label("Registry statuses", "registration", "its statuses at the registry (EPP codes)"),
    "whois_nameservers": Label("Nameservers", "registration", "its nameservers"),
    "whois_ns_category": Label("Nameserver kind", "registration", "what its nameservers say (parking, hosting, ...)"),
    "whois_checked_at": Label("Registration checked", "registration", "when its registration was read"),
    "purchase_url": Label("Where to buy", "listing", "the page where it is bought"),
    "purchase_platform": Label("Sold through", "listing", "the platform the purchase page belongs to"),
    "length": Label("Length", "listing", "length of the label."),
    "closed_at": Label("Left its source", "seen", "when the listing left its source; null while live."),
    "price_eur": Label(
        "Start or asking price (EUR)",
        "price",
        "price in EUR at the ECB reference rate of the day it was seen; null without a currency or an ECB rate for it.",
    ),
    "effective_price_eur": Label(
        "Price (EUR)",
        "price",
        "effective_price in EUR at the ECB reference rate of the day it was seen; "
        "price_eur_min/price_eur_max filter on it.",
    ),
    "spam_terms": Label(
        "Spam words", "signals", "the spam dictionary's terms among the name's words (exclude_spam=1 leaves these out)."
    ),
    "spam_count": Label("Spam words found", "signals", "how many spam terms the name holds."),
    "metrics_jumped": Label(
        "Metrics inflated",
        "signals",
        "TF, CF, DA, referring domains or backlinks rose sharply within 30 days before the auction "
        "end (exclude_inflated=1 leaves these out).",
    ),
    "metrics_jump": Label(
        "Sharpest rise", "signals", "the sharpest rise: metric, before, after, rise, before_at, after_at, reason."
    ),
    "archive_years": Label("Years archived", "archive", "calendar years with a web-archive capture."),
    "archive_longest_gap": Label(
        "Longest archive gap (years)",
        "archive",
        "the longest run of years without a capture (archive_gap_max filters on it).",
    ),
    "archive_redirect_share": Label(
        "Redirected captures", "archive", "share of captures answered with a redirect (3xx)."
    ),
    "archive_parked": Label(
        "Parked", "archive", "a parked-page signal (one page across many captures, or parking nameservers)."
    ),
    "archive_parked_reason": Label("Why parked", "archive", "why archive_parked is set."),
    "archive_continuity": Label(
        "Archive continuity",
        "archive",
        "0-100, years with archived content over the archived span, less parked pages (continuity_min filters on it).",
    ),
    "value_low": Label(
        "Range, low (EUR)",
        "value",
        "the low end of the 80% price range in EUR, learnt from the sales this mirror knows (the "
        "auctions it saw end, the reported sales: edt appraise); null before an appraisal or with "
        "value_reason.",
    ),
    "value_mid": Label(
        "Range, middle (EUR)",
        "value",
        "the range's middle in EUR, the value that errs least in percent of the price "
        "(value_min/value_max filter on it; sort=value_mid; deal_min and sort=deal read it over "
        "effective_price_eur, unless the listing has a live estimate).",
    ),
    "value_high": Label("Range, high (EUR)", "value", "the high end of the 80% price range in EUR."),
    "value_reason": Label(
        "Why no range",
        "value",
        "why the listing has no range (too few sales, no result of its TLD family, a deleted ccTLD name).",
    ),
    "valued_at": Label("Range computed", "value", "when the range was computed (null: not appraised yet)."),
    "live_low": Label(
        "Live estimate, low (EUR)",
        "value",
        "the live estimate of an auction with bids: the low end of the 80% range of its final price in "
        "EUR given what the bidding shows (current bid, bids, bids per hour, time left); never below "
        "the current bid; null for a closeout, an auction without bids, or until the next estimate "
        "after a new bid.",
    ),
    "live_mid": Label(
        "Live estimate, middle (EUR)",
        "value",
        "the live estimate's middle in EUR (the median final price); deal_min and sort=deal read it "
        "over effective_price_eur for auctions with bids.",
    ),
    "live_high": Label("Live estimate, high (EUR)", "value", "the high end of the live estimate's 80% range in EUR."),
    "live_until": Label("Live until", "seen", "internal: when the listing stops being live"),
    "deal": Label(
        "Value over price",
        "value",
        "how far under its value the listing is priced: live_mid (an auction with bids) or value_mid, over "
        "effective_price_eur (2: priced at half its value); what deal_min and sort=deal read. Null without "
        "a value or a EUR price.",
    ),
}

PENDING_LABELS: dict[str, Label] = {
    **_SHARED,
    "domain": Label("Domain", "listing", "the domain name"),
    "source": Label("Pipeline", "listing", "where the row comes from: the service's pipelines, or a public feed"),
    "week_end": Label("Snapshot week", "drop", "the weekly snapshot the row belongs to"),
    "first_disappeared_at": Label("Left the zone", "drop", "when it left its zone"),
    "whois_status": Label("Status", "drop", "its status at the registry (an EPP code)"),
    "dns_status": Label("DNS", "drop", "what the DNS answers for it"),
    "estimated_drop_date": Label("Drops", "drop", "the most likely day it is released"),
    "whois_checked_at": Label("Status checked", "drop", "when its status was read"),
    "is_idn": Label("International name", "listing", "an internationalised (non-ASCII) name"),
    "sld_length": Label("Length", "listing", "length of the label"),
    "drop_window_start": Label(
        "Window from",
        "drop",
        "the first day the release can fall on (inclusive). A daily zone snapshot only says a "
        "name left the zone between two snapshots, so a predicted drop is a window; "
        "estimated_drop_date is its most likely day. Equal to drop_window_end when the registry "
        "published the day (a release list). Null when the row's source gives no window.",
    ),
    "drop_window_end": Label(
        "Window to",
        "drop",
        "the last day the release can fall on (inclusive); see drop_window_start. "
        "drop_date_from/drop_date_to filter on estimated_drop_date, not on the window.",
    ),
}
assert set(LISTING_LABELS) == {*LISTING_FIELDS, *LISTING_EXTRA_FIELDS, *LISTING_DERIVED_FIELDS}, (
    "every listing field has its words"
)
assert set(PENDING_LABELS) == {*PENDING_FIELDS, *PENDING_EXTRA_FIELDS}, "every pending-delete field has its words"

# Registry statuses (EPP codes, as the pending-delete rows and the registries give them) in
# words, and what each means; the code itself is shown on hover.
STATUS_WORDS: dict[str, tuple[str, str]] = {
    "pendingDelete": ("pending delete", "deleted: the registry releases it within days"),
    "redemptionPeriod": ("in redemption", "deleted, but its owner may still restore it (about 30 days)"),
    "serverHold": ("on hold at the registry", "out of the DNS by the registry's hand (.se, .nu: deactivated)"),
    "clientHold": ("on hold at the registrar", "out of the DNS by its registrar's hand, often unpaid"),
    "transition": ("in transition", "given up by its registrar, held by the registry before release (.de)"),
    "quarantine": ("in quarantine", "deleted and held by the registry before release (.eu, .be, .nl, .ch)"),
    # The other EPP statuses a registration shows (RFC 5731), as a listing's registry statuses.
    "ok": ("registered", "registered, nothing pending"),
    "inactive": ("not in the DNS", "registered without nameservers"),
    "addPeriod": ("just registered", "in the days after registration, when it may be cancelled"),
    "autoRenewPeriod": ("expired, in grace", "renewed by the registry at expiry; its registrar may still delete it"),
    "renewPeriod": ("just renewed", "in the days after a renewal"),
    "transferPeriod": ("just transferred", "in the days after a transfer"),
    "pendingCreate": ("being registered", "its registration is not complete"),
    "pendingRenew": ("renewal pending", "a renewal is under way"),
    "pendingRestore": ("being restored", "its owner asked to restore it from redemption"),
    "pendingTransfer": ("transfer pending", "a transfer to another registrar is under way"),
    "pendingUpdate": ("update pending", "a change is under way"),
    "clientTransferProhibited": ("transfer locked", "its registrar refuses transfers"),
    "clientDeleteProhibited": ("delete locked", "its registrar refuses deletion"),
    "clientUpdateProhibited": ("update locked", "its registrar refuses changes"),
    "clientRenewProhibited": ("renewal locked", "its registrar refuses renewal"),
    "serverTransferProhibited": ("transfer locked by the registry", "the registry refuses transfers"),
    "serverDeleteProhibited": ("delete locked by the registry", "the registry refuses deletion"),
    "serverUpdateProhibited": ("update locked by the registry", "the registry refuses changes"),
    "serverRenewProhibited": ("renewal locked by the registry", "the registry refuses renewal"),
}

# The pending-delete pipelines (the `source` of a pending-delete row) by name.
PIPELINE_NAMES: dict[str, str] = {
    "oi-diff": "ccTLD weekly list",
    "czds-daily": "gTLD daily zones",
    "bardate": "release list (.se, .nu)",
    "droplist": "registry deletion list",
    "zonediff": "zone file comparison",
}

# Languages (the `language` field: ISO 639-1 codes, as the service and py3langid give them, in
# either case) by their English names.
LANGUAGE_NAMES: dict[str, str] = {
    "af": "Afrikaans", "ar": "Arabic", "bg": "Bulgarian", "bn": "Bengali", "ca": "Catalan",
    "cs": "Czech", "cy": "Welsh", "da": "Danish", "de": "German", "el": "Greek", "en": "English",
    "es": "Spanish", "et": "Estonian", "eu": "Basque", "fa": "Persian", "fi": "Finnish",
    "fr": "French", "ga": "Irish", "gl": "Galician", "he": "Hebrew", "hi": "Hindi",
    "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "is": "Icelandic", "it": "Italian",
    "ja": "Japanese", "ko": "Korean", "lt": "Lithuanian", "lv": "Latvian", "ms": "Malay",
    "nb": "Norwegian", "nl": "Dutch", "nn": "Norwegian", "no": "Norwegian", "pl": "Polish",
    "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak", "sl": "Slovenian",
    "sq": "Albanian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili", "th": "Thai",
    "tl": "Tagalog", "tr": "Turkish", "uk": "Ukrainian", "ur": "Urdu", "vi": "Vietnamese",
    "zh": "Chinese",
}  # fmt: skip

# Listing types as a person says them (one, many).
TYPE_WORDS: dict[str, tuple[str, str]] = {
    "auction": ("auction", "auctions"),
    "closeout": ("closeout", "closeouts"),
    "backorder": ("backorder", "backorders"),
}


# Sorts whose name is not one field's label (`deal` is a ratio), or reads better otherwise.
# A sort on a price in each listing's own currency ranks 100 USD beside 100 JPY: said so.
SORT_LABELS: dict[str, str] = {
    "deal": "Value over price",
    "value_mid": "Value",
    "age": "Age",
    "price": "Start or asking price in its own currency",
    "effective_price": "Price in its own currency",
}


def sort_field_label(field: str) -> str:
    """What a sort field is called in a sort box (`-trust_flow`'s field: `Trust Flow`)."""
    return SORT_LABELS.get(field) or field_label(field)


# Country-code TLDs as a person says names under them ("French names"); others by the TLD itself.
TLD_WORDS: dict[str, str] = {
    "fr": "French",
    "de": "German",
    "uk": "British",
    "co.uk": "British",
    "nl": "Dutch",
    "be": "Belgian",
    "it": "Italian",
    "es": "Spanish",
    "pl": "Polish",
    "se": "Swedish",
    "ch": "Swiss",
    "at": "Austrian",
    "dk": "Danish",
    "fi": "Finnish",
    "no": "Norwegian",
    "cz": "Czech",
    "pt": "Portuguese",
    "ie": "Irish",
    "eu": "EU",
    "us": "US",
    "ca": "Canadian",
    "au": "Australian",
    "com.au": "Australian",
    "jp": "Japanese",
    "br": "Brazilian",
    "com.br": "Brazilian",
    "in": "Indian",
    "mx": "Mexican",
}


def tld_words(tld: str) -> str:
    """`.fr` -> `French`; `.com` -> `.com`."""
    bare = tld.strip().lower().lstrip(".")
    return TLD_WORDS.get(bare, f".{bare}")


def field_label(name: str, *, pending: bool = False) -> str:
    """The label of a field (`trust_flow` -> `Trust Flow`); a field the table does not know
    reads as its name in words."""
    found = (PENDING_LABELS if pending else LISTING_LABELS).get(name)
    return found.label if found else name.replace("_", " ").capitalize()


def language_name(code: str | None) -> str:
    """`EN` or `en` -> `English`; a code the table does not know as it is; blank without one."""
    text = (code or "").strip()
    return LANGUAGE_NAMES.get(text.lower(), text)


def status_words(code: str | None) -> str:
    """`redemptionPeriod` -> `in redemption`; an unknown code as it is; blank without one."""
    return STATUS_WORDS[code][0] if code in STATUS_WORDS else (code or "")


def status_meaning(code: str | None) -> str:
    """What a status means for the drop, with its code: `deleted, ... (redemptionPeriod)`."""
    return f"{STATUS_WORDS[code][1]} ({code})" if code in STATUS_WORDS else (code or "")


def platform_name(slug: str | None) -> str:
    """A listing's source by its name (`godaddy` -> `GoDaddy Auctions`); an unknown one as it is."""
    from ..sources import source_by_slug

    found = source_by_slug(slug or "")
    return found.name if found else (slug or "")


def pipeline_name(slug: str | None) -> str:
    """`czds-daily` -> `gTLD daily zones`; an unknown pipeline as it is."""
    return PIPELINE_NAMES.get(slug or "", slug or "")


# Where a row came from (`origin`), as a person reads it.
ORIGIN_WORDS = {
    "sync": "the API (edt sync)",
    "demo": "the demo data",
    "ingest:godaddy": "GoDaddy's listings file",
    "ingest:namecheap": "Namecheap Market's file",
    "ingest:bardate": "Internetstiftelsen's release list",
    "ingest:droplist": "a registry's deletion list",
    "ingest:zonediff": "a comparison of two zone files",
}


def origin_words(origin: str | None) -> str:
    """`ingest:godaddy` -> `GoDaddy's listings file`; an unknown origin as it is."""
    return ORIGIN_WORDS.get(origin or "", origin or "")


def demo_words(meta: Mapping[str, str]) -> str:
    """The demo a mirror holds, from its notes (`mirror_meta`): `the small demo (seed 7), a
    time-lapse of the 30 days to 26 Nov 2026`; empty when it holds no demo."""
    if "demo_scale" not in meta:
        return ""
    said = f"the {meta['demo_scale']} demo (seed {meta.get('demo_seed', '?')})"
    if meta.get("demo_today"):
        day = date.fromisoformat(meta["demo_today"])
        days = int(meta.get("demo_days") or 0)
        said += (
            f", a time-lapse of the {days} days to {day.day} {day:%b %Y}" if days else f", as of {day.day} {day:%b %Y}"
        )
    return said


# A filter's help in the app where the API's own description names fields or codes
# (`toolkit/query/params.py` keeps those: they are the API's documentation).
FILTER_HELP: dict[tuple[str, str], str] = {
    ("listing", "source"): "One platform, or the deleted-ccTLD database (on the Authority plan and above).",
    ("listing", "value_min"): "The middle of the listing's price range in EUR (from the last appraisal); "
    "listings without a range never match.",
    ("listing", "value_max"): "The middle of the listing's price range in EUR (from the last appraisal); "
    "listings without a range never match.",
    ("pending", "source"): "Where the name was found: the ccTLD zone comparison (weekly) or ICANN's "
    "gTLD zone files (daily).",
    ("pending", "include_past"): "With every week shown, also the names whose drop date has passed.",
}

# The sync's jobs (`toolkit.store.jobs.JOBS`) as a person reads them.
JOB_WORDS: dict[str, str] = {
    "listings": "Platform listings",
    "bids": "Auctions with bids",
    "regfree": "Deleted ccTLD names",
    "pending": "Pending-delete names",
}


def job_name(job: str) -> str:
    """`bids` -> `Auctions with bids`; an unknown job as it is."""
    return JOB_WORDS.get(job, job)

"""Every field of the two record kinds, its type, and how it crosses the SQLite boundary.

The reference `Domain` and `PendingDeleteDomain` schemas are the source of these lists
(a test compares them with `tests/fixtures/reference/catchdoms/json-schema/`). SQLite stores
booleans as 0/1 and arrays/objects as JSON text; `to_db` brings any incoming value (type
drift included: "12" for 12, `+00:00` for `Z`) to the stored form, `from_db` gives the
schema type back.
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime, timezone
from typing import Any, overload

__all__ = [
    "age_in_years",
    "LISTING_FIELDS",
    "LISTING_EXTRA_FIELDS",
    "LISTING_DERIVED_FIELDS",
    "PENDING_FIELDS",
    "PENDING_EXTRA_FIELDS",
    "SQL_TYPES",
    "to_db",
    "converters",
    "from_db",
    "iso_timestamp",
    "utc_seconds",
    "utc_stamp",
    "utc_now",
    "iso_date",
]

# Reference Domain schema, in its order. Kinds: int num str bool date datetime array object.
LISTING_FIELDS: dict[str, str] = {
    "id": "int",
    "name": "str",
    "tld": "str",
    "source": "str",
    "type": "str",
    "auction_type": "str",
    "price": "num",
    "max_bid": "num",
    "effective_price": "num",
    "currency": "str",
    "bids_count": "int",
    "auction_end_date": "datetime",
    "estibot_appraisal": "num",
    "score": "int",
    "is_spammy": "bool",
    "age": "int",
    "wayback_snapshots": "int",
    "wayback_first_date": "date",
    "wayback_last_date": "date",
    "pagerank": "int",
    "domain_authority": "int",
    "backlinks_count": "int",
    "referring_domains": "int",
    "trust_flow": "int",
    "citation_flow": "int",
    "ttf_topic": "str",
    "ref_domains_edu": "int",
    "ref_domains_gov": "int",
    "ref_domains_dofollow": "int",
    "seo_domains_category": "str",
    "seo_domains_subcategory": "str",
    "indexed_pages": "int",
    "historical_tech": "array",
    "use_cases": "array",
    "historical_traffic_etv": "int",
    "historical_traffic_peak": "int",
    "historical_traffic_spark": "array",
    "historical_traffic_fetched_at": "datetime",
    "historical_traffic": "object",
    "monthly_visitors": "int",
    "language": "str",
    "has_gmb": "bool",
    "gmb_name": "str",
    "gmb_category": "str",
    "gmb_address": "str",
    "whois_registered_at": "datetime",
    "whois_expires_at": "datetime",
    "whois_last_changed_at": "datetime",
    "whois_registrar": "str",
    "whois_status": "array",
    "whois_nameservers": "array",
    "whois_ns_category": "str",
    "whois_checked_at": "datetime",
    "purchase_url": "str",
    "purchase_platform": "str",
    "created_at": "datetime",
    "updated_at": "datetime",
}

# Columns the toolkit adds to `listings` (docs/reference/fields.md). `live_until` is internal:
# closed_at when closed, else auction_end_date, else far future; live <=> live_until > now.
LISTING_EXTRA_FIELDS: dict[str, str] = {
    "sld": "str",
    "length": "int",
    "hyphens": "int",
    "digits": "int",
    "first_seen_at": "datetime",
    "last_seen_at": "datetime",
    "closed_at": "datetime",
    "origin": "str",
    # Signals (toolkit/signals/): prices in EUR at the ECB rate of the day they were seen,
    # spam words of the name, a metric inflated before the auction end, archive content.
    "price_eur": "num",
    "effective_price_eur": "num",
    "spam_terms": "array",
    "spam_count": "int",
    "metrics_jumped": "bool",
    "metrics_jump": "object",
    "archive_years": "int",
    "archive_longest_gap": "int",
    "archive_redirect_share": "num",
    "archive_parked": "bool",
    "archive_parked_reason": "str",
    "archive_continuity": "int",
    # The price range in EUR learnt from the mirror's own auction results (analysis/appraise.py):
    # an 80% range and its middle; null with `value_reason`, or before the first appraisal.
    "value_low": "num",
    "value_mid": "num",
    "value_high": "num",
    "value_reason": "str",
    "valued_at": "datetime",
    # The live estimate of an auction with bids (analysis/appraise.py): an 80% range of its final
    # price in EUR given what the bidding shows, never below the current bid; null otherwise.
    "live_low": "num",
    "live_mid": "num",
    "live_high": "num",
    "live_until": "str",
}
# Fields a listing record carries that no column holds, worked out from the record's own
# (`deal`: store.schema.deal_ratio). A record received with them keeps none: they are derived again.
LISTING_DERIVED_FIELDS: dict[str, str] = {"deal": "num"}

# Reference PendingDeleteDomain schema, in its order.
PENDING_FIELDS: dict[str, str] = {
    "id": "int",
    "domain": "str",
    "tld": "str",
    "source": "str",
    "week_end": "date",
    "first_disappeared_at": "datetime",
    "whois_status": "str",
    "dns_status": "str",
    "estimated_drop_date": "date",
    "whois_checked_at": "datetime",
    "is_idn": "bool",
    "sld_length": "int",
    "score": "int",
    "domain_authority": "int",
    "trust_flow": "int",
    "citation_flow": "int",
    "backlinks_count": "int",
    "referring_domains": "int",
    "wayback_snapshots": "int",
    "pagerank": "int",
    "language": "str",
    "created_at": "datetime",
    "updated_at": "datetime",
}

PENDING_EXTRA_FIELDS: dict[str, str] = {
    "sld": "str",
    "hyphens": "int",
    "digits": "int",
    "first_seen_at": "datetime",
    "last_seen_at": "datetime",
    "origin": "str",
    # The window the release day lies in (both ends included); estimated_drop_date is the
    # most likely day inside it. Null when the row's source gives no window (the remote API).
    "drop_window_start": "date",
    "drop_window_end": "date",
}

SQL_TYPES = {
    "int": "INTEGER",
    "num": "REAL",
    "str": "TEXT",
    "bool": "INTEGER",
    "date": "TEXT",
    "datetime": "TEXT",
    "array": "TEXT",
    "object": "TEXT",
}


@overload
def iso_timestamp(value: datetime | date) -> str: ...
@overload
def iso_timestamp(value: Any) -> str | None: ...


def iso_timestamp(value: Any) -> str | None:
    """Any ISO 8601 timestamp (or datetime) -> UTC `YYYY-MM-DDTHH:MM:SSZ`; naive means UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime(value.year, value.month, value.day)
    else:
        text = str(value).strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text.replace(" ", "T", 1) if "T" not in text else text)
        except ValueError:
            return None
    if dt.tzinfo is not None:
        dt = dt.astimezone(timezone.utc).replace(tzinfo=None)
    fmt = "%m-%dT%H:%M:%S.%fZ" if dt.microsecond else "%m-%dT%H:%M:%SZ"
    return f"{dt.year:04d}-{dt.strftime(fmt)}"  # strftime writes year 1 as "1"


def utc_seconds(dt: datetime) -> str:
    """A datetime as the mirror's UTC timestamp, to the second (naive: local time, as
    `datetime.astimezone` reads it)."""
    return iso_timestamp(dt.astimezone(timezone.utc).replace(microsecond=0))


def utc_stamp(dt: datetime) -> str:
    """A moment as the mirror stores it, to the second: UTC (naive means UTC, as `iso_timestamp` reads it)."""
    return iso_timestamp(dt.replace(microsecond=0))


def utc_now() -> str:
    """Now, as the mirror stores moments (UTC, whole seconds)."""
    return utc_stamp(datetime.now(timezone.utc))


def iso_date(value: Any) -> str | None:
    """`YYYY-MM-DD`, from a date, a datetime or their ISO text."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip()
    try:
        return date.fromisoformat(text[:10]).isoformat()
    except ValueError:
        return None


def _to_int(value: Any) -> int | None:
    if type(value) is int or value is None:
        return value
    if value == "" or isinstance(value, (list, dict)):
        return None
    if isinstance(value, bool):
        return int(value)
    try:
        number = float(str(value).replace(",", "").strip()) if not isinstance(value, (int, float)) else value
    except ValueError:
        return None
    if isinstance(number, float) and not math.isfinite(number):
        return None
    return int(round(number))


def _to_num(value: Any) -> float | None:
    if type(value) is float and math.isfinite(value):
        return value
    if value is None or value == "" or isinstance(value, (bool, list, dict)):
        return None
    try:
        number = float(str(value).replace(",", "").strip()) if not isinstance(value, (int, float)) else float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _to_bool(value: Any) -> int | None:
    if type(value) is bool:
        return int(value)
    if value is None or value == "":
        return None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in ("1", "true", "yes", "on"):
            return 1
        if text in ("0", "false", "no", "off"):
            return 0
        return None
    return 1 if value else 0


def _to_json_text(value: Any, kind: str) -> str | None:
    if value is None:
        return None
    if type(value) is list and kind == "array":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            # A bare string where an array belongs: keep it as a one-element array.
            return json.dumps([value], ensure_ascii=False) if kind == "array" else None
    if kind == "array" and not isinstance(value, list):
        value = [value]
    if kind == "object" and not isinstance(value, dict):
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _to_str(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else str(value)


def _fast_timestamp(value: Any) -> str | None:
    # Already canonical (what the demo and our own replica send): skip the parse.
    if type(value) is str and len(value) == 20 and value[10] == "T" and value[19] == "Z":
        return value
    return iso_timestamp(value)


def _fast_date(value: Any) -> str | None:
    if (
        type(value) is str
        and len(value) == 10
        and value[4] == "-"
        and value[7] == "-"
        and "01" <= value[5:7] <= "12"
        and "01" <= value[8:] <= "28"
        and value[:4].isdigit()
    ):
        return value
    return iso_date(value)


_CONVERTERS: dict[str, Any] = {
    "int": _to_int,
    "num": _to_num,
    "bool": _to_bool,
    "datetime": _fast_timestamp,
    "date": _fast_date,
    "array": lambda v: _to_json_text(v, "array"),
    "object": lambda v: _to_json_text(v, "object"),
    "str": _to_str,
}


def converters(fields: dict[str, str]) -> list[tuple[str, Any]]:
    """(field, converter) pairs for `fields`, to normalise many records fast."""
    return [(name, _CONVERTERS[kind]) for name, kind in fields.items()]


def to_db(kind: str, value: Any) -> Any:
    """The stored form of `value` for a field of `kind`."""
    return _CONVERTERS[kind](value)


def from_db(kind: str, value: Any) -> Any:
    """The schema type of a stored value."""
    if value is None:
        return None
    if kind == "bool":
        return bool(value)
    if kind in ("array", "object"):
        return json.loads(value)
    if kind == "int":
        return int(value)
    if kind == "num":
        return float(value)
    return value


def age_in_years(first_date: str | None, today: date | None = None) -> int | None:
    """Whole years from `first_date` (YYYY-MM-DD) to today (`age`, docs/reference/fields.md)."""
    if not first_date:
        return None
    today = today or datetime.now(timezone.utc).date()
    year, month, day = int(first_date[:4]), int(first_date[5:7]), int(first_date[8:10])
    return today.year - year - ((today.month, today.day) < (month, day))

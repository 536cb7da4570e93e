"""A search said as a sentence, as the app and `edt watch list` name a saved search:
`French names, Trust Flow 15+`, `Auctions with bids, score 40+`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .param_type import Param

__all__ = ["caption"]


# Words a filter reads as in a sentence, where its caption does not (captions are widget labels).
_FLAG_WORDS = {
    "has_bids": "with bids",
    "has_backlinks": "with backlinks",
    "has_gmb": "with a Google Business Profile",
    "has_edu_gov": "with EDU or GOV links",
    "include_closed": "closed ones too",
}
_LIST_WORDS = {
    "contains": "containing",
    "not_contains": "without",
    "categories": "in",
    "techs": "built with",
    "use_cases": "for",
    "status": "status",
}
_PROPER = ("Trust", "Citation", "Domain", "TF/CF", "EUR", "EDU", "GOV")
_ATTACHED = ("with ", "containing ", "in ", "for ", "built with ")


def _lower(text: str) -> str:
    return text if text.startswith(_PROPER) else text[:1].lower() + text[1:]


def _number(value: Any) -> str:
    return f"{value:,g}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else str(value)


def caption(table: Mapping[str, Param], values: Mapping[str, Any]) -> str:
    """A search as a sentence (parsed `values`): `French names, Trust Flow 15+`, `Auctions with
    bids, score 40+`, `.com names, max length 8 ...`: what the app and `edt watch list` say
    a saved search is."""
    from ..sources import source_by_slug
    from ..store.labels import TYPE_WORDS, status_words, tld_words

    noun = TYPE_WORDS[values["type"]][1] if values.get("type") in TYPE_WORDS else "names"
    tlds = values.get("tld") if table is not None and "tld" in values else ()
    head = f"{' or '.join(dict.fromkeys(tld_words(t) for t in tlds))} {noun}" if tlds else noun
    if "source" in values and table.get("source") is not None and table["source"].clause is not None:
        found = source_by_slug(values["source"])
        head += f" on {found.name if found else values['source']}"
    parts = []
    for name, value in values.items():
        param = table[name]
        if param.clause is None or name in ("tld", "type", "source"):
            continue
        words = param.caption.split(" (")[0]
        if param.kind == "flag":
            if value:
                parts.append(_FLAG_WORDS.get(name) or _lower(words.replace("Exclude ", "without ")))
        elif name in ("ends_within", "drops_within"):
            verb, unit = ("ending", "hour") if name == "ends_within" else ("dropping", "day")
            parts.append(f"{verb} within {value} {unit}{'s' if value != 1 else ''}")
        elif name == "seen_after":
            parts.append(f"first seen after {value[:10]} {value[11:16]} UTC")
        elif name == "status":
            parts.append(" or ".join(status_words(v) for v in value))
        elif param.kind == "list":
            parts.append(f"{_LIST_WORDS.get(name) or _lower(words)} {' or '.join(value)}")
        elif name.endswith("_min"):
            parts.append(f"{_lower(words.removeprefix('Min '))} {_number(value)}+")
        elif name.endswith("_max"):
            parts.append(f"{_lower(words.removeprefix('Max '))} up to {_number(value)}")
        else:
            parts.append(f"{_lower(words)} {_number(value)}")
    if not parts and head == "names":
        return "All live listings"
    attached = [p for p in parts if p.startswith(_ATTACHED)]  # "auctions with bids", not "auctions, with bids"
    rest = [p for p in parts if not p.startswith(_ATTACHED)]
    sentence = ", ".join([" ".join([head, *attached]), *rest])
    return sentence[:1].upper() + sentence[1:]

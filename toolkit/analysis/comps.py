"""Comparable results: the sales most like a name, among the auctions the mirror saw end and
the sales reported elsewhere (`edt ingest sales`).

    from toolkit import Mirror
    from toolkit.analysis.comps import comparables
    comparables(Mirror("data/mirror.db"), "kettleharbor.com")   # a DataFrame, best first, with `why`

A closed auction with a final price (it sold), or a reported sale, is scored against the name
on five points, each said in `why` when it counts (a reported sale has no listing, so no topic
or metrics); `origin` says where each came from (`auction`, or the file of reported sales):

| point | counts | weight |
|---|---|---:|
| TLD | the same TLD; else the same family (legacy gTLDs, new gTLDs, one country's ccTLDs) | 3; 1 |
| length | the label's length within 4 letters, closer scores more | up to 1.5 |
| words | words shared, read as the spam words read them (`name_words`) | up to 3 |
| topic | the same Trust Flow topic | 1.5 |
| metrics | Trust Flow and Citation Flow within 20 points each, closer scores more | up to 1.5 |

The name's own topic and metrics are those of its listing when the mirror has one; a sale's
are its listing's, plain, packed or archived. Ties go to
the most recent end. The name's own past auctions are left out (they are its history, not
comparables).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..names import ascii_name, split_domain
from ..signals.spam import name_words

__all__ = ["comparables", "tld_family"]

LEGACY_GTLDS = frozenset({"com", "net", "org", "info", "biz"})
WEIGHTS = {"tld": 3.0, "family": 1.0, "length": 1.5, "words": 3.0, "topic": 1.5, "metrics": 1.5}


def tld_family(tld: str | None) -> str:
    """`legacy` (com, net, org, info, biz), `cc:<country>` (fr, co.uk -> cc:uk), else `new`."""
    last = (tld or "").lstrip(".").rsplit(".", 1)[-1].lower()
    if last in LEGACY_GTLDS:
        return "legacy"
    return f"cc:{last}" if len(last) == 2 else "new"


_METRICS = ["ttf_topic", "trust_flow", "citation_flow"]
_UNKNOWN = (None,) * len(_METRICS)  # a listing whose metrics no one kept


def _put_away(mirror: Any, column: str, values: list[Any], columns: list[str]) -> list[tuple]:
    """Listings packed or archived since they closed (`edt archive`), as tuples of `columns`:
    a comparable reads the same metrics before and after its listing was put away."""
    from ..store.parquet_archive import archived_rows

    if not values or not mirror.path or mirror.path == ":memory:":
        return []
    return archived_rows(mirror.path, "listings", column, values, columns, conn=mirror.connection())


def _metrics_put_away(mirror: Any, frame: Any) -> Any:
    """`frame` with the topic and metrics of sold auctions whose listing left the plain table."""
    away = frame["_away"].astype(bool) & frame["listing_id"].notna()
    frame = frame.drop(columns="_away")
    if not away.any():
        return frame
    found = _put_away(mirror, "id", [int(i) for i in frame.loc[away, "listing_id"]], ["id", *_METRICS])
    by_id = {row[0]: row[1:] for row in found}
    ids = frame.loc[away, "listing_id"].astype(int)
    for at, column in enumerate(_METRICS):
        values = [by_id.get(i, _UNKNOWN)[at] for i in ids]
        frame[column] = frame[column].astype(object)
        frame.loc[away, column] = values
        if column != "ttf_topic":
            frame[column] = frame[column].astype(float)
    return frame


def _subject(mirror: Any, name: str) -> dict[str, Any]:
    sld, tld = split_domain(name)
    row = (
        mirror.connection()
        .execute(
            "SELECT ttf_topic, trust_flow, citation_flow FROM listings WHERE name = ? ORDER BY last_seen_at DESC LIMIT 1",
            [name],
        )
        .fetchone()
    )
    if row is None:  # its listing packed or archived: the newest of them
        found = sorted(_put_away(mirror, "name", [name], ["last_seen_at", *_METRICS]), key=lambda r: r[0] or "")
        row = found[-1][1:] if found else None
    topic, tf, cf = row if row else _UNKNOWN
    return {"name": name, "sld": sld, "tld": tld, "words": set(name_words(sld)), "topic": topic, "tf": tf, "cf": cf}


_SOLD: dict[tuple[str, int], Any] = {}  # (mirror path, generation) -> the sold results, read and split once


def _sold(mirror: Any) -> Any:
    """Every sold result and reported sale with its name split (label, TLD, TLD family, the label in lower case),
    read once per mirror generation: a page asking for comparables again (another name, the
    same mirror) only scores them."""
    import pandas as pd

    key = (str(mirror.path), mirror.generation())
    if key not in _SOLD:
        frame = pd.read_sql_query(
            "SELECT r.listing_id, r.name, r.tld, r.source, r.ended_at, r.final_price, r.currency, r.final_price_eur, "
            "r.bids, l.ttf_topic, l.trust_flow, l.citation_flow, 'auction' AS origin, l.id IS NULL AS _away "
            "FROM auction_results r LEFT JOIN listings l ON l.id = r.listing_id WHERE r.sold = 1 "
            "UNION ALL SELECT NULL, name, tld, venue, sold_on, price, currency, price_eur, NULL, NULL, NULL, NULL, "
            "origin, 0 FROM reported_sales",
            mirror.connection(),
        )
        frame = _metrics_put_away(mirror, frame)
        frame["_sld"] = frame["name"].map(lambda n: split_domain(n)[0])
        frame["_tld"] = frame["tld"].fillna(frame["name"].map(lambda n: split_domain(n)[1]))
        frame["_family"] = frame["_tld"].map(tld_family)
        frame["_lower"] = frame["_sld"].str.lower()
        _SOLD.clear()  # one mirror's results at a time
        _SOLD[key] = frame
    return _SOLD[key]


def comparables(mirror: Any, name: str, *, limit: int = 10) -> Any:
    """The `limit` sales most like `name`, best first: name, source (the platform or venue),
    ended_at, final_price, currency, final_price_eur, bids, origin, score, why."""
    import pandas as pd

    name = str(name).strip().lower().rstrip(".")
    if "." not in name:
        raise ValueError(f"name: {name!r} is not a domain name (e.g. kettleharbor.com)")
    try:
        name = ascii_name(name)  # the mirror holds IDNs as xn--
    except ValueError as exc:
        raise ValueError(f"name: {exc}") from None
    subject = _subject(mirror, name)
    frame = _sold(mirror)
    frame = frame[frame["name"] != name]
    columns = [
        "name",
        "source",
        "ended_at",
        "final_price",
        "currency",
        "final_price_eur",
        "bids",
        "origin",
        "score",
        "why",
    ]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    slds, tlds = frame["_sld"], frame["_tld"]
    same_tld = (tlds == subject["tld"]).to_numpy()
    same_family = (frame["_family"] == tld_family(subject["tld"])).to_numpy() & ~same_tld
    gap = np.abs(slds.str.len().to_numpy() - len(subject["sld"]))
    length = np.clip(1 - gap / 5, 0, None)
    shared = None
    if subject["words"]:
        # A name sharing a word holds it as letters: read as words only those (exactly the same
        # answer as reading every name, at a fraction of the cost on many results).
        lowered = frame["_lower"]
        holds = np.zeros(len(frame), dtype=bool)
        for word in subject["words"]:
            holds |= lowered.str.contains(word, regex=False).to_numpy(dtype=bool, na_value=False)
        shared = pd.Series(
            [sorted(subject["words"] & set(name_words(sld))) if hit else [] for sld, hit in zip(slds, holds)],
            index=frame.index,
        )
    words = (shared.map(len).to_numpy() / max(len(subject["words"]), 1)) if shared is not None else np.zeros(len(frame))
    topic = (frame["ttf_topic"].str.lower() == (subject["topic"] or "").lower()).fillna(False).to_numpy() & bool(
        subject["topic"]
    )
    metrics = np.zeros(len(frame))
    for column, value in (("trust_flow", subject["tf"]), ("citation_flow", subject["cf"])):
        if value is not None:
            near = np.clip(1 - np.abs(frame[column].to_numpy(dtype=float) - value) / 20, 0, None)
            metrics += np.nan_to_num(near) / 2
    score = (
        WEIGHTS["tld"] * same_tld
        + WEIGHTS["family"] * same_family
        + WEIGHTS["length"] * length
        + WEIGHTS["words"] * words
        + WEIGHTS["topic"] * topic
        + WEIGHTS["metrics"] * metrics
    )
    frame = frame.assign(score=np.round(score, 2))
    best = frame.assign(_order=-score).sort_values(["_order", "ended_at"], ascending=[True, False]).head(limit)

    def why(index: int) -> str:
        said = []
        if same_tld[index]:
            said.append(f"same TLD .{subject['tld'].lstrip('.')}")
        elif same_family[index]:
            said.append(f"same TLD family ({tld_family(subject['tld'])})")
        if length[index] > 0:
            said.append(f"{len(slds.iloc[index])} letters (vs {len(subject['sld'])})")
        if shared is not None and shared.iloc[index]:
            said.append("shares " + ", ".join(f"'{w}'" for w in shared.iloc[index]))
        if topic[index]:
            said.append(f"topic {subject['topic']}")
        if metrics[index] > 0:
            said.append(
                f"TF/CF {_metric(frame['trust_flow'].iloc[index])}/{_metric(frame['citation_flow'].iloc[index])} "
                f"(vs {_metric(subject['tf'])}/{_metric(subject['cf'])})"
            )
        return "; ".join(said) or "nothing in common but a sale"

    positions = {label: i for i, label in enumerate(frame.index)}
    best["why"] = [why(positions[label]) for label in best.index]
    best["bids"] = best["bids"].astype("Int64")
    return best[columns].reset_index(drop=True)


def _metric(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and np.isnan(value)) else str(int(value))

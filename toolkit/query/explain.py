"""Why a request matches nothing, when it can be told: a lower bound above its upper bound,
or a TLD or source no row of the mirror has (open, closed, regfree or platform rows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..sources import REGFREE
from ..store.fields import iso_timestamp
from ..store.schema import OPEN
from .params import DOMAIN_PARAMS, PENDING_PARAMS, Context, contradictions, parse_params

if TYPE_CHECKING:
    from .mirror import Mirror

__all__ = ["explain_empty"]

_NOTHING_YET = {  # a mirror without a row of the table: where rows come from
    "listings": "the mirror holds no listing yet: `edt sync --feeds` fetches the free public feeds, `edt sync` "
    "the API's listings with a key, `edt demo` loads demo data",
    "pending": "the mirror holds no pending-delete domain yet: `edt sync --feeds` fetches the registries' "
    "release and deletion lists, `edt sync` the API's with a key, `edt demo` loads demo data",
}


def explain_empty(mirror: Mirror, params: Mapping[str, Any] | None = None, *, pending: bool = False) -> list[str]:
    """Why a request (`/api/domains` parameters, or `/api/pending-delete` ones with
    `pending`) matches nothing, when it can be told: a lower bound above its upper bound
    (tf_min=30 tf_max=10, dates from/to), or a TLD or source no row of the mirror has.
    One sentence per reason; an empty list when none is found. What the CLI prints under
    an empty page, for the app to show too; the HTTP API answers its empty page as the
    service does."""
    table = PENDING_PARAMS if pending else DOMAIN_PARAMS
    if (
        not mirror.connection()
        .execute(f"SELECT EXISTS (SELECT 1 FROM {'pending_delete' if pending else 'listings'})")
        .fetchone()[0]
    ):
        return [_NOTHING_YET["pending" if pending else "listings"]]
    values = parse_params(table, params, strict=False)
    reasons = contradictions(table, values)
    ctx = Context(today=mirror.now().date(), table="pending_delete" if pending else "listings", now=mirror.now())
    conn = mirror.connection()

    def held(param_name: str, wanted: tuple[Any, ...], extra: str = "") -> bool:
        """Whether a row has one of `wanted` (the parameter's own condition, one value at a time)."""
        for value in wanted:
            clause = table[param_name].clause
            assert clause is not None, param_name  # tld and source are filters
            found = clause(value, ctx)
            if found is None:
                continue
            sql, args = found
            if conn.execute(f"SELECT EXISTS (SELECT 1 FROM {ctx.table} WHERE ({sql}){extra})", args).fetchone()[0]:
                return True
        return False

    # Listings are platform rows unless source=regfree asks for the deleted-ccTLD database.
    regfree = values.get("source") == REGFREE
    scope = f" AND source {'=' if regfree else '!='} '{REGFREE}'"
    for name, label in (("tld", "TLD"), ("source", "source")):
        if name not in values:
            continue
        several = isinstance(values[name], tuple)  # a list filter (tld): its condition takes a tuple
        wanted = tuple((v,) for v in values[name]) if several else (values[name],)
        shown = " or ".join(("." if pending and name == "tld" else "") + str(v[0] if several else v) for v in wanted)
        if pending:
            if not held(name, wanted):
                reasons.append(f"no pending-delete row in the mirror has {label} {shown}")
        elif held(name, wanted, f"{scope} AND {OPEN}"):
            continue
        elif held(name, wanted, scope):
            if not values.get("include_closed"):
                reasons.append(
                    f"only closed listings in the mirror have {label} {shown}: add include_closed=1 to see them"
                )
        elif not held(name, wanted):
            reasons.append(f"no listing in the mirror has {label} {shown}")
        elif regfree:
            reasons.append(
                f"no regfree row in the mirror has {label} {shown} (platform listings do: leave out source=regfree)"
            )
        else:
            reasons.append(
                f"only regfree rows (the deleted-ccTLD database) have {label} {shown}: add source=regfree to see them"
            )
    live = f"SELECT EXISTS (SELECT 1 FROM listings WHERE {OPEN} AND live_until > ?{scope})"
    if (
        not pending
        and not values.get("include_closed")
        and not conn.execute(live, [iso_timestamp(ctx.now)]).fetchone()[0]
    ):
        reasons.append(
            "every listing in the mirror has ended: add include_closed=1 (Include closed) to see them, or run "
            "a sync (or `edt sync --feeds`) for today's"
        )
    return reasons

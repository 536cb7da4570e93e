"""A request's raw parameters read against a parameter table: typed values or the 422 that
names the field (`parse_params`), a misspelt name's "did you mean", bounds that cross, and
repeated parameters gathered (tld=.fr tld=.de is tld=.fr,.de)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import invalid
from .conditions import Compare
from .param_type import CategoriesParam, Param

__all__ = [
    "parse_params",
    "unknown_message",
    "bound_pairs",
    "contradictions",
    "takes_several",
    "gather",
    "merge_repeated",
]


def parse_params(table: Mapping[str, Param], raw: Mapping[str, Any] | None, *, strict: bool) -> dict[str, Any]:
    """Typed values of the parameters present in `raw` (empty values count as absent).

    With `strict`, an unknown name is a 422 (the Python API: a typo is never silently
    ignored), and so is a lower bound above its upper bound (tf_min=30 with tf_max=10: no row
    can match); without, unknown names are dropped and contradictions answer an empty page
    (the HTTP API, as the live service)."""
    values: dict[str, Any] = {}
    for name, value in (raw or {}).items():
        param = table.get(name)
        if param is None:
            if strict:
                raise invalid(name, unknown_message(table, name))
            continue
        if isinstance(value, (list, tuple)):
            value = merge_repeated(param, value)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        values[name] = param.parse(value)
    if strict:
        for low, reason in _contradicted(table, values):
            raise invalid(low.name, f"{reason}, so no row can match; lower {low.name} or raise the other.")
    return values


def unknown_message(
    known: Iterable[str], name: str, *, what: str = "parameter", of: str = "", sort: bool = True
) -> str:
    """The 422's words for an unknown name (a query parameter, a tool's argument): the
    closest known names first (a typo such as tf_mn is "did you mean tf_min, ...?"), then
    every name known. One text for the CLI, the Python API, the HTTP API and the MCP tools."""
    names = sorted(known) if sort else list(known)
    import difflib  # only for a misspelt value: not on every start

    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close[:-1])} or {close[-1]}? " if len(close) > 1 else ""
    hint = hint or (f"did you mean {close[0]}? " if close else "")
    return f"unknown {what} {name!r}{f' for {of}' if of else ''}: {hint}use one of {', '.join(names) or 'none'}."


# Filters that bound one value from both sides: every X_min with its X_max, and the date
# pairs, the upper one exclusive when its clause is `<` (created_before, ends_before).
_DATE_BOUNDS = (("created_after", "created_before"), ("ends_after", "ends_before"), ("drop_date_from", "drop_date_to"))


def bound_pairs(table: Mapping[str, Param]) -> list[tuple[Param, Param, bool]]:
    """(lower, upper, upper is exclusive) of each pair of filters in `table` that bound one value."""
    pairs = [
        (table[name], table[name[:-4] + "_max"], False)
        for name in table
        if name.endswith("_min") and name[:-4] + "_max" in table
    ]
    for low, high in _DATE_BOUNDS:
        if low in table and high in table:
            clause = table[high].clause
            pairs.append((table[low], table[high], isinstance(clause, Compare) and clause.op == "<"))
    return pairs


def contradictions(table: Mapping[str, Param], values: Mapping[str, Any]) -> list[str]:
    """Why parsed `values` can match no row whatever the data: a lower bound above its upper
    bound (tf_min=30 with tf_max=10, created_after on or after created_before)."""
    return [reason for _, reason in _contradicted(table, values)]


def _contradicted(table: Mapping[str, Param], values: Mapping[str, Any]) -> list[tuple[Param, str]]:
    reasons = []
    for low, high, exclusive in bound_pairs(table):
        if low.name not in values or high.name not in values:
            continue
        lo, hi = values[low.name], values[high.name]
        shown = [
            f"{p.name}={v:g}" if isinstance(v, (int, float)) else f"{p.name}={v}" for p, v in ((low, lo), (high, hi))
        ]
        if exclusive and lo >= hi:
            reasons.append((low, f"{shown[0]} is not before {shown[1]} (which leaves its own day out)"))
        elif lo > hi:
            reasons.append((low, f"{shown[0]} is {'after' if low.kind == 'date' else 'above'} {shown[1]}"))
    return reasons


def takes_several(param: Param) -> bool:
    """Whether the parameter takes a comma list (tld, source, topic, ...)."""
    return param.kind == "list" or isinstance(param, CategoriesParam)


def gather(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Name/value pairs (a query string, KEY=VALUE arguments) as a mapping; a repeated name
    becomes a list, which `parse_params` merges or refuses (`merge_repeated`)."""
    params: dict[str, Any] = {}
    for key, value in pairs:
        if key in params:
            previous = params[key]
            params[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            params[key] = value
    return params


def merge_repeated(param: Param, values: list[Any] | tuple[Any, ...]) -> Any:
    """A parameter given more than once (`tld=.fr&tld=.de`, `edt query tld=.fr tld=.de`, or a
    list in a tool call): a list filter gets the values merged as its comma list (`.fr,.de`);
    any other parameter must be given once (the same value repeated is accepted), else 422.
    One rule for the CLI, the HTTP API and the MCP tools."""
    given = [v for v in values if v is not None and str(v).strip()]
    if takes_several(param):
        return ",".join(str(v).strip() for v in given) or None
    distinct = list(dict.fromkeys(str(v).strip() for v in given))
    if len(distinct) > 1:
        raise invalid(
            param.name,
            f"{param.name} was given {len(given)} times ({', '.join(distinct)}); it takes one "
            "value (only list filters such as tld merge repeats into a comma list).",
        )
    return given[0] if given else None

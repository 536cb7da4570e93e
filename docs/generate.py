"""Write the reference pages that come from the code's own tables.

    python docs/generate.py            # rewrite the generated parts of the pages below
    python docs/generate.py --check    # exit 1 naming each stale page (the tests run this)

Query parameters come from the parameter tables the query layer validates with, commands
and options from the click group `edt` runs, fields from the replica's OpenAPI document
(itself built from the field lists the writer stores), plans from the plan table. A page is
Markdown around one generated block between `<!-- generated:NAME -->` and
`<!-- /generated:NAME -->`; only the block is rewritten, the prose around it is the page's own.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

DOCS = Path(__file__).resolve().parent


def _cell(text: Any) -> str:
    """A Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|") if text not in (None, "") else ""


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# -- parameters ------------------------------------------------------------------------------


def _accepts(param: Any) -> str:
    if param.kind == "flag":
        return "1/true or 0/false"
    if param.choices:
        return ", ".join(f"`{c}`" for c in param.choices)
    kind = {
        "int": "whole number",
        "number": "number",
        "date": "date (YYYY-MM-DD)",
        "week": "week end (YYYY-MM-DD) or `all`",
        "text": "text",
        "list": "comma-separated list",
    }.get(param.kind, param.kind)
    bounds = []
    if param.minimum is not None:
        bounds.append(f">= {param.minimum:g}")
    if param.maximum is not None:
        bounds.append(f"<= {param.maximum:g}")
    if param.max_length:
        bounds.append(f"at most {param.max_length} characters")
    return kind + (f" ({', '.join(bounds)})" if bounds else "")


def _param_rows(table: dict[str, Any]) -> list[list[Any]]:
    return [
        [
            f"`{p.name}`",
            _accepts(p),
            "" if p.default is None else f"`{p.default}`",
            p.description + (" *(toolkit extension)*" if p.extension else ""),
        ]
        for p in table.values()
    ]


def parameters() -> str:
    from toolkit import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS

    headers = ["parameter", "accepts", "default", "what it does"]
    return "\n\n".join(
        [
            "## `/api/domains`, `edt query`, `Mirror.search_domains`",
            _table(headers, _param_rows(DOMAIN_PARAMS)),
            "## `/api/pending-delete`, `edt query --pending`, `Mirror.search_pending`",
            _table(headers, _param_rows(PENDING_PARAMS)),
            "## `/api/free/domains` (no key)",
            _table(headers, _param_rows(FREE_PARAMS)),
        ]
    )


# -- commands --------------------------------------------------------------------------------


def _option_row(param: click.Parameter) -> list[Any]:
    if isinstance(param, click.Argument):
        return [f"`{param.human_readable_name}`", "argument" + (", required" if param.required else ""), ""]
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    default = param.default if param.show_default or isinstance(param.default, (int, float, str)) else None
    if isinstance(param.show_default, str):  # said in words (`--db`: where it is looked for)
        return [names, _cell(param.help or ""), param.show_default]
    if callable(default) or isinstance(param.default, bool) or param.default in ((), None, ""):
        default = None
    return [names, _cell(param.help or ""), "" if default is None else f"`{default}`"]


def _command_sections(command: click.Command, path: str, depth: int) -> list[str]:
    out = [f"{'#' * depth} `{path}`", _cell((command.help or "").split("\n\n")[0])]
    params = [p for p in command.params if p.name != "help" and not getattr(p, "hidden", False)]
    if params:
        out.append(_table(["option", "what it does", "default"], [_option_row(p) for p in params]))
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            sub = command.commands[name]
            if not getattr(sub, "hidden", False):
                out += _command_sections(sub, f"{path} {name}", min(depth + 1, 4))
    return out


def commands() -> str:
    from toolkit.cli import cli

    root = [p for p in cli.params if p.name != "help"]
    out = ["## `edt`", _table(["option", "what it does", "default"], [_option_row(p) for p in root])]
    for name in sorted(cli.commands):
        if not getattr(cli.commands[name], "hidden", False):
            out += _command_sections(cli.commands[name], f"edt {name}", 2)
    return "\n\n".join(out)


# -- fields ----------------------------------------------------------------------------------


def _type_text(schema: dict[str, Any]) -> str:
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    text = " or ".join(k for k in kinds if k and k != "null")
    if schema.get("format"):
        text += f" ({schema['format']})"
    if schema.get("enum"):
        text += ": " + ", ".join(f"`{v}`" for v in schema["enum"] if v is not None)
    return text + (", nullable" if "null" in kinds else "")


def fields() -> str:
    from toolkit.query.records import LISTING_DERIVED
    from toolkit.serve.openapi import build_openapi
    from toolkit.store.fields import LISTING_EXTRA_FIELDS, PENDING_EXTRA_FIELDS
    from toolkit.store.labels import LISTING_LABELS, PENDING_LABELS

    schemas = build_openapi()["components"]["schemas"]
    out = []
    records = (
        ("Domain", "listings", {**LISTING_EXTRA_FIELDS, **LISTING_DERIVED}, LISTING_LABELS),
        ("PendingDeleteDomain", "pending_delete", PENDING_EXTRA_FIELDS, PENDING_LABELS),
    )
    for title, table, extra, labels in records:
        props = schemas[title]["properties"]
        rows = [
            [
                f"`{name}`",
                labels[name].label,
                _type_text(s),
                "toolkit" if name in extra else "service",
                labels[name].meaning,
            ]
            for name, s in props.items()
        ]
        out += [f"## `{title}` (table `{table}`)", _table(["field", "label", "type", "from", "meaning"], rows)]
    return "\n\n".join(out)


# -- plans -----------------------------------------------------------------------------------


def plans() -> str:
    from toolkit import PLANS
    from toolkit.plans import CAPABILITIES, PLAN_LABELS, RATE_LIMITS, plan_allows

    headers = ["plan", "requests a minute", *[CAPABILITIES[c].removeprefix("access ") for c in CAPABILITIES]]
    rows = [
        [
            f"`{p}` ({PLAN_LABELS[p]})",
            RATE_LIMITS[p] if RATE_LIMITS[p] is not None else "as configured",
            *["yes" if plan_allows(p, c) else "no" for c in CAPABILITIES],
        ]
        for p in PLANS
    ]
    return _table(headers, rows)


def timelapse() -> str:
    from toolkit.demo.catalog import timelapse_table

    return timelapse_table()


def feeds() -> str:
    from toolkit.store.feed_catalog import FEEDS

    def every(feed: Any) -> str:
        hours = feed.every.total_seconds() / 3600
        return f"{hours:g} hours" if hours < 24 else f"{hours / 24:g} day" + ("s" if hours > 24 else "")

    rows = [
        [
            f"`{f.name}`",
            f"`{f.adapter}`",
            f"`{f.url}`" if f.url else "(set `url`)",
            f.format,
            f"`{f.schedule}`",
            every(f),
            "yes" if f.enabled else "no",
            f.description,
        ]
        for f in FEEDS.values()
    ]
    return _table(
        ["feed", "adapter", "address", "format", "schedule (cron)", "fresh for", "on by default", "what"], rows
    )


# name: (page, relative to docs/, what writes its block)
PAGES: dict[str, tuple[str, Callable[[], str]]] = {
    "parameters": ("reference/parameters.md", parameters),
    "commands": ("reference/commands.md", commands),
    "fields": ("reference/fields.md", fields),
    "plans": ("reference/plans.md", plans),
    "timelapse": ("guides/demo.md", timelapse),
    "feeds": ("guides/feeds.md", feeds),
}


def render(name: str, text: str) -> str:
    """`text` with its generated block for `name` replaced by the current one."""
    begin, end = f"<!-- generated:{name} -->", f"<!-- /generated:{name} -->"
    block = (
        f"{begin}\n<!-- written by docs/generate.py from the code: edit the code, then run it -->\n\n"
        f"{PAGES[name][1]().strip()}\n\n{end}"
    )
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
    if pattern.search(text):
        return pattern.sub(lambda _: block, text)
    return text.rstrip() + "\n\n" + block + "\n"


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = []
    for name, (file, _) in PAGES.items():
        path = DOCS / file
        old = path.read_text() if path.exists() else ""
        new = render(name, old)
        if new != old:
            stale.append(f"{path.parent.name}/{path.name}")
            if not check:
                path.write_text(new)
    if check and stale:
        print("stale generated pages: " + ", ".join(stale) + "; run: python docs/generate.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(DOCS.parent))
    raise SystemExit(main(sys.argv[1:]))

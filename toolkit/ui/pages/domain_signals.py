"""The domain page's judging signals: the price in EUR, the flags with their reasons, and
the metric history chart. `signal_flags` is plain Python (the app and tests read it);
`show_signals` draws it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import streamlit as st

from ...analysis import charts
from .. import echarts, state

__all__ = ["signal_flags", "eur_price_text", "show_signals"]


def eur_price_text(record: Mapping[str, Any]) -> str:
    """`€ 91.37` (the effective price in EUR), or why there is none."""
    eur = record.get("effective_price_eur")
    if eur is not None:
        return f"€ {eur:,.2f}"
    if record.get("effective_price") is None:
        return "-"
    currency = record.get("currency")
    return "no EUR price (no currency given)" if not currency else f"no EUR price (no ECB rate for {currency})"


def signal_flags(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(flag, reason) for each warning the listing's signals raise, most serious first."""
    flags: list[tuple[str, str]] = []
    jump = record.get("metrics_jump")
    if record.get("metrics_jumped") and isinstance(jump, dict):
        flags.append(("Inflated metrics", jump.get("reason") or f"{jump.get('metric')} rose by {jump.get('rise')}"))
    terms = record.get("spam_terms") or []
    if terms:
        flags.append(
            (
                "Spam words",
                "the name reads as " + ", ".join(f"'{t}'" for t in terms) + " (your spam dictionary: edt spam show)",
            )
        )
    if record.get("archive_parked"):
        flags.append(("Parked", record.get("archive_parked_reason") or "parked-page signal in the archive"))
    share = record.get("archive_redirect_share")
    if share is not None and share >= 0.5:
        flags.append(("Redirected", f"{share:.0%} of its archived captures were redirects (to another site)"))
    gap = record.get("archive_longest_gap")
    if gap:
        flags.append(("Archive gap", f"{gap} year{'s' if gap > 1 else ''} in a row without any capture"))
    return flags


def show_signals(record: Mapping[str, Any], history: pd.DataFrame, unknown: list[str] | tuple[str, ...] = ()) -> None:
    """The signals section of the domain page. What cannot be judged for want of data
    (`unknown`: "no link data", "no archive data") is said, never passed as clear."""
    st.subheader("Before you buy")
    no_links, no_archive = "no link data" in unknown, "no archive data" in unknown
    cols = st.columns(2)
    continuity = record.get("archive_continuity")
    cols[0].metric(
        "Archive continuity",
        "—" if continuity is None else f"{continuity}/100",
        help="Years with archived content over the archived span, less parked pages",
    )
    years = record.get("archive_years")
    cols[1].metric("Years archived", "—" if years is None else years)
    flags = signal_flags(record)
    for flag, reason in flags:
        st.warning(f"**{flag}**: {reason}")
    checked = [
        "spam word",
        *([] if no_links else ["metric jump"]),
        *([] if no_archive else ["parked page", "archive gap"]),
    ]
    if not flags:
        st.success(f"No {', '.join(checked[:-1]) + ' or ' + checked[-1] if len(checked) > 1 else checked[0]} flagged.")
    if no_links or no_archive:
        missing = [
            what
            for what, gone in (
                ("metric jumps (no link data)", no_links),
                ("parked pages and archive gaps (no archive data)", no_archive),
            )
            if gone
        ]
        st.caption(f"Not checked: {' and '.join(missing)}.")
    if no_links:
        return  # no metric was ever recorded: no chart of nothing
    jump = record.get("metrics_jump") if record.get("metrics_jumped") else None
    echarts.show_made(
        lambda: charts.metric_history(history, jump_at=(jump or {}).get("after_at")),
        state.made_from("metric history", record["id"]),
        key="metric_history_chart",
    )

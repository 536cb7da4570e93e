"""Sync: how fresh each dataset is, the last runs, and a job or the free feeds run now."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import streamlit as st

from .. import navigation, state, table

__all__ = ["sync_page", "run_job"]


_RUN_WORDS = {
    "ok": "done",
    "failed": "failed",
    "stopped": "refused by the service",
    "interrupted": "stopped midway",
    "running": "running",
    "skipped": "skipped",
}


def _age(hours: float | None) -> str:
    if hours is None:
        return ""
    return f"{hours:,.1f} h ago" if hours < 48 else f"{hours / 24:,.0f} days ago"


def _freshness_words(row: dict[str, Any], done: str, demo: bool = False) -> str:
    if row["last_ok"] is None:
        return f"not {done} yet (demo data)" if demo else f"never {done}"
    return "fresh" if row["fresh"] else "stale"


def sync_page() -> None:
    from ...store.jobs import JOBS
    from ...store.labels import job_name

    st.header("Sync")
    info = state.status()
    demo = state.demo()
    if demo:
        _demo_runs(demo)
    st.subheader("Datasets from the live service")
    rows = [
        (
            job_name(r["job"]),
            r["schedule"],
            table.moment(r["last_ok"]) or "—",
            _age(r["age_hours"]) or "—",
            _freshness_words(r, "synced", bool(demo)),
        )
        for r in info["freshness"]
    ]
    navigation.show_html(
        table.plain_table(("dataset", "the service refreshes it", "last synced", "how long ago", "state"), rows),
        key="freshness",
    )
    if info["last_sync"]:
        st.subheader("Last runs")
        runs = [
            (
                job_name(job),
                table.moment(r["started_at"]),
                table.moment(r["finished_at"]) or "—",
                _RUN_WORDS.get(r["status"], r["status"]),
                f"{r['rows_seen']:,}" if r["rows_seen"] is not None else "—",
                r["error"] or "",
            )
            for job, r in info["last_sync"].items()
        ]
        navigation.show_html(
            table.plain_table(("job", "started", "finished", "result", "rows seen", "problem"), runs), key="runs"
        )
    if not os.environ.get("EDT_API_KEY"):
        st.info(
            "Set EDT_API_KEY (and EDT_PLAN) before starting the app to sync from the live service; "
            "the free public feeds below need no key."
        )
    else:
        job = st.selectbox("Job", list(JOBS), format_func=job_name, key="sync_job")
        switch = "demo_scale" in info["meta"] and st.checkbox(  # a sync refuses a mirror holding the demo
            "Remove the demo first (switch to the service's listings)", key="sync_clear_demo"
        )
        if st.button("Run this job now", key="sync_run"):
            run_job(job, clear_demo=switch)
    _feeds_section(info)


def _demo_runs(meta: dict[str, str]) -> None:
    """What the demo lived: its window and the runs of each job it played on the service's schedules."""
    from ...demo.timelapse import played_runs
    from ...store.labels import demo_words, job_name
    from ...sync.schedule import DEFAULT_SCHEDULES, schedule_words

    played = played_runs(meta)
    st.info(
        f"This mirror holds {demo_words(meta)}: generated data, not a sync. `edt sync --feeds --clear-demo` swaps "
        "it for the free public feeds, `edt demo --clear` removes it."
    )
    if not played:
        return
    st.subheader("What the demo lived")
    rows = [
        (job_name(job), schedule_words(DEFAULT_SCHEDULES[job]), f"{runs:,}", table.moment(last))
        for job, (runs, last) in sorted(played.items(), key=lambda item: -item[1][0])
    ]
    navigation.show_html(table.plain_table(("job", "played", "runs", "last run"), rows), key="demo_runs")


def _feeds_section(info: dict[str, Any]) -> None:
    """The free public feeds (docs/guides/feeds.md): freshness, and a button that fetches them."""
    from ...store.feed_catalog import feed_table
    from ...sync.schedule import schedule_words

    st.subheader("Free public feeds")
    try:
        feeds = feed_table()
    except ValueError as exc:
        st.error(str(exc))
        return
    if info["feeds"]:
        rows = [
            (
                f"{r['job']}: {feeds[r['job']].description}" if r["job"] in feeds else r["job"],
                schedule_words(r["schedule"]),
                table.moment(r["last_ok"]) or "—",
                _age(r["age_hours"]) or "—",
                _freshness_words(r, "fetched"),
                "yes" if r["enabled"] else "no",
            )
            for r in info["feeds"]
        ]
        navigation.show_html(
            table.plain_table(("feed", "published", "last fetched", "how long ago", "state", "scheduled"), rows),
            key="feeds",
        )
    for failed, line in st.session_state.pop("feed_lines", []):  # the last run's, said after the rerun
        (st.error if failed else st.success)(line)
    runnable = [name for name, feed in feeds.items() if feed.url]
    chosen = st.multiselect(
        "Feeds",
        runnable,
        default=[n for n in runnable if feeds[n].enabled],
        format_func=lambda n: f"{feeds[n].description.split(':')[0].split(' (')[0]} ({n})",
        key="feeds_pick",
    )
    if st.button("Fetch these feeds now", key="feeds_run", disabled=not chosen):
        _run_feeds(chosen)


def _run_feeds(names: list[str]) -> None:
    """Fetch `names`, then draw the page again: its freshness table then shows this run."""
    from ...ingest.feed_runner import run_feeds
    from ...store.lock import MirrorBusy

    with st.spinner(f"Fetching {len(names)} feed(s)…"):
        try:
            reports = run_feeds(state.db_path(), names)
        except (MirrorBusy, ValueError, OSError) as exc:
            st.error(str(exc))
            return
    st.cache_data.clear()
    st.session_state["feed_lines"] = [(r.failed, r.line()) for r in reports]
    st.rerun()


def run_job(job: str, *, clear_demo: bool = False) -> None:
    """Run one sync job; `clear_demo`: the demo's rows go first, once the service has answered."""
    from ...config import load_settings
    from ...plans import RATE_LIMITS
    from ...sync.remote import RemoteClient, RemoteFailed, RemoteRefused
    from ...sync.engine import DemoInTheWay, SyncBusy, SyncStopped, sync

    settings = load_settings(db=state.db_path(), plan=os.environ.get("EDT_PLAN") or "pro")
    bar = st.progress(0.0, text=f"{job}: starting")

    def progress(event: str, info: dict[str, Any]) -> None:
        if event == "page" and info.get("left") is not None:
            done = info["requests"] / max(1, info["requests"] + info["left"])
            bar.progress(min(done, 1.0), text=f"{job}: {info['rows']:,} rows, {info['requests']} requests")

    removed: list[str] = []

    async def run() -> list:
        per_minute = RATE_LIMITS.get(settings.plan) or RATE_LIMITS["business"]
        async with RemoteClient(
            settings.base_url, settings.api_key or "", plan=settings.plan, per_minute=per_minute
        ) as client:

            async def switch(conn: Any) -> None:
                if clear_demo:  # a wrong key or a service that is down keeps the demo
                    from ...demo import clear_demo_once_answered, removal_line

                    counts = await clear_demo_once_answered(
                        conn, lambda: client.get_json("/api/domains", {"per_page": 1})
                    )
                    if any(counts.values()):
                        removed.append(f"Removed the demo rows: {removal_line(counts)}.")

            return await sync(
                settings.db, client, plan=settings.plan, jobs=[job], progress=progress, before_jobs=switch
            )

    try:
        reports = asyncio.run(run())
    except (SyncBusy, SyncStopped, DemoInTheWay, RemoteFailed, RemoteRefused) as exc:  # the last two: before a job
        st.error(str(exc))
        return
    bar.progress(1.0, text=f"{job}: done")
    for line in removed:
        st.success(line)
    for report in reports:
        st.success(report.line())

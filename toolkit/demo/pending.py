"""The demo's pending-delete inventory: names seen in a pre-drop status under 125 TLDs, each
listed by the weekly snapshot after it was seen, with its drop window from the registry's
lifecycle (`toolkit.ingest.lifecycle`) and, for a few, SEO metrics.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date
from typing import Any

import numpy as np

from ..enrich.score import quality_score
from ..ingest.lifecycle import policy_for, predict_drop_window
from ..store.fields import PENDING_FIELDS
from .catalog import PENDING_TLDS, langs_for
from .clock import DAY, EPOCH_ORDINAL, HOUR, anchor_of, iso
from .name_maker import NameMaker
from .plan import CHUNK, THEME_WEIGHTS, Scale, allocate, scale_of
from .site_profile import seo_metrics
from .words import LANGS, THEMES

__all__ = ["PENDING_ID_BASE", "PENDING_KEYS", "status_mix", "pending_chunks", "pending_records"]

PENDING_ID_BASE = 1_874_000
PENDING_KEYS = tuple(PENDING_FIELDS)

_DNS = ("NXDOMAIN", "SERVFAIL", "NOERROR", None)


def status_mix(tld: str) -> tuple[tuple[str, ...], np.ndarray, dict[str, int]]:
    """Statuses seen under `tld`, their shares, and each status's stage length in days."""
    policy = policy_for(tld)
    statuses: tuple[str, ...]
    if policy is None:
        statuses = ("serverHold", "clientHold", "pendingDelete", "redemptionPeriod", "transition", "quarantine")
        return statuses, np.array([0.33, 0.2, 0.22, 0.15, 0.05, 0.05]), {}
    days = dict(policy.days)
    ordered = sorted(days.items(), key=lambda kv: -kv[1])
    stage: dict[str, int] = {}
    for index, (status, value) in enumerate(ordered):
        later = [v for _, v in ordered[index + 1 :] if v < value]
        stage[status] = value - (max(later) if later else 0)
    statuses = tuple(days)
    weights = [np.sqrt(stage[s]) for s in statuses]
    # Statuses the registry gives no fixed length: a registrar hold, DENIC's TRANSIT.
    extra = {"de": ("transition", 0.2), "uk": ("clientHold", 0.08), "co.uk": ("clientHold", 0.08)}.get(tld)
    if extra is None and policy.tlds == ("gtld",):
        extra = ("clientHold", 0.14)
    total = sum(weights)
    shares = [w / total for w in weights]
    if extra is not None:
        shares = [s * (1 - extra[1]) for s in shares] + [extra[1]]
        statuses = (*statuses, extra[0])
    return statuses, np.array(shares), stage


def pending_chunks(scale: str | Scale, seed: int, today: date) -> Iterator[list[dict[str, Any]]]:
    """Every pending-delete record, in id (= created_at) order, `CHUNK` at a time."""
    sc = scale_of(scale)
    rng = np.random.default_rng([seed, 21])
    rnd = random.Random(seed * 1_000_003 + 777_767)
    anchor = int(anchor_of(today).timestamp())
    today_ord = today.toordinal()
    monday = today_ord - today.weekday()
    tld_names = [t for t, _ in PENDING_TLDS]
    counts = allocate([w for _, w in PENDING_TLDS], sc.pending, 1)
    rows: list[tuple] = []
    for tld, count in zip(tld_names, counts):
        statuses, shares, stage = status_mix(tld)
        policy = policy_for(tld)
        stage_days = dict(policy.days) if policy is not None and stage else {}
        status_idx = rng.choice(len(statuses), count, p=shares / shares.sum())
        past = rng.random(count) < 0.06
        mix = langs_for("." + tld)
        lang_keys = [k for k, _ in mix]
        lang_w = np.array([w for _, w in mix])
        langs = rng.choice(len(lang_keys), count, p=lang_w / lang_w.sum())
        themes = rng.choice(len(THEMES), count, p=THEME_WEIGHTS / THEME_WEIGHTS.sum())
        for j in range(count):
            status = statuses[status_idx[j]]
            length = stage.get(status, 40)
            remaining = stage_days.get(status)
            elapsed: float
            if past[j] and remaining is not None:
                elapsed = remaining + rnd.randint(1, 14)
            else:
                elapsed = rnd.uniform(0, length)
            evidence = today_ord - int(elapsed)
            seconds = (evidence - EPOCH_ORDINAL) * DAY + rnd.randint(0, DAY - 1)
            rows.append((tld, status, evidence, min(seconds, anchor - HOUR), lang_keys[langs[j]], THEMES[themes[j]]))
    n = len(rows)
    # Which weekly snapshot first listed each row: this week's, or an earlier one.
    lag_weeks = rng.choice(4, n, p=[0.78, 0.14, 0.06, 0.02])
    order_key = []
    prepared = []
    for i, (tld, status, evidence, seconds, lang_key, theme) in enumerate(rows):
        evidence_monday = evidence - date.fromordinal(evidence).weekday()
        week = max(evidence_monday, monday - 7 * int(lag_weeks[i]))
        created = max(
            (week - EPOCH_ORDINAL) * DAY + 2 * HOUR + rnd.randint(0, 3 * HOUR), seconds + rnd.randint(HOUR, DAY)
        )
        created = min(created, anchor - 30 * 60)
        prepared.append((tld, status, evidence, seconds, lang_key, theme, week, created))
        order_key.append(created)
    order = np.lexsort((rng.random(n), np.array(order_key)))
    ids = PENDING_ID_BASE + np.cumsum(rng.geometric(0.8, n))
    namer = NameMaker(rnd)
    for chunk, start in enumerate(range(0, n, CHUNK)):
        stop = min(n, start + CHUNK)
        yield pending_records(
            [prepared[i] for i in order[start:stop].tolist()],
            ids[start:stop].tolist(),
            seed,
            chunk,
            today,
            anchor,
            rnd,
            namer,
        )


def pending_records(
    prepared: list[tuple],
    ids: list[int],
    seed: int,
    chunk: int,
    today: date,
    anchor: int,
    rnd: random.Random,
    namer: NameMaker,
) -> list[dict[str, Any]]:
    """Pending-delete records of `prepared` rows `(tld, status, evidence day (ordinal), seen at
    (seconds), language key, theme, week (ordinal of its Monday), created (seconds))`:
    names, metrics, DNS, the drop window from the registry's lifecycle; checked before `anchor`."""
    crng = np.random.default_rng([seed, 22, chunk])
    m = len(prepared)
    enriched = crng.random(m) < 0.1
    metrics = seo_metrics(crng, m, enriched, today, spam_share=0.0)
    idn = crng.random(m) < 0.015
    out = []
    for k in range(m):
        tld, status, evidence, seconds, lang_key, theme, week, created = prepared[k]
        made = namer.make_idn(lang_key, theme, "." + tld) if idn[k] else None
        domain, _ = made or namer.make(lang_key, theme, "." + tld)
        label = domain[: -len(tld) - 1]
        # the demo's sightings are daily: seen in the status on `evidence`, not the day before
        window, _ = predict_drop_window(tld, status, date.fromordinal(evidence), date.fromordinal(evidence - 1))
        drop = window.estimate if window else None
        checked = created + rnd.randint(0, max(1, anchor - created))
        dns: str | None
        if status == "transition":
            dns = "NOERROR" if rnd.random() < 0.6 else "NXDOMAIN"
        else:
            dns = rnd.choices(_DNS, (0.8, 0.08, 0.05, 0.07))[0]
        e = bool(enriched[k])
        tf, cf = int(metrics["tf"][k]), int(metrics["cf"][k])
        rd, bl, da = int(metrics["rd"][k]), int(metrics["backlinks"][k]), int(metrics["da"][k])
        snaps = int(metrics["snapshots"][k])
        values = (
            int(ids[k]),
            domain,
            tld,
            "czds-daily" if len(tld.rpartition(".")[2]) > 2 else "oi-diff",
            date.fromordinal(week).isoformat(),
            iso(seconds),
            status,
            dns,
            drop.isoformat() if drop else None,
            iso(checked),
            label.startswith("xn--"),
            len(label),
            None,  # the score, from the metrics below
            da if e else None,
            tf if e else None,
            cf if e else None,
            bl if e else None,
            rd if e else None,
            snaps if e else None,
            int(metrics["pagerank"][k]) if e and rnd.random() < 0.6 else None,
            LANGS[lang_key].code if e and rnd.random() < 0.9 else None,
            iso(created),
            iso(checked),
        )
        record = dict(zip(PENDING_KEYS, values))
        if e:  # no .edu or .gov referring domains, age or spam words known of a pending name
            record["score"] = quality_score(**record, ref_domains_edu=0, ref_domains_gov=0, age=None, is_spammy=False)
        record["drop_window_start"] = window.start.isoformat() if window else None
        record["drop_window_end"] = window.end.isoformat() if window else None
        out.append(record)
    return out

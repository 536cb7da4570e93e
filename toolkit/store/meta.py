"""`mirror_meta` notes every writer keeps: the generation readers cache by, and where a
stopped enrichment resumes (its parameters, said back as the command that resumes it)."""

from __future__ import annotations

import json
import shlex
import sqlite3
from collections.abc import Mapping
from typing import Any

__all__ = ["bump_generation", "PROGRESS_KEY", "enrich_signature", "enrich_resume_command"]

PROGRESS_KEY = "enrich_progress"


def bump_generation(conn: sqlite3.Connection) -> None:
    """Readers cache by this number: it changes with every committed write."""
    conn.execute(
        "INSERT INTO mirror_meta (key, value) VALUES ('generation', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


def enrich_signature(params: Mapping[str, Any] | None, wayback: bool, rdap: bool, language: bool = False) -> str:
    """An enrichment's parameters, as kept with its progress: a run resumes only the same ones."""
    chosen = sorted((str(k), str(v)) for k, v in (params or {}).items())
    sign: dict[str, Any] = {"params": chosen, "wayback": wayback, "rdap": rdap}
    if language:  # absent when off, so progress saved before the step existed still matches
        sign["language"] = True
    return json.dumps(sign, separators=(",", ":"))


def enrich_resume_command(progress_json: str) -> str | None:
    """The command that resumes a stopped enrichment, from its kept progress (None when it
    cannot be read): `edt enrich tld=.com score_min=20 --no-rdap`."""
    try:
        sign = json.loads(json.loads(progress_json)["signature"])
        words = [f"{k}={v}" for k, v in sign["params"]]
    except (ValueError, KeyError, TypeError):
        return None
    flags = {"--no-wayback": not sign.get("wayback", True), "--no-rdap": not sign.get("rdap", True)}
    flags["--language"] = bool(sign.get("language"))
    return " ".join(["edt enrich", *(shlex.quote(w) for w in words), *(f for f, on in flags.items() if on)])

"""`mirror_meta` notes every writer keeps: the generation readers cache by."""

from __future__ import annotations

import sqlite3

__all__ = ["bump_generation"]


def bump_generation(conn: sqlite3.Connection) -> None:
    """Readers cache by this number: it changes with every committed write."""
    conn.execute(
        "INSERT INTO mirror_meta (key, value) VALUES ('generation', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )

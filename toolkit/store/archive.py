"""Moved to `toolkit.store.parquet_archive` (the Parquet archive); this name goes in the next release."""

import warnings

from .parquet_archive import *  # noqa: F403
from .parquet_archive import __all__  # noqa: F401

warnings.warn("toolkit.store.archive is now toolkit.store.parquet_archive", DeprecationWarning, stacklevel=2)

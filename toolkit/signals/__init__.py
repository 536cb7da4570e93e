"""Signals that judge a name before buying it, derived from what the mirror already holds:
prices in one currency (`fx`), spam words in the name (`spam`), metrics inflated just
before an auction ends (`inflation`) and what the web archive's captures say
about a domain's past content (`wayback_content`).

Each module is pure where it can be (parsers and rules tested on worked examples); the
writer (`toolkit.store.writer`) and the enrichment run call them, so every row gets its
signals the moment it is written. Re-flagging a whole mirror when the spam dictionary changes
is a write, so it is the store's (`toolkit.store.reflag`).
"""

from .wayback_content import ArchiveSignals, archive_signals, parking_service
from .fx import FxTable, fx_table, to_eur
from .inflation import JUMP_WINDOW_DAYS, RISE_THRESHOLDS, Jump, flag_metric_jumps, metric_jump
from .spam import DEFAULT_TERMS, SpamDictionary, SpamDictionaryError, current_dictionary, load_dictionary

__all__ = [
    "ArchiveSignals",
    "archive_signals",
    "parking_service",
    "FxTable",
    "fx_table",
    "to_eur",
    "JUMP_WINDOW_DAYS",
    "RISE_THRESHOLDS",
    "Jump",
    "flag_metric_jumps",
    "metric_jump",
    "DEFAULT_TERMS",
    "SpamDictionary",
    "SpamDictionaryError",
    "current_dictionary",
    "load_dictionary",
]

"""What a name's label says to an appraiser, as numbers and categories for the price model
(analysis/appraise.py): its words and how common they are, its shape, and the prices of
the sales that share one of its words.

    from toolkit.analysis.namefeatures import label_features
    label_features(["kettleharbor", "zx9", "bako"])   # one row per label

Why each is there (docs/guides/results.md says the same for users):

- `length`, `hyphens`, `digits`: short names are scarce; hyphens and digits lower a price.
- `words`, `word_cost`, `rarest_word`, `commonest_word`, `one_word`: a name made of few,
  common English words (`shoes`, `bluekettle`) sells for more than one of rare words or none;
  a word's commonness is its cost in wordninja's English word list (the log of its rank by
  frequency: 2.5 for "the", about 13 for "kettle", 30 for a word not in the list).
- `vowels`, `consonant_run`, `pattern`: a pronounceable, brandable shape (CVCV: `bako`)
  sells as a brand; a run of consonants (`xkqz`) does not. `pattern` is the label's
  letter/number pattern when it is short (LLL for three letters, NNN for three digits, CVCV),
  else its kind (letters, digits, mixed, hyphenated).
- `comps_word`, `comps_word_n` (`word_prices`): the median price of the sales learnt from
  that share a word with the name, and how many there were: what the market paid for its
  words (each sale learnt from is priced by the others, never by itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["LABEL_NUMERIC", "label_features", "word_prices", "word_price_table", "UNKNOWN_WORD"]

LABEL_NUMERIC = (
    "length",
    "hyphens",
    "digits",
    "words",
    "word_cost",
    "rarest_word",
    "commonest_word",
    "one_word",
    "vowels",
    "consonant_run",
)
UNKNOWN_WORD = 30.0  # the cost of a run of letters wordninja's list does not hold
_VOWELS = frozenset("aeiouy")
_RUN = re.compile(r"[^\W\d_]+")
_CONSONANTS = re.compile(r"[b-df-hj-np-tv-xz]+")


def _costs() -> dict[str, float]:
    from ..signals.spam import word_costs as _word_costs

    return _word_costs()


def _pattern(label: str, letters: int, digits: int) -> str:
    if "-" in label:
        return "hyphenated"
    if len(label) <= 5:
        if digits == len(label):
            return "N" * len(label)
        if letters == len(label):
            return "".join("V" if c in _VOWELS else "C" for c in label) if len(label) >= 4 else "L" * len(label)
        return "".join("N" if c.isdigit() else "L" for c in label)
    return "letters" if not digits else ("digits" if not letters else "mixed")


def _one(label: str, costs: dict[str, float], segment: Any) -> tuple:
    """The features of one label and its words (three letters or more), segmented once."""
    letters = sum(map(str.isalpha, label))
    digits = sum(map(str.isdigit, label))
    pieces = [w for run in _RUN.findall(label) for w in segment(run)]
    word_costs = [costs.get(w, UNKNOWN_WORD) for w in pieces] or [UNKNOWN_WORD]
    run = max((len(m) for m in _CONSONANTS.findall(label)), default=0)
    words = tuple(w for w in pieces if len(w) >= 3)  # as name_words reads them
    return (
        len(label),
        label.count("-"),
        digits,
        len(words),
        sum(word_costs) / max(len(label), 1),
        max(word_costs),
        min(word_costs),
        float(label in costs),
        sum(c in _VOWELS for c in label) / max(letters, 1),
        run,
        _pattern(label, letters, digits),
        words,
    )


MANY_LABELS = 20_000  # labels from which one automaton for all (about a second to build) beats one at a time


def label_features(labels: Iterable[str]) -> Any:
    """A DataFrame of `LABEL_NUMERIC`, `pattern` and `word_list` (the label's words, for
    `word_prices`), one row per label (in order), each label read once."""
    import pandas as pd

    from ..signals.spam import segment, segment_many

    costs = _costs()
    labels = [label.lower() for label in labels]
    unique = list(dict.fromkeys(labels))
    split: Any = segment
    if len(unique) >= MANY_LABELS:  # every live name: their words found at once
        runs = list(dict.fromkeys(run for label in unique for run in _RUN.findall(label)))
        split = dict(zip(runs, segment_many(runs))).__getitem__
    features = {label: _one(label, costs, split) for label in unique}
    frame = pd.DataFrame([features[label] for label in labels], columns=[*LABEL_NUMERIC, "pattern", "word_list"])
    frame[list(LABEL_NUMERIC)] = frame[list(LABEL_NUMERIC)].astype(float)
    return frame


def word_price_table(words: Iterable[tuple[str, ...]], log_prices: Iterable[float]) -> dict[str, tuple[float, int]]:
    """word -> (median log price of the sales whose label holds it, how many), from each
    sale's words (`label_features(...)["word_list"]`)."""
    found: dict[str, list[float]] = {}
    for held, price in zip(words, log_prices):
        for word in set(held):
            found.setdefault(word, []).append(price)
    return {word: (float(np.median(prices)), len(prices)) for word, prices in found.items()}


def _lookup(words: list[tuple[str, ...]], table: dict[str, tuple[float, int]]) -> tuple[np.ndarray, np.ndarray]:
    """Each label's words' medians, weighted by their sales, and the log of those sales."""
    import pandas as pd

    held = pd.Series(words, dtype=object).map(lambda w: tuple(set(w))).explode().dropna()
    found = held.map(table).dropna()
    median = np.full(len(words), np.nan)
    count = np.zeros(len(words))
    if not found.empty:
        prices = pd.DataFrame(found.tolist(), index=found.index, columns=["median", "sales"])
        sums = (prices["median"] * prices["sales"]).groupby(level=0).sum()
        sales = prices["sales"].groupby(level=0).sum()
        median[sales.index.to_numpy()] = (sums / sales).to_numpy()
        count[sales.index.to_numpy()] = sales.to_numpy()
    return median, np.log1p(count)


def word_prices(
    words: Iterable[tuple[str, ...]],
    log_prices: Iterable[float] | None = None,
    *,
    table: dict[str, tuple[float, int]] | None = None,
    folds: int = 5,
) -> tuple[np.ndarray, np.ndarray]:
    """`comps_word`, `comps_word_n` of each label, from its words: from `table` (the sales
    learnt from) when given; else from the sales themselves (`log_prices`), each fold of them
    priced by the others, so that no sale is its own comparable."""
    words = list(words)
    if table is not None:
        return _lookup(words, table)
    prices = np.asarray([] if log_prices is None else list(log_prices), dtype=float)
    median = np.full(len(words), np.nan)
    count = np.zeros(len(words))
    fold = np.arange(len(words)) % folds
    for k in range(folds):
        inside = np.flatnonzero(fold != k)
        part = np.flatnonzero(fold == k)
        known = word_price_table([words[i] for i in inside], prices[inside])
        median[part], count[part] = _lookup([words[i] for i in part], known)
    return median, count

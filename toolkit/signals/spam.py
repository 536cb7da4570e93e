"""Spam words in a name: a user dictionary matched on the name's words, not on substrings.

The dictionary is a text file (UTF-8), one term a line; `#` starts a comment; `!term`
allow-lists a term: it is taken out of the list (a built-in one too) and, where it occurs
in a name, no term inside it matches (`!essex` keeps `sex` out of `essexcoach`). The
file adds to `DEFAULT_TERMS`. Its path: `EDT_SPAM_WORDS`, else `spam_words` in the config
file; without one, the built-in list alone.

Matching: the label (`sld`) is cut at every character that is not a letter, and each run
of letters is segmented into words by `wordninja` (English word frequencies), so
`bestcoachshop` is `best coach shop`. A term matches a word, or consecutive words that
spell it (`wordninja` splits words it does not know: `via gra`). Only labels holding a term
as a substring are segmented (one regular expression finds them), which is what makes
re-flagging a full mirror take seconds.

The fingerprint of the dictionary the rows were flagged with is kept in `mirror_meta`
(`spam_dictionary`); `toolkit.store.reflag` re-flags the mirror when it differs.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sqlite3
import time
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any
from .. import errors

__all__ = [
    "segment_many",
    "DEFAULT_TERMS",
    "SPAM_WORDS_ENV",
    "META_KEY",
    "SpamDictionary",
    "SpamDictionaryError",
    "dictionary_path",
    "load_dictionary",
    "current_dictionary",
    "stored_fingerprint",
    "record_fingerprint",
    "name_words",
    "LETTERS",
    "segment",
    "word_costs",
]

SPAM_WORDS_ENV = "EDT_SPAM_WORDS"
META_KEY = "spam_dictionary"
MATCHER_VERSION = "1"  # part of the fingerprint: a change of the matching rule re-flags too

# Words that mark a name as spam in the eyes of search engines and buyers: gambling,
# pharmacy, adult, payday lending, counterfeits, piracy. Brands and ordinary trades
# ("coach", "nike") are left out on purpose: add them in your own file if you want them.
DEFAULT_TERMS: tuple[str, ...] = (
    "casino",
    "casinos",
    "poker",
    "slots",
    "roulette",
    "blackjack",
    "betting",
    "gambling",
    "bookmaker",
    "sportsbook",
    "viagra",
    "cialis",
    "levitra",
    "pharmacy",
    "pills",
    "xanax",
    "tramadol",
    "steroids",
    "porn",
    "porno",
    "xxx",
    "sex",
    "sexy",
    "escort",
    "escorts",
    "camgirl",
    "hentai",
    "nude",
    "nudes",
    "payday",
    "loans",
    "cashadvance",
    "replica",
    "replicas",
    "counterfeit",
    "fake",
    "torrent",
    "torrents",
    "warez",
    "keygen",
    "crack",
    "cracked",
    "essay",
    "essays",
    "followers",
)

LETTERS = re.compile(r"[^\W\d_]+")


class SpamDictionaryError(errors.BadInput):
    """The dictionary file cannot be read: the message names the file, the line and the fix."""


@dataclass(frozen=True)
class SpamDictionary:
    terms: frozenset[str]
    allowed: frozenset[str] = frozenset()
    source: str = "built-in"
    fingerprint: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        if not self.fingerprint:
            text = MATCHER_VERSION + "\n" + "\n".join(sorted(self.terms)) + "\n!" + "\n!".join(sorted(self.allowed))
            object.__setattr__(self, "fingerprint", hashlib.sha1(text.encode()).hexdigest()[:16])

    @property
    def _finder(self) -> re.Pattern[str] | None:
        return _finder(self.terms)

    def match(self, label: str | None) -> list[str]:
        """The dictionary's terms among the words of `label` (a name's sld), in order, once each."""
        if not label or not self.terms:
            return []
        text = label.lower()
        finder = self._finder
        if finder is None or not finder.search(text):
            return []
        guarded = [(m.start(), m.end()) for word in self.allowed for m in re.finditer(re.escape(word), text)]
        found: list[str] = []
        for run in LETTERS.finditer(text):
            words = segment(run.group())
            starts = [run.start()]
            for word in words:
                starts.append(starts[-1] + len(word))
            for i in range(len(words)):
                joined = ""
                for j in range(i, len(words)):
                    joined += words[j]
                    if len(joined) > _LONGEST:
                        break
                    if joined in self.terms and joined not in found:
                        begin, end = starts[i], starts[j + 1]
                        if not any(a <= begin and end <= b for a, b in guarded):
                            found.append(joined)
        return found


_LONGEST = 40  # characters: the longest term accepted


@lru_cache(maxsize=8)
def _finder(terms: frozenset[str]) -> re.Pattern[str] | None:
    if not terms:
        return None
    return re.compile("|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)))


_MAX_WORD = 24  # letters: wordninja's list goes to 58, but longer words are not what names are made of


@lru_cache(maxsize=200_000)
def segment(letters: str) -> tuple[str, ...]:
    """The most probable words of a run of letters: wordninja's dynamic programme over its
    English word costs (Zipf's law on Wikipedia frequencies), with words capped at
    `_MAX_WORD` letters, which makes it about five times faster than `wordninja.split`."""
    if not letters.isascii():
        return (letters,)  # wordninja's model is English, ASCII: a non-ASCII run stays whole
    costs = word_costs()
    n = len(letters)
    best = [0.0] * (n + 1)
    step = [0] * (n + 1)
    for i in range(1, n + 1):
        chosen, length = math.inf, 1
        for k in range(1, min(i, _MAX_WORD) + 1):
            cost = best[i - k] + costs.get(letters[i - k : i], math.inf)
            if cost < chosen:  # ties: the shorter last word, as wordninja
                chosen, length = cost, k
        best[i], step[i] = chosen, length
    return _words(letters, step)


def _words(letters: str, step: list[int]) -> tuple[str, ...]:
    """The words the programme chose, from the length of the last word ending at each place."""
    words = []
    n = len(letters)
    while n > 0:
        words.append(letters[n - step[n] : n])
        n -= step[n]
    return tuple(reversed(words))


def segment_many(runs: list[str]) -> list[tuple[str, ...]]:
    """`segment` of each run, for many runs at once (the price model reads every live name):
    the dictionary's words in each run found by an Aho-Corasick automaton (pyahocorasick, in C),
    then the same programme over the words found, not over every slice. The same words as
    `segment`, about twice as fast; building the automaton takes about a second, so one name
    at a time goes through `segment`."""
    automaton = _word_automaton()
    inf = math.inf
    split: list[tuple[str, ...]] = []
    for letters in runs:
        if not letters.isascii():
            split.append((letters,))
            continue
        n = len(letters)
        ending: list[list[tuple[int, float]]] = [[] for _ in range(n + 1)]
        for end, found in automaton.iter(letters):
            ending[end + 1].append(found)
        best = [0.0] * (n + 1)
        step = [0] * (n + 1)
        for i in range(1, n + 1):
            chosen, length = inf, 1
            for k, cost in sorted(ending[i]):  # ties: the shorter last word, as `segment`
                cost += best[i - k]
                if cost < chosen:
                    chosen, length = cost, k
            best[i], step[i] = chosen, length
        split.append(_words(letters, step))
    return split


@lru_cache(maxsize=1)
def _word_automaton() -> Any:
    import ahocorasick

    automaton = ahocorasick.Automaton()
    for word, cost in word_costs().items():
        if len(word) <= _MAX_WORD:
            automaton.add_word(word, (len(word), cost))
    automaton.make_automaton()
    return automaton


def name_words(label: str, *, shortest: int = 3) -> tuple[str, ...]:
    """The words of a name's label, as the spam words read it (`kettleharbor` -> kettle,
    harbor; digits and hyphens split runs): words shorter than `shortest` letters left out."""
    words: list[str] = []
    for run in re.findall(r"[^\W\d_]+", label.lower()):
        words.extend(w for w in segment(run) if len(w) >= shortest)
    return tuple(words)


@lru_cache(maxsize=1)
def word_costs() -> dict[str, float]:
    import wordninja

    return wordninja.DEFAULT_LANGUAGE_MODEL._wordcost  # its public split() has no word-length cap


def _term(text: str, path: str, number: int) -> str:
    term = "".join(text.split()).lower()  # "payday loans" is the word sequence paydayloans
    if not term or len(term) > _LONGEST or not term.isalpha():
        raise SpamDictionaryError(
            f"{path}, line {number}: {text.strip()!r} is not a term (letters only, at most "
            f"{_LONGEST}); fix or remove the line"
        )
    return term


def load_dictionary(path: str | os.PathLike[str] | None = None, *, defaults: bool = True) -> SpamDictionary:
    """The dictionary of `path` (added to the built-in terms unless `defaults` is False);
    the built-in one without a path. Raises SpamDictionaryError naming the file and line."""
    terms = set(DEFAULT_TERMS) if defaults else set()
    allowed: set[str] = set()
    if path is None:
        return SpamDictionary(frozenset(terms))
    where = os.fspath(path)
    try:
        data = Path(where).read_bytes()
    except OSError as exc:
        raise SpamDictionaryError(
            f"{where}: cannot read the spam word list ({exc.strerror or exc}); fix "
            f"{SPAM_WORDS_ENV} or spam_words in the config file"
        ) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad_line = data[: exc.start].count(b"\n") + 1
        raise SpamDictionaryError(
            f"{where}, line {bad_line}: not UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8"
        ) from None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("!"):
            allowed.add(_term(line[1:], where, number))
        else:
            terms.add(_term(line, where, number))
    return SpamDictionary(frozenset(terms - allowed), frozenset(allowed), source=where)


def dictionary_path() -> str | None:
    """`EDT_SPAM_WORDS`, else `spam_words` in the config file, else None (built-in list)."""
    from ..config import config_file

    chosen = os.environ.get(SPAM_WORDS_ENV) or config_file().get("spam_words")
    return os.path.expanduser(str(chosen)) if chosen else None


_loaded: dict[tuple[Any, ...], SpamDictionary] = {}
_checked: list[float] = [-1e9]


def current_dictionary(*, max_staleness: float = 0.0) -> SpamDictionary:
    """The dictionary in use, read again when the file changes (size or modification time).
    `max_staleness`: seconds during which the last answer is given without looking (the
    writer asks once a row)."""
    now = time.monotonic()
    if _loaded and now - _checked[0] < max_staleness:
        return next(iter(_loaded.values()))
    path = dictionary_path()
    key: tuple[Any, ...] = (path,)
    if path is not None:
        try:
            stat = os.stat(path)
            key = (path, stat.st_mtime_ns, stat.st_size)
        except OSError:
            pass  # load_dictionary names the problem
    if key not in _loaded:
        dictionary = load_dictionary(path)
        _loaded.clear()
        _loaded[key] = dictionary
    _checked[0] = now
    return _loaded[key]


def stored_fingerprint(conn: sqlite3.Connection) -> str | None:
    try:
        row = conn.execute("SELECT value FROM mirror_meta WHERE key = ?", [META_KEY]).fetchone()
    except sqlite3.OperationalError:
        return None
    return json.loads(row[0]).get("fingerprint") if row else None


def record_fingerprint(conn: sqlite3.Connection, dictionary: SpamDictionary) -> None:
    """Note in `mirror_meta` which dictionary the rows were flagged with (inside the caller's transaction)."""
    value = json.dumps(
        {
            "fingerprint": dictionary.fingerprint,
            "source": dictionary.source,
            "terms": len(dictionary.terms),
            "allowed": len(dictionary.allowed),
        }
    )
    conn.execute(
        "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [META_KEY, value],
    )

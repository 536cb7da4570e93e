"""`python -m toolkit.bench.spam_reflag`: how long re-flagging a full mirror's names takes.

Draws `--names` labels (default 727,000: the full demo's listings and regfree rows) from the
demo's word lists, 1-3 words each, with a spam word in `--spam-share` of them, and times
(1) `SpamDictionary.match` over every label in memory, and (2) `reflag` over a SQLite
mirror of the same names (read every row, write the changed ones, one transaction), for
the built-in dictionary and after a change of it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from ..demo.signal_fields import SPAM_WORDS
from ..demo.words import LANGS
from ..signals.spam import SpamDictionary, load_dictionary
from ..store.reflag import reflag
from ..store.schema import ensure_schema

__all__ = ["labels", "main"]


def labels(count: int, seed: int, spam_share: float) -> list[str]:
    rnd = random.Random(seed)
    words = sorted({w for lang in LANGS.values() for w in lang.nouns + lang.adjectives if w.isascii() and w.isalpha()})
    out = []
    for _ in range(count):
        parts = [rnd.choice(words) for _ in range(rnd.choice((1, 2, 2, 2, 3)))]
        if rnd.random() < spam_share:
            parts.insert(rnd.randrange(len(parts) + 1), rnd.choice(SPAM_WORDS))
        label = "".join(parts)
        out.append(label + (str(rnd.randint(1, 99)) if rnd.random() < 0.05 else ""))
    return out


def _time_match(dictionary: SpamDictionary, names: list[str]) -> tuple[float, int]:
    started = time.perf_counter()
    flagged = sum(1 for name in names if dictionary.match(name))
    return time.perf_counter() - started, flagged


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.spam_reflag", description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=727_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--spam-share", type=float, default=0.03)
    args = parser.parse_args(argv)
    names = labels(args.names, args.seed, args.spam_share)
    built_in = load_dictionary()
    changed = SpamDictionary(built_in.terms | {"coach", "nike", "cheap"}, frozenset({"poker"}), source="changed")
    from ..signals.spam import segment

    print(f"{len(names):,} labels, {args.spam_share:.0%} with a spam word (seed {args.seed})")
    for label, dictionary in (("built-in", built_in), ("changed", changed)):
        segment.cache_clear()
        seconds, flagged = _time_match(dictionary, names)
        print(
            f"match in memory, {label} dictionary: {seconds:.2f} s ({seconds / len(names) * 1e6:.2f} us a name), "
            f"{flagged:,} flagged"
        )
    with tempfile.TemporaryDirectory() as folder:
        conn = sqlite3.connect(Path(folder) / "spam.db")
        ensure_schema(conn)
        with conn:
            conn.executemany(
                "INSERT INTO listings (id, name, sld, spam_terms, spam_count) VALUES (?, ?, ?, '[]', 0)",
                ((i, f"{n}.com", n) for i, n in enumerate(names, 1)),
            )
        for label, dictionary in (("built-in", built_in), ("changed", changed)):
            segment.cache_clear()
            report = reflag(conn, dictionary, force=True)
            print(
                f"reflag over SQLite, {label} dictionary: {report.seconds:.2f} s ({report.examined:,} names read "
                f"through the trigram index), {report.changed:,} rows rewritten"
            )
        everything = SpamDictionary(built_in.terms | {"ai"}, source="with a 2-letter term")
        segment.cache_clear()
        report = reflag(conn, everything, force=True)
        print(
            f"reflag over SQLite, a term too short for the index (every name read): {report.seconds:.2f} s, "
            f"{report.changed:,} rows rewritten"
        )
        conn.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A benchmark's own copy of a mirror: the command line that names the mirror (refused when
there is none), and the copy in a scratch folder, removed after; the mirror given is never written."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

__all__ = ["copy_mirror", "mirror_parser", "parse_mirror_args", "scratch_copy"]


def copy_mirror(source: str, target: str) -> None:
    """A copy of the mirror at `source` (SQLite's backup API: consistent while it is written)."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def mirror_parser(module: str, doc: str, db_help: str) -> argparse.ArgumentParser:
    """The parser of the benchmark `python -m module` (described by the first paragraph of its
    docstring `doc`), with its --db."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=doc.split("\n\n")[0])
    parser.add_argument("--db", required=True, help=db_help)
    return parser


def parse_mirror_args(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, missing: str
) -> argparse.Namespace | None:
    """`argv` parsed, --seed and --markdown added last; None, having said `missing` (formatted
    with `db`) on stderr, when --db names no file."""
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    args = parser.parse_args(argv)
    if not Path(args.db).is_file():
        print(missing.format(db=args.db), file=sys.stderr)
        return None
    return args


@contextmanager
def scratch_copy(db: str, prefix: str, name: str = "mirror.db", folder: str | None = None) -> Iterator[str]:
    """The path of a copy of the mirror `db`, in a new folder (under `folder`, else the system's
    temporary one) removed with all in it on leaving."""
    with tempfile.TemporaryDirectory(prefix=prefix, dir=folder) as scratch:
        path = os.path.join(scratch, name)
        copy_mirror(db, path)
        yield path

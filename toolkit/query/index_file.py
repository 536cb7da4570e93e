"""An index part's file written an array at a time (`IndexFile`): a build or a refresh hands
each array over as it is made and lets it go, so a part of a million listings (about 200 MB of
arrays) never stands in memory whole, nor beside the part it replaces, nor in both the build's
workers and the process that asked for it. The file is the one `ColumnarIndex.save` writes and
`load_index` maps: a header (its layout and meta), then the arrays, each at an ALIGN boundary."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["IndexFile", "HeldArrays", "FORMAT", "MAGIC", "ALIGN", "HEAD"]

FORMAT = 3  # 2: reals held as ranks among their distinct values; 3: parts (live, all)
MAGIC = b"EDTCOLS1"
ALIGN = 64
# Room left for the header before the arrays of a scratch file: `finish` writes the header
# there, padded with spaces to fill it, and renames the scratch file into place (no copy).
HEAD = 64 * 1024


class IndexFile:
    """The arrays of one index part, written to a scratch file in `folder` as they come (`add`,
    or `take` another's), then made the part's file at `path` at once (`finish`), never half
    written; or read back into memory (`arrays`). Raises OSError when the folder cannot be
    written (the caller then holds the part in memory). It pickles as its scratch file's name
    and layout: a build's worker returns its own, the process that started it `take`s it.
    `target`: where `finish` puts the part."""

    def __init__(self, folder: str | os.PathLike[str], *, target: str | os.PathLike[str] | None = None):
        self.target = target
        made = tempfile.NamedTemporaryFile(dir=folder, prefix=".edt-colidx-", suffix=".scratch", delete=False)
        made.close()
        self.scratch = made.name
        self.layout: dict[str, tuple[str, int, int]] = {}
        self._size = 0

    def __contains__(self, name: str) -> bool:
        return name in self.layout

    def add(self, name: str, array: np.ndarray) -> None:
        """Write `array` as the part's array `name` (each name once)."""
        if name in self.layout:
            raise ValueError(f"{name}: already in the index file")
        array = np.ascontiguousarray(array)
        with open(self.scratch, "r+b") as data:
            data.seek(HEAD + self._size)
            data.write(memoryview(array).cast("B"))  # type: ignore[arg-type]  # an ndarray is a buffer: no copy
        self.layout[name] = (array.dtype.str, self._size, int(array.size))
        self._size += _padded(array.nbytes)

    def array(self, name: str) -> np.ndarray:
        """The array `name`, read back into memory."""
        dtype, offset, count = self.layout[name]
        return np.fromfile(self.scratch, dtype=np.dtype(dtype), count=count, offset=HEAD + offset)

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: self.array(name) for name in self.layout}

    def take(self, other: "IndexFile", skip: tuple[str, ...] = ()) -> None:
        """Add every array of `other` but `skip`, a block at a time; `other`'s scratch file goes."""
        try:
            with open(other.scratch, "rb") as source, open(self.scratch, "r+b") as data:
                for name, (dtype, offset, count) in other.layout.items():
                    if name in skip:
                        continue
                    if name in self.layout:
                        raise ValueError(f"{name}: already in the index file")
                    source.seek(HEAD + offset)
                    data.seek(HEAD + self._size)
                    _copy(source, data, np.dtype(dtype).itemsize * count)
                    self.layout[name] = (dtype, self._size, count)
                    self._size += _padded(np.dtype(dtype).itemsize * count)
        finally:
            other.discard()

    def finish(self, generation: int, rows: int, meta: dict[str, Any]) -> None:
        """The part's file at `target`, whole: the header written into the scratch file's room
        for it and the scratch file renamed into place (copied, header first, where the header
        outgrows its room or the rename cannot be done)."""
        if self.target is None:
            raise ValueError("an index file without a target cannot be finished")
        target = Path(self.target)
        header = json.dumps(
            {"format": FORMAT, "generation": generation, "rows": rows, "layout": self.layout, "meta": meta}
        ).encode()
        room = HEAD - len(MAGIC) - 8
        try:
            if len(header) <= room:  # the arrays start at HEAD, where `load_index` finds them
                with open(self.scratch, "r+b") as data:
                    data.write(MAGIC + room.to_bytes(8, "little") + header.ljust(room))
                    data.truncate(HEAD + self._size)
                # a scratch file is its owner's alone; the part's file reads as the one it replaces
                os.chmod(self.scratch, target.stat().st_mode & 0o777 if target.exists() else 0o644)
                try:
                    os.replace(self.scratch, target)
                    return
                except OSError:  # another file system: copied below
                    pass
            self._copy_to(target, header)
        finally:
            self.discard()

    def _copy_to(self, target: Path, header: bytes) -> None:
        start = -(-(len(MAGIC) + 8 + len(header)) // ALIGN) * ALIGN
        partial = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
        try:
            with open(partial, "wb") as out, open(self.scratch, "rb") as data:
                out.write(MAGIC + len(header).to_bytes(8, "little") + header)
                out.write(b"\0" * (start - out.tell()))
                data.seek(HEAD)
                shutil.copyfileobj(data, out, 1 << 20)
                out.truncate(start + self._size)
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)

    def discard(self) -> None:
        """The scratch file goes (nothing, once finished)."""
        Path(self.scratch).unlink(missing_ok=True)


class HeldArrays:
    """The arrays of an index part held in memory (a dict), taking them as an `IndexFile` does."""

    def __init__(self, arrays: dict[str, np.ndarray]):
        self.arrays = arrays
        self._added: set[str] = set()

    def __contains__(self, name: str) -> bool:
        return name in self._added

    def add(self, name: str, array: np.ndarray) -> None:
        self.arrays[name] = array
        self._added.add(name)


def _padded(size: int) -> int:
    return -(-size // ALIGN) * ALIGN


def _copy(source: Any, target: Any, size: int) -> None:
    while size > 0:
        block = source.read(min(size, 1 << 20))
        if not block:
            raise OSError("a scratch file of the columnar index ends early")
        target.write(block)
        size -= len(block)

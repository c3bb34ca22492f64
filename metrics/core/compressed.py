"""Reading compressed resource files with a cap on what they expand to.

Phrase tables, language models, training texts and word vectors may arrive as
``.xz``, ``.gz``, ``.bz2`` or single-member ``.zip`` files, and most of them are
uploaded by users. A few hundred kilobytes of ``xz`` can expand to gigabytes (a
580 KB ``.arpa.xz`` became 3 GiB in ``var/cache/``), so every decompressing read
goes through :func:`open_resource`, which streams and counts the decompressed
bytes and raises :class:`DecompressedTooLarge` past :data:`DECOMPRESSED_MAX_BYTES`
— never after the whole thing is in memory or on disk.

The standard library's decompressors do the work; this module only counts
(they have no output cap of their own for a whole stream). The Django setting
``PARAEVAL_DECOMPRESSED_MAX_BYTES`` is copied into :data:`DECOMPRESSED_MAX_BYTES`
when the metrics app starts; outside Django the environment variable of the
same name, else 1 GiB, applies.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import zipfile
from pathlib import Path
from typing import IO, cast

__all__ = [
    "COMPRESSED_SUFFIXES",
    "DECOMPRESSED_MAX_BYTES",
    "DecompressedTooLarge",
    "open_resource",
    "copy_decompressed",
]

#: Suffixes :func:`open_resource` decompresses.
COMPRESSED_SUFFIXES = (".xz", ".gz", ".bz2", ".zip")
#: Most bytes one compressed file may expand to (see the module doc).
DECOMPRESSED_MAX_BYTES = int(os.environ.get("PARAEVAL_DECOMPRESSED_MAX_BYTES") or 1024**3)


class DecompressedTooLarge(ValueError):
    """A compressed file expands beyond the cap (a ``ValueError``: resource loaders report it)."""


class _CappedReader(io.RawIOBase):
    """A raw binary stream that counts what it hands out and refuses to go past ``limit``."""

    def __init__(self, raw: io.BufferedIOBase | IO[bytes], limit: int, name: str, closers: tuple = ()):
        self._raw, self._limit, self._name, self._closers = raw, limit, name, closers
        self._count = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        # Never ask for more than one byte past the cap, so a bomb is stopped at cap + 1
        # (and ``read()`` of everything cannot fill memory first).
        room = self._limit - self._count + 1
        data = self._raw.read(room if size is None or size < 0 else max(1, min(size, room)))
        self._count += len(data)
        if self._count > self._limit:
            raise DecompressedTooLarge(
                f"{self._name} expands to more than {self._limit:,} bytes (PARAEVAL_DECOMPRESSED_MAX_BYTES)"
            )
        return data

    def readall(self) -> bytes:
        chunks = []
        for block in iter(lambda: self.read(1 << 20), b""):
            chunks.append(block)
        return b"".join(chunks)

    def readinto(self, buffer) -> int:
        data = self.read(len(buffer))
        memoryview(buffer)[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            try:
                self._raw.close()
                for c in self._closers:
                    c.close()
            finally:
                super().close()


def _open_zip_member(path: Path, limit: int):
    zf = zipfile.ZipFile(path)
    members = [i for i in zf.infolist() if not i.is_dir()]
    if len(members) != 1:
        zf.close()
        raise ValueError(f"{path.name}: a .zip resource must hold exactly one file, it holds {len(members)}")
    if members[0].file_size > limit:  # the declared size; the stream is counted as well
        zf.close()
        raise DecompressedTooLarge(
            f"{path.name} expands to {members[0].file_size:,} bytes; the limit is {limit:,} "
            "(PARAEVAL_DECOMPRESSED_MAX_BYTES)"
        )
    return zf.open(members[0]), (zf,)


def open_resource(
    path: str | os.PathLike,
    mode: str = "rt",
    *,
    encoding: str = "utf-8",
    newline: str | None = None,
    max_bytes: int | None = None,
) -> IO:
    """Open ``path`` for reading, decompressing by suffix (see :data:`COMPRESSED_SUFFIXES`).

    ``mode`` is ``"rt"`` (text, ``encoding``/``newline`` as for :func:`open`) or
    ``"rb"``. Compressed files are capped at ``max_bytes`` decompressed bytes
    (default :data:`DECOMPRESSED_MAX_BYTES`, read at call time); reading past it
    raises :class:`DecompressedTooLarge`. Plain files are opened as they are.
    """
    if mode not in ("rt", "rb"):
        raise ValueError("open_resource reads only: mode 'rt' or 'rb'")
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in COMPRESSED_SUFFIXES:
        return open(path, "rb") if mode == "rb" else open(path, encoding=encoding, newline=newline)
    limit = DECOMPRESSED_MAX_BYTES if max_bytes is None else int(max_bytes)
    closers: tuple = ()
    raw: io.BufferedIOBase
    if suffix == ".xz":
        raw = lzma.open(path, "rb")
    elif suffix == ".gz":
        raw = gzip.open(path, "rb")
    elif suffix == ".bz2":
        raw = bz2.open(path, "rb")
    else:
        raw, closers = _open_zip_member(path, limit)
    capped = _CappedReader(raw, limit, path.name, closers)
    if mode == "rb":
        # A RawIOBase is a binary file object at run time; unbuffered: readers (pandas,
        # copy_decompressed) ask for large blocks.
        return cast(IO[bytes], capped)
    return io.TextIOWrapper(io.BufferedReader(capped, buffer_size=1 << 16), encoding=encoding, newline=newline)


def copy_decompressed(src: str | os.PathLike, dst: IO[bytes], *, max_bytes: int | None = None) -> int:
    """Stream the decompressed bytes of ``src`` into ``dst``; return how many.

    Raises :class:`DecompressedTooLarge` once more than the cap was produced;
    the caller deletes what it wrote (see ``lm._decompressed_arpa``).
    """
    n = 0
    with open_resource(src, "rb", max_bytes=max_bytes) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            dst.write(block)
            n += len(block)
    return n

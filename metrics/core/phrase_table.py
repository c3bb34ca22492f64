"""Pivot phrase tables for PEM (Liu, Dahlmeier & Ng 2010, §4.1–4.2).

A phrase table holds joint counts c(e, f) of an English phrase e and a pivot
(foreign) phrase f, extracted from a word-aligned parallel text with the
consistent-phrase heuristic of Koehn et al. (2003) — here the one shared
implementation, :func:`metrics.core.phrases.extract_phrase_pairs`. From the
counts (DESIGN.md §4, PEM eq. 1):

    N(e)      = Σ_f c(e, f)
    Pr(f | e) = c(e, f) / N(e)
    Pr(e)     = N(e) / Σ_e' N(e')

File format (the *phrase-table resource*): UTF-8 TSV, optionally ``.gz`` or
``.xz``, header ``english<TAB>pivot<TAB>count``, one (e, f) pair a line, phrases
as tokens joined by single spaces, counts positive numbers. English phrases are
Porter-stemmed (PEM §4) when the table was built with ``stem_english=True``, the
default; pivot phrases are lower-cased tokens. No quoting: a ``"`` is a token.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import lzma
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metrics.core.base.resources import file_fingerprint
from metrics.core.compressed import COMPRESSED_SUFFIXES, DecompressedTooLarge, open_resource
from metrics.core.phrases import extract_phrase_pairs
from metrics.core.text import stem

__all__ = [
    "HEADER",
    "PhraseTable",
    "build_phrase_table",
    "write_phrase_table",
    "read_moses_phrase_table",
]

HEADER = ("english", "pivot", "count")


def _open_text(path: Path, mode: str):
    if mode == "r":
        # Reads decompress through the cap (compressed.open_resource): tables are uploaded.
        return open_resource(path, "rt", newline="")
    if path.suffix == ".gz":
        return gzip.open(path, mode + "t", encoding="utf-8", newline="")
    if path.suffix == ".xz":
        return lzma.open(path, mode + "t", encoding="utf-8", newline="")
    return open(path, mode, encoding="utf-8", newline="")


@dataclass(frozen=True, eq=False)
class PhraseTable:
    """An immutable phrase table indexed for fast lookups.

    Entries are stored column-wise, sorted by (English, pivot) phrase: one dict
    maps each English phrase
    to its row, and ``offsets[row]:offsets[row + 1]`` is its slice of the
    ``pivot``/``count`` columns. A lookup is one dict probe plus a slice.
    """

    english: tuple[str, ...]
    offsets: np.ndarray  # int64, len(english) + 1
    pivot: np.ndarray  # object (str), one per entry
    count: np.ndarray  # float64, one per entry
    n_e: np.ndarray  # float64, N(e) per English phrase
    total: float  # Σ_e N(e)
    index: Mapping[str, int]
    sha256: str = ""

    # -- construction -------------------------------------------------------
    @classmethod
    def from_counts(cls, counts: Mapping[tuple[str, str], float], *, sha256: str = "") -> PhraseTable:
        """Build a table from a mapping ``(english, pivot) -> c(e, f)`` (counts > 0)."""
        if not counts:
            raise ValueError("a phrase table needs at least one entry")
        es = np.fromiter((e for e, _ in counts), dtype=object, count=len(counts))
        fs = np.fromiter((f for _, f in counts), dtype=object, count=len(counts))
        cs = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        return cls._from_columns(es, fs, cs, sha256=sha256)

    @classmethod
    def _from_columns(cls, es: np.ndarray, fs: np.ndarray, cs: np.ndarray, *, sha256: str) -> PhraseTable:
        if not np.all(np.isfinite(cs)) or np.any(cs <= 0):
            raise ValueError("phrase-table counts must be finite and positive")
        for col, name in ((es, "english"), (fs, "pivot")):
            if any(not s for s in col):
                raise ValueError(f"phrase table has an empty {name} phrase")
        # Files written by write_phrase_table are already in (english, pivot)
        # order; checking that is linear, while sorting millions of strings is not.
        strictly_sorted = bool(np.all((es[1:] > es[:-1]) | ((es[1:] == es[:-1]) & (fs[1:] > fs[:-1]))))
        if not strictly_sorted:
            order = np.lexsort((fs, es))
            es, fs, cs = es[order], fs[order], cs[order]
            dup = (es[1:] == es[:-1]) & (fs[1:] == fs[:-1])
            if dup.any():
                k = int(np.flatnonzero(dup)[0])
                raise ValueError(f"phrase table lists ({es[k]!r}, {fs[k]!r}) twice")
        starts = np.flatnonzero(np.r_[True, es[1:] != es[:-1]])
        offsets = np.r_[starts, len(es)].astype(np.int64)
        english = tuple(es[starts].tolist())
        n_e = np.add.reduceat(cs, starts)
        return cls(
            english=english,
            offsets=offsets,
            pivot=fs,
            count=cs,
            n_e=n_e,
            total=float(n_e.sum()),
            index={e: i for i, e in enumerate(english)},
            sha256=sha256,
        )

    @classmethod
    def load(cls, path: str | Path) -> PhraseTable:
        """Read a phrase-table resource (plain, ``.gz`` or ``.xz`` TSV; see module doc).

        Raises ``ValueError`` naming the file for a wrong header, a malformed
        line, a non-positive count or a repeated (e, f) pair.
        """
        import pandas as pd

        path = Path(path)
        with _open_text(path, "r") as fh:
            header = fh.readline().rstrip("\r\n").split("\t")
        if tuple(header) != HEADER:
            raise ValueError(f"{path}: header must be {'<TAB>'.join(HEADER)!r}, got {'<TAB>'.join(header)!r}")
        # Compressed tables are decompressed through the size cap, not by pandas itself.
        compressed = path.suffix.lower() in COMPRESSED_SUFFIXES
        with open_resource(path, "rb") if compressed else contextlib.nullcontext(path) as source:
            try:
                df = pd.read_csv(
                    source,
                    sep="\t",
                    quoting=csv.QUOTE_NONE,
                    dtype={"english": object, "pivot": object, "count": np.float64},
                    keep_default_na=False,  # "nan", "null", "NA" are words here
                    na_filter=False,
                    engine="c",
                    encoding="utf-8",
                    compression=None,
                )
            except DecompressedTooLarge:
                raise
            except (ValueError, pd.errors.ParserError) as exc:
                raise ValueError(f"{path}: not a phrase table ({exc})") from None
        if df.empty:
            raise ValueError(f"{path}: phrase table has no entries")
        try:
            return cls._from_columns(
                df["english"].to_numpy(dtype=object),
                df["pivot"].to_numpy(dtype=object),
                df["count"].to_numpy(dtype=np.float64),
                sha256=file_fingerprint(path),
            )
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None

    @property
    def fingerprint(self) -> str:
        """Hash recorded in metric signatures (SHA-256 prefix of the file; "" when built in memory)."""
        return self.sha256 or "in-memory"

    # -- lookups ------------------------------------------------------------
    def __len__(self) -> int:
        """Number of (e, f) entries."""
        return len(self.count)

    def __contains__(self, english: str) -> bool:
        return english in self.index

    @property
    def n_english(self) -> int:
        """Number of distinct English phrases."""
        return len(self.english)

    def count_e(self, english: str) -> float:
        """N(e) = Σ_f c(e, f); 0.0 for a phrase not in the table."""
        i = self.index.get(english)
        return 0.0 if i is None else float(self.n_e[i])

    def prob_e(self, english: str) -> float:
        """Pr(e) = N(e) / Σ_e' N(e') (PEM eq. 1); 0.0 for a phrase not in the table."""
        return self.count_e(english) / self.total

    def translations(self, english: str) -> list[tuple[str, float]]:
        """[(f, Pr(f | e))] with Pr(f | e) = c(e, f) / N(e), most probable first
        (ties by pivot phrase). Empty for a phrase not in the table.
        """
        i = self.index.get(english)
        if i is None:
            return []
        lo, hi = self.offsets[i], self.offsets[i + 1]
        n = self.n_e[i]
        out = list(zip(self.pivot[lo:hi].tolist(), (self.count[lo:hi] / n).tolist()))
        out.sort(key=lambda fp: (-fp[1], fp[0]))
        return out

    def max_english_len(self) -> int:
        """Longest English phrase, in tokens."""
        return max((e.count(" ") + 1 for e in self.english), default=0)


def write_phrase_table(counts: Mapping[tuple[str, str], float], path: str | Path) -> Path:
    """Write ``(english, pivot) -> count`` as a phrase-table resource (sorted, deterministic).

    Compression follows the suffix (``.gz``, ``.xz``, else plain). Phrases may not
    contain tabs or newlines; integral counts are written without a decimal point.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _open_text(path, "w") as fh:
        fh.write("\t".join(HEADER) + "\n")
        for (e, f), c in sorted(counts.items()):
            if any(ch in s for s in (e, f) for ch in "\t\n\r"):
                raise ValueError(f"phrase ({e!r}, {f!r}) contains a tab or newline")
            if not (c > 0 and math.isfinite(c)):
                raise ValueError(f"count of ({e!r}, {f!r}) must be positive, got {c!r}")
            cs = str(int(c)) if float(c).is_integer() else repr(float(c))
            fh.write(f"{e}\t{f}\t{cs}\n")
    return path


def build_phrase_table(
    pairs: Iterable[tuple[Sequence[str], Sequence[str], Iterable[tuple[int, int]]]],
    *,
    max_len_english: int = 4,
    max_len_pivot: int = 4,
    stem_english: bool = True,
    lowercase_pivot: bool = True,
) -> Counter:
    """Joint counts c(e, f) over a word-aligned parallel corpus (PEM §4.1).

    ``pairs`` yields ``(english_tokens, pivot_tokens, links)`` with 0-based links
    ``(i, j)`` from English token i to pivot token j. Every consistent phrase pair
    (:func:`metrics.core.phrases.extract_phrase_pairs`, Koehn et al. 2003) with an
    English side of at most ``max_len_english`` tokens and a pivot side of at most
    ``max_len_pivot`` adds 1 to c(e, f), as in Moses's extraction. English tokens
    are Porter-stemmed (PEM: "English is Porter-stemmed"; :func:`text.stem`, which
    also lower-cases) unless ``stem_english`` is false (then only lower-cased, as
    :func:`metrics.core.pivot.prepare_tokens` does); pivot tokens are
    lower-cased unless ``lowercase_pivot`` is false (case carries no meaning in
    the pivot representation, and sentence-initial capitals would split counts).
    Returns a ``Counter`` keyed by ``(english_phrase, pivot_phrase)`` strings.
    """
    counts: Counter = Counter()
    for english, pivot, links in pairs:
        e_toks = [stem(t) for t in english] if stem_english else [t.lower() for t in english]
        f_toks = [t.lower() for t in pivot] if lowercase_pivot else list(pivot)
        for p in extract_phrase_pairs(links, len(e_toks), len(f_toks), max_len=max_len_english, max_len2=max_len_pivot):
            counts[(" ".join(e_toks[p.start1 : p.end1]), " ".join(f_toks[p.start2 : p.end2]))] += 1
    return counts


def read_moses_phrase_table(
    path: str | Path,
    *,
    english_side: str = "source",
    stem_english: bool = True,
    lowercase_pivot: bool = True,
) -> Counter:
    """Joint counts c(e, f) from a Moses phrase table (``src ||| tgt ||| scores ||| alignment ||| counts``).

    Columns used: the two phrases and the *counts* field (the fifth), which
    Moses writes as ``c(tgt) c(src) c(src, tgt)``; the joint count
    c(e, f) = c(src, tgt) is its third number, whichever side is English
    (``english_side``: ``"source"`` or ``"target"``). The scores and alignment
    fields are ignored. A table without the counts field is refused: its scores
    give Pr(f | e) but not N(e), and PEM's segmentation needs Pr(e) (eq. 1), which
    cannot be recovered from conditional probabilities alone. Note that a pruned
    Moses table yields N(e) summed over the pairs it kept.

    English tokens are Porter-stemmed (``stem_english``; else lower-cased) and pivot tokens
    lower-cased (``lowercase_pivot``); pairs that become equal are summed.
    Raises ``ValueError`` naming the line for malformed input.
    """
    if english_side not in ("source", "target"):
        raise ValueError("english_side must be 'source' or 'target'")
    path = Path(path)
    counts: Counter = Counter()
    with _open_text(path, "r") as fh:
        for lineno, line in enumerate(fh, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = [x.strip() for x in line.split("|||")]
            if len(fields) < 5 or not fields[4]:
                raise ValueError(
                    f"{path}:{lineno}: no counts field (5th '|||' field); PEM needs joint counts, "
                    "which a Moses table without counts does not have"
                )
            src, tgt = fields[0], fields[1]
            if not src or not tgt:
                raise ValueError(f"{path}:{lineno}: empty phrase")
            try:
                nums = [float(x) for x in fields[4].split()]
            except ValueError:
                raise ValueError(f"{path}:{lineno}: counts field {fields[4]!r} is not numeric") from None
            if len(nums) < 3:
                raise ValueError(f"{path}:{lineno}: counts field needs c(tgt) c(src) c(src,tgt)")
            joint = nums[2]
            if not (joint > 0 and math.isfinite(joint)):
                continue  # a pair Moses never observed jointly contributes nothing
            e, f = (src, tgt) if english_side == "source" else (tgt, src)
            e_toks = e.split()
            e = " ".join(stem(t) if stem_english else t.lower() for t in e_toks)
            f = " ".join(t.lower() if lowercase_pivot else t for t in f.split())
            counts[(e, f)] += joint  # type: ignore[assignment]  # typeshed's Counter holds ints; these are float counts
    if not counts:
        raise ValueError(f"{path}: no phrase pairs")
    return counts

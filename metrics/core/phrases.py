"""Consistent phrase-pair extraction from a word alignment.

One implementation serves ParaMetric scoring (Callison-Burch et al. 2008, §3),
the reference paraphrases of alignment groups, and the PEM phrase-table builder
(Liu et al. 2010, §4.1), so that all three agree on what a phrase pair is.

Definition (Och & Ney 2004, as restated in ParaMetric §3 and DESIGN.md §4).
Given sentences e1 (length I) and e2 (length J) and links A ⊆ [0, I) × [0, J),
the span pair ([i1, i2], [j1, j2]) is *consistent* when

* at least one link lies inside: ∃(i, j) ∈ A with i1 ≤ i ≤ i2 and j1 ≤ j ≤ j2, and
* no link leaves it: ∀(i, j) ∈ A, i1 ≤ i ≤ i2  ⇔  j1 ≤ j ≤ j2.

Unaligned words at the edges of a span are therefore allowed, which is why one
alignment yields more pairs than it has links. Spans here are half-open,
``(start, end)``, so ``tokens[start:end]`` is the phrase.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = ["PhrasePair", "extract_phrase_pairs", "phrase_pairs_text"]


class PhrasePair(NamedTuple):
    """A consistent span pair, half-open on both sides."""

    start1: int
    end1: int
    start2: int
    end2: int


def extract_phrase_pairs(
    links: Iterable[tuple[int, int]],
    len1: int,
    len2: int,
    *,
    max_len: int = 5,
    max_len2: int | None = None,
) -> list[PhrasePair]:
    """Every consistent span pair with phrases of at most ``max_len`` words.

    ``links`` are 0-based ``(i, j)`` pairs (sure and possible alike: the caller
    chooses which links count). ``max_len`` bounds the phrase in sentence 1 and
    ``max_len2`` (default: ``max_len``) the phrase in sentence 2. Links outside
    the sentences raise ``ValueError``. Output order is deterministic (by start1,
    end1, start2, end2).

    Runs the standard extraction loop (Koehn 2010, Alg. 5.1): for each span of
    sentence 1, the tightest span of sentence 2 covering its links, checked for
    outgoing links, then widened over unaligned words of sentence 2.
    """
    max2 = max_len if max_len2 is None else max_len2
    if max_len < 1 or max2 < 1:
        raise ValueError("max_len must be at least 1")
    rows: list[list[int]] = [[] for _ in range(len1)]
    col_min = [len1] * len2  # smallest i linked to column j (len1: none)
    col_max = [-1] * len2
    for i, j in links:
        if not (0 <= i < len1 and 0 <= j < len2):
            raise ValueError(f"link ({i}, {j}) lies outside a {len1}×{len2} grid")
        rows[i].append(j)
        if i < col_min[j]:
            col_min[j] = i
        if i > col_max[j]:
            col_max[j] = i
    aligned2 = [col_max[j] >= 0 for j in range(len2)]

    out: list[PhrasePair] = []
    for i1 in range(len1):
        jmin, jmax = len2, -1
        for i2 in range(i1, min(len1, i1 + max_len)):
            for j in rows[i2]:
                if j < jmin:
                    jmin = j
                if j > jmax:
                    jmax = j
            if jmax < 0:
                continue  # no link inside yet
            if jmax - jmin + 1 > max2:
                break  # adding rows only widens the target span
            # No link may leave: every column in [jmin, jmax] must link only
            # to rows inside [i1, i2].
            if any(col_min[j] < i1 or col_max[j] > i2 for j in range(jmin, jmax + 1) if aligned2[j]):
                continue
            js = jmin
            while js >= 0 and (js == jmin or not aligned2[js]):
                je = jmax
                while je < len2 and (je == jmax or not aligned2[je]) and je - js + 1 <= max2:
                    out.append(PhrasePair(i1, i2 + 1, js, je + 1))
                    je += 1
                js -= 1
    out.sort()
    return out


def phrase_pairs_text(
    tokens1: Sequence[str],
    tokens2: Sequence[str],
    links: Iterable[tuple[int, int]],
    *,
    max_len: int = 5,
    max_len2: int | None = None,
    drop_identical: bool = True,
    casefold: bool = True,
) -> set[tuple[str, str]]:
    """The set of (phrase1, phrase2) strings of :func:`extract_phrase_pairs`.

    Phrases are tokens joined by single spaces. ParaMetric drops pairs whose two
    phrases are identical (``f ≠ e`` in its PP definition): with ``casefold``
    (the default) "And" and "and" count as identical, and phrases are returned
    lower-cased so that set comparisons across sentences are case-blind.
    """
    pairs: set[tuple[str, str]] = set()
    for p in extract_phrase_pairs(links, len(tokens1), len(tokens2), max_len=max_len, max_len2=max_len2):
        a = " ".join(tokens1[p.start1 : p.end1])
        b = " ".join(tokens2[p.start2 : p.end2])
        if casefold:
            a, b = a.lower(), b.lower()
        if drop_identical and a == b:
            continue
        pairs.add((a, b))
    return pairs

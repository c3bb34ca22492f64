"""Agreement on error spans between judges: character- and word-level F1, and κ over words.

Two judges A and B annotated the same item. Each position of the item — every code point
of the candidate and of the original, plus one position for the candidate's ``[missing]``
marker — is *marked* by a judge when one of the judge's spans covers it.

* **Character F1** (the span-overlap measure of MQM/ESA span studies, e.g. Kocmi et al.
  2024 and the WMT QE word-level task's F1 over marked units): with M_A and M_B the sets of
  positions marked, pooled over the items both annotated,

      P = |M_A ∩ M_B| / |M_B|,  R = |M_A ∩ M_B| / |M_A|,  F1 = 2 |M_A ∩ M_B| / (|M_A| + |M_B|),

  A taken as the reference (F1 is symmetric; P and R swap). Undefined (NaN) when neither
  judge marked anything.
* **Word F1**: the same over word units (:mod:`metrics.core.spans.words`); a word is marked
  when a span covers any of its characters (the ``[missing]`` marker is one word).
* **κ over words**: Cohen's (1960) κ between the two judges' labels of every word of the
  shared items, pooled — binary (marked or not), and by severity (none / minor / major,
  a word's label the most severe span covering it), through
  :func:`metrics.core.stats.agreement.kappa.cohen_kappa` (equal to scikit-learn's).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Any

import numpy as np

from metrics.core.stats.agreement.kappa import cohen_kappa
from metrics.core.stats.results import jsonable

from .model import ErrorSpan, EsaAnnotation
from .words import word_offsets

__all__ = ["SpanAgreement", "char_labels", "pairwise_span_agreement", "span_agreement", "word_labels"]

_LEVEL = {"minor": 1, "major": 2}


def char_labels(spans: Sequence[ErrorSpan], text: str, *, side: str) -> np.ndarray:
    """0 / 1 (minor) / 2 (major) for each code point of ``text`` on ``side``, the most severe span.

    On the candidate side one more position follows the text: the ``[missing]`` marker.
    Spans reaching past the text are clipped.
    """
    n = len(text) + (1 if side == "candidate" else 0)
    out = np.zeros(n, dtype=np.int8)
    for s in spans:
        if s.side != side:
            continue
        level = _LEVEL[s.severity]
        if s.missing:
            out[len(text)] = max(out[len(text)], level)
        else:
            seg = out[s.start : min(s.end, len(text))]
            np.maximum(seg, level, out=seg)
    return out


def word_labels(spans: Sequence[ErrorSpan], text: str, *, side: str) -> np.ndarray:
    """The label of each word unit of ``text`` (the most severe of its characters), plus the marker."""
    chars = char_labels(spans, text, side=side)
    words = [int(chars[s:e].max()) if e > s else 0 for s, e in word_offsets(text)]
    if side == "candidate":
        words.append(int(chars[len(text)]))
    return np.asarray(words, dtype=np.int8)


@dataclass(frozen=True)
class SpanAgreement:
    """Agreement of judge ``a`` (the reference) and judge ``b`` over ``n_items`` shared items."""

    judge_a: str
    judge_b: str
    n_items: int
    char_precision: float
    char_recall: float
    char_f1: float
    word_f1: float
    word_kappa: float
    word_kappa_severity: float

    def to_dict(self) -> dict[str, Any]:
        return jsonable(asdict(self))  # jsonable(self) would call to_dict again


def _f1(a: np.ndarray, b: np.ndarray) -> tuple[float, float, float]:
    ma, mb = a > 0, b > 0
    both = float((ma & mb).sum())
    na, nb = float(ma.sum()), float(mb.sum())
    p = both / nb if nb else math.nan
    r = both / na if na else math.nan
    f = 2 * both / (na + nb) if na + nb else math.nan
    return p, r, f


def _kappa(a: np.ndarray, b: np.ndarray, labels) -> float:
    if a.size == 0:
        return math.nan
    return float(cohen_kappa(a.astype(float), b.astype(float), labels=labels).statistic)


def span_agreement(
    a: Sequence[EsaAnnotation], b: Sequence[EsaAnnotation], texts: Mapping[str, tuple[str, str]]
) -> SpanAgreement:
    """Agreement of two judges' annotations, paired by ``item`` (the module docstring).

    ``texts`` maps an item to its ``(original, candidate)`` texts. Items only one judge
    annotated are left out.
    """
    by_item_b = {x.item: x for x in b}
    chars_a, chars_b, words_a, words_b = [], [], [], []
    shared = 0
    for x in a:
        y = by_item_b.get(x.item)
        if y is None:
            continue
        shared += 1
        original, candidate = texts[x.item]
        for side, text in (("candidate", candidate), ("original", original)):
            chars_a.append(char_labels(x.spans, text, side=side))
            chars_b.append(char_labels(y.spans, text, side=side))
            words_a.append(word_labels(x.spans, text, side=side))
            words_b.append(word_labels(y.spans, text, side=side))
    judge_a = a[0].judge if a else ""
    judge_b = b[0].judge if b else ""
    if not shared:
        nan = math.nan
        return SpanAgreement(judge_a, judge_b, 0, nan, nan, nan, nan, nan, nan)
    ca, cb = np.concatenate(chars_a), np.concatenate(chars_b)
    wa, wb = np.concatenate(words_a), np.concatenate(words_b)
    p, r, f = _f1(ca, cb)
    _, _, wf = _f1(wa, wb)
    return SpanAgreement(
        judge_a,
        judge_b,
        shared,
        p,
        r,
        f,
        wf,
        _kappa((wa > 0).astype(int), (wb > 0).astype(int), [0, 1]),
        _kappa(wa, wb, [0, 1, 2]),
    )


def pairwise_span_agreement(
    annotations: Sequence[EsaAnnotation], texts: Mapping[str, tuple[str, str]], *, include_controls: bool = False
) -> tuple[SpanAgreement, ...]:
    """:func:`span_agreement` for every pair of judges who share an item (judges sorted by id).

    Controls are left out unless ``include_controls``. A judge's later annotation of an
    item replaces an earlier one.
    """
    by_judge: dict[str, dict[str, EsaAnnotation]] = {}
    for x in annotations:
        if x.is_control and not include_controls:
            continue
        by_judge.setdefault(x.judge, {})[x.item] = x
    out = []
    for ja, jb in combinations(sorted(by_judge), 2):
        if by_judge[ja].keys() & by_judge[jb].keys():
            out.append(span_agreement(list(by_judge[ja].values()), list(by_judge[jb].values()), texts))
    return tuple(out)

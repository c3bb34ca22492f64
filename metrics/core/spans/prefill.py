"""Pre-filled error spans from paraeval's word aligner, and how many of them judges kept.

ESA with pre-filled spans (ESA^AI; Zouhar, Kocmi & Sachan, NAACL 2025) shows the judge
proposed spans to accept, edit or delete; it cut the time per span from 71 s to 31 s.
paraeval's proposals come from its own monolingual word aligner
(:func:`metrics.core.aligner.align`), so they need no model and no network:

* the original and the candidate are split into word units (:mod:`metrics.core.spans.words`:
  paraeval's tokens, grapheme clusters kept whole: combining marks in their word, a ZWJ
  emoji sequence, a flag, a skin tone one unit) and aligned;
* a candidate word that no link touches (sure or possible) is a **possible addition**: a
  span on the candidate side, category ``addition``;
* an original word that no link touches is a **possible omission**: a span on the original
  side, category ``omission``;
* consecutive unaligned words make one span, from the first word's start to the last
  word's end (the spaces between them included); an aligned word or a punctuation token
  ends the run, and punctuation is never proposed (a dropped comma is rarely an error of
  meaning) unless ``include_punctuation``;
* every proposal gets the severity ``severity`` (minor by default: the judge decides).

**Proposals of a given shape** (:func:`spans_like`). When a study's proposals come from a
file (another tool's), an item the file cannot name (a control or an attention item, built
by paraeval at opening) must get proposals that look like the file's, or the vocabulary of
what is proposed tells it apart. :func:`span_shapes` reduces one item's proposals to their
*shapes* (side, severity, category, the ``[missing]`` marker, how many words); such an item
gets the shapes of one item of the file drawn at random (with its none as often as the file
has none), placed on its own texts: each shape on as many words, unaligned words first (the
aligner's runs, as a tool flags words that differ), then any others, never two on one word.

What was proposed and what the judge kept are both stored (:class:`~.model.EsaAnnotation`'s
``proposed`` and ``spans``), so that :func:`proposal_outcomes` can report the proposals'
precision and :func:`prefill_timing` the time per item with and without proposals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from metrics.core.aligner import align
from metrics.core.alignment.model import Alignment
from metrics.core.stats.results import jsonable

from .model import ErrorSpan, EsaAnnotation
from .words import word_offsets, word_texts

__all__ = [
    "PrefillTiming",
    "Proposal",
    "ProposalOutcomes",
    "SpanShape",
    "prefill_timing",
    "proposal_order",
    "proposal_outcomes",
    "propose_spans",
    "span_shapes",
    "spans_like",
]


@dataclass(frozen=True)
class Proposal:
    """Proposed spans, with the word units and the alignment they came from."""

    spans: tuple[ErrorSpan, ...]
    original_words: tuple[tuple[int, int], ...]
    candidate_words: tuple[tuple[int, int], ...]
    alignment: Alignment


def _is_punct(word: str) -> bool:
    return not any(ch.isalnum() for ch in word)


def _runs(text: str, words: Sequence[tuple[int, int]], aligned: set[int], include_punctuation: bool):
    run: list[tuple[int, int]] = []
    for k, (s, e) in enumerate(words):
        if k in aligned or (not include_punctuation and _is_punct(text[s:e])):
            if run:
                yield run[0][0], run[-1][1]
            run = []
            continue
        run.append((s, e))
    if run:
        yield run[0][0], run[-1][1]


def propose_spans(
    original: str,
    candidate: str,
    *,
    severity: str = "minor",
    include_punctuation: bool = False,
    use_wordnet: bool = True,
    embeddings=None,
) -> Proposal:
    """Spans proposed for one item from the alignment of ``original`` and ``candidate`` (module docstring).

    Offsets are code points of the texts as given. ``use_wordnet``/``embeddings`` are passed
    to the aligner (synonyms and similar words count as aligned: fewer, better proposals).
    Deterministic: the same texts and parameters give the same spans.
    """
    ow, cw = word_offsets(original), word_offsets(candidate)
    alignment = align(
        word_texts(original),  # a unit's text without the space a cluster may begin with
        word_texts(candidate),
        use_wordnet=use_wordnet,
        embeddings=embeddings,
    )
    links = alignment.sure | alignment.possible
    aligned_o = {i for i, _ in links}
    aligned_c = {j for _, j in links}
    spans = [
        ErrorSpan("candidate", s, e, severity, "addition")
        for s, e in _runs(candidate, cw, aligned_c, include_punctuation)
    ]
    spans += [
        ErrorSpan("original", s, e, severity, "omission")
        for s, e in _runs(original, ow, aligned_o, include_punctuation)
    ]
    return Proposal(tuple(spans), ow, cw, alignment)


def proposal_order(span: ErrorSpan) -> tuple[bool, bool, int, int]:
    """The order proposals are stored and served in: candidate spans by start, then the
    original's, the ``[missing]`` marker last; whatever their source, so that the order of a
    list tells nothing of where it came from."""
    return span.missing, span.side != "candidate", span.start, span.end


@dataclass(frozen=True)
class SpanShape:
    """A proposal without its place: what :func:`spans_like` reproduces on other texts."""

    side: str
    severity: str
    category: str | None
    missing: bool
    words: int  # word units the span covers (at least 1; 0 for the [missing] marker)


def span_shapes(spans: Sequence[ErrorSpan], original: str, candidate: str) -> tuple[SpanShape, ...]:
    """The shape of each of one item's proposals (``original``/``candidate``: its texts)."""
    texts = {"original": original, "candidate": candidate}
    out = []
    for span in spans:
        if span.missing:
            out.append(SpanShape(span.side, span.severity, span.category, True, 0))
            continue
        words = sum(1 for s, e in word_offsets(texts[span.side]) if s < span.end and span.start < e)
        out.append(SpanShape(span.side, span.severity, span.category, False, max(1, words)))
    return tuple(out)


def spans_like(shapes: Sequence[SpanShape], original: str, candidate: str, *, seed: int) -> tuple[ErrorSpan, ...]:
    """Spans of ``shapes`` placed on ``original``/``candidate`` (the module docstring), in
    :func:`proposal_order`.

    Each shape of a side takes ``words`` consecutive word units of that side (punctuation
    skipped), starting preferably at an unaligned word of :func:`propose_spans`'s alignment,
    else at any word, in an order drawn with ``seed``; words already taken are not taken
    again, and a shape that no longer fits takes one word, or is left out when every word is
    taken. A ``[missing]`` shape is the marker (once). Deterministic for a seed.
    """
    rng = random.Random(seed)
    proposal = propose_spans(original, candidate)
    links = proposal.alignment.sure | proposal.alignment.possible
    sides = {
        "candidate": (candidate, proposal.candidate_words, {j for _, j in links}),
        "original": (original, proposal.original_words, {i for i, _ in links}),
    }
    out: list[ErrorSpan] = []
    for side, (text, units, aligned) in sides.items():
        words = [k for k, (s, e) in enumerate(units) if not _is_punct(text[s:e])]
        loose = [n for n, k in enumerate(words) if k not in aligned]
        set_loose = set(loose)
        rest = [n for n in range(len(words)) if n not in set_loose]
        rng.shuffle(loose)
        rng.shuffle(rest)
        starts = loose + rest
        taken: set[int] = set()
        for shape in shapes:
            if shape.side != side or shape.missing:
                continue
            for width in dict.fromkeys((shape.words, 1)):
                at = next((n for n in starts if n + width <= len(words) and not taken & set(range(n, n + width))), None)
                if at is not None:
                    taken |= set(range(at, at + width))
                    first, last = units[words[at]], units[words[at + width - 1]]
                    out.append(ErrorSpan(side, first[0], last[1], shape.severity, shape.category))
                    break
    marker = next((s for s in shapes if s.missing), None)
    if marker is not None:
        out.append(ErrorSpan.missing_marker(marker.severity, marker.category))
    return tuple(sorted(out, key=proposal_order))


def _overlap(a: ErrorSpan, b: ErrorSpan) -> bool:
    if a.side != b.side or a.missing != b.missing:
        return False
    return a.missing or (a.start < b.end and b.start < a.end)


def _same_place(a: ErrorSpan, b: ErrorSpan) -> bool:
    return (a.side, a.start, a.end, a.missing) == (b.side, b.start, b.end, b.missing)


@dataclass(frozen=True)
class ProposalOutcomes:
    """What judges did with proposed spans, pooled over annotations that had proposals.

    A proposal is *accepted* when a kept span has its exact place (side, start, end; the
    severity may have changed: ``severity_changed`` counts those), *edited* when it was not
    kept as is but a kept span overlaps it, *deleted* otherwise. ``added`` counts kept spans
    that overlap no proposal (the judge's own).

    precision (strict) = accepted / proposed; precision (lenient) = (accepted + edited) /
    proposed; recall = kept spans overlapping a proposal / kept spans.
    """

    n_annotations: int
    proposed: int
    accepted: int
    severity_changed: int
    edited: int
    deleted: int
    added: int
    kept: int

    @property
    def precision_strict(self) -> float:
        return self.accepted / self.proposed if self.proposed else math.nan

    @property
    def precision_lenient(self) -> float:
        return (self.accepted + self.edited) / self.proposed if self.proposed else math.nan

    @property
    def recall(self) -> float:
        return (self.kept - self.added) / self.kept if self.kept else math.nan

    def to_dict(self) -> dict[str, Any]:
        return jsonable(
            {
                **{
                    k: getattr(self, k)
                    for k in (
                        "n_annotations",
                        "proposed",
                        "accepted",
                        "severity_changed",
                        "edited",
                        "deleted",
                        "added",
                        "kept",
                    )
                },
                "precision_strict": self.precision_strict,
                "precision_lenient": self.precision_lenient,
                "recall": self.recall,
            }
        )


def proposal_outcomes(annotations: Sequence[EsaAnnotation]) -> ProposalOutcomes:
    """Pool :class:`ProposalOutcomes` over the annotations whose ``proposed`` is not empty."""
    n = proposed = accepted = changed = edited = deleted = added = kept = 0
    for a in annotations:
        if not a.proposed:
            continue
        n += 1
        proposed += len(a.proposed)
        kept += len(a.spans)
        for p in a.proposed:
            exact = [k for k in a.spans if _same_place(p, k)]
            if exact:
                accepted += 1
                changed += exact[0].severity != p.severity
            elif any(_overlap(p, k) for k in a.spans):
                edited += 1
            else:
                deleted += 1
        added += sum(1 for k in a.spans if not any(_overlap(p, k) for p in a.proposed))
    return ProposalOutcomes(n, proposed, accepted, changed, edited, deleted, added, kept)


@dataclass(frozen=True)
class PrefillTiming:
    """Seconds per annotation and per kept span, with and without proposals.

    ``saved`` = mean seconds without − mean seconds with, and its percentile bootstrap
    interval (``scipy.stats.bootstrap``, the two groups resampled independently).
    """

    n_with: int
    n_without: int
    seconds_with: float
    seconds_without: float
    seconds_per_span_with: float
    seconds_per_span_without: float
    saved: float
    saved_low: float
    saved_high: float
    confidence_level: float

    def to_dict(self) -> dict[str, Any]:
        return jsonable(asdict(self))  # jsonable(self) would call to_dict again


def prefill_timing(
    annotations: Sequence[EsaAnnotation], *, n_boot: int = 2000, confidence_level: float = 0.95, seed: int = 0
) -> PrefillTiming:
    """Compare annotation time with proposals (``proposed`` not empty) and without.

    Only annotations with ``seconds`` count. Seconds per span = Σ seconds / Σ kept spans of
    the group, as Zouhar et al. (2025) report time per span. NaN where a group is empty.
    """
    from scipy import stats as sps

    timed = [a for a in annotations if a.seconds is not None and math.isfinite(a.seconds)]
    with_p = np.array([a.seconds for a in timed if a.proposed], dtype=float)
    without = np.array([a.seconds for a in timed if not a.proposed], dtype=float)
    spans_with = sum(len(a.spans) for a in timed if a.proposed)
    spans_without = sum(len(a.spans) for a in timed if not a.proposed)
    mean_w = float(with_p.mean()) if with_p.size else math.nan
    mean_wo = float(without.mean()) if without.size else math.nan
    low = high = math.nan
    if with_p.size >= 2 and without.size >= 2 and n_boot > 0:
        res = sps.bootstrap(
            (without, with_p),
            lambda x, y, axis=-1: x.mean(axis=axis) - y.mean(axis=axis),
            n_resamples=n_boot,
            confidence_level=confidence_level,
            method="percentile",
            rng=np.random.default_rng(seed),
            vectorized=True,
        )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
    return PrefillTiming(
        int(with_p.size),
        int(without.size),
        mean_w,
        mean_wo,
        float(with_p.sum() / spans_with) if spans_with else math.nan,
        float(without.sum() / spans_without) if spans_without else math.nan,
        mean_wo - mean_w,
        low,
        high,
        confidence_level,
    )

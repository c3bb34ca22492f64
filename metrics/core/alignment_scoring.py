"""Scores for word alignments and for paraphrases read off them (ParaMetric).

Three families, all micro-averaged over a corpus by summing small per-pair
count vectors first (the sacrebleu way: bootstrap and paired tests re-sum them):

1. **Link scores** (Och & Ney 2003, §5): precision, recall, F1 and the alignment
   error rate of a system alignment A against a gold alignment with sure links S
   and possible links P ⊇ S.
2. **ParaMetric** (Callison-Burch, Cohn & Lapata 2008, §3–§4): AlignPrec and
   AlignRecall over consistent phrase pairs, and LB-Precision and Rel-Recall of
   a paraphrase table against the reference paraphrases of alignment groups.
3. **Annotator agreement** on the same sentence pairs: link F1/AER with one
   annotator as gold, and Cohen's kappa over grid cells.

Interpretations of the paper that are ours (each repeated where it applies):

* *Which links a phrase pair respects.* PP is computed from all links, sure and
  possible (``use_possible=True``): ParaMetric's annotators drew a single kind
  of link, and a possible link still says the words correspond.
* *What is compared in AlignPrec/AlignRecall.* PP(e1, e2, A) is a set of phrase
  pairs *in the sentence pair*, so we compare **span pairs** (token positions):
  the two occurrences of "the" in a sentence are different phrases, and a system
  that links the wrong one has not found the manual phrase pair. Pairs whose two
  phrases read the same (case-folded, the ``f ≠ e`` constraint) are dropped by
  their text.
* *Reference paraphrases, LB-Precision, Rel-Recall.* For a group G (a key
  sentence s aligned with several others), paraREF(p, s, G) is every phrase that
  PP pairs with p in G's manual alignments, as case-folded text. The phrases
  evaluated are all phrases p ∈ s of at most ``max_len`` words (the paper's
  Σ_{p∈s}); paraM(p, s) is the table's paraphrases of p (probability ≥
  ``min_prob``, at most ``max_len`` words — the only ones the reference can
  contain — and not identical to p). Counting is over unique (phrase,
  paraphrase) pairs within a group ("unique paraphrases" in §7.3), summed over
  groups as the paper's Σ_{<s,G>∈C} does, so a pair posited in two groups counts
  in each group's context.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from metrics.core.alignment import Alignment, FormatError
from metrics.core.phrases import PhrasePair, extract_phrase_pairs
from metrics.core.tabular import split_lines
from metrics.core.text import TOKENIZER_VERSION, tokenize

__all__ = [
    "AgreementScores",
    "AlignCounts",
    "AlignScores",
    "LengthScores",
    "LinkCounts",
    "LinkScores",
    "ParaphraseScores",
    "ParaphraseTable",
    "align_counts",
    "align_scores",
    "annotator_agreement",
    "cell_labels_kappa",
    "link_counts",
    "link_scores",
    "normalize_phrase",
    "paraphrase_scores",
    "paraphrase_table_from_alignments",
    "phrase_pairs",
    "read_paraphrase_table",
    "reference_paraphrases",
]

#: Bump when a definition below changes; part of every ParaMetric signature.
SCORING_VERSION = "1"


def _ratio(num: float, den: float) -> float:
    # An empty denominator leaves the score undefined: NaN, never a made-up 0 or 1.
    return num / den if den else math.nan


def _f1(p: float, r: float) -> float:
    if math.isnan(p) or math.isnan(r):
        return math.nan
    return 2 * p * r / (p + r) if p + r else 0.0


def _plain(obj) -> dict:
    """``asdict`` with NaN turned into ``None`` so that the result is valid JSON."""

    def fix(v):
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v

    return fix(asdict(obj))


def _as_corpus(x: Alignment | Sequence[Alignment]) -> list[Alignment]:
    return [x] if isinstance(x, Alignment) else list(x)


def _paired(gold, test, what_gold: str, what_test: str) -> list[tuple[Alignment, Alignment]]:
    gold, test = _as_corpus(gold), _as_corpus(test)
    if len(gold) != len(test):
        raise ValueError(f"{len(gold)} {what_gold} alignments but {len(test)} {what_test} alignments")
    for k, (g, t) in enumerate(zip(gold, test)):
        if g.has_tokens and t.has_tokens and (g.tokens1, g.tokens2) != (t.tokens1, t.tokens2):
            raise ValueError(f"pair {k}: the {what_gold} and {what_test} alignments are over different tokens")
    return list(zip(gold, test))


def _need_tokens(a: Alignment, k: int, what: str) -> None:
    if not a.has_tokens:
        raise ValueError(f"pair {k}: the {what} alignment has no tokens (phrase pairs need the sentences)")


# =========================================================================== links


@dataclass(frozen=True)
class LinkCounts:
    """Sufficient statistics of the link scores for one pair or a corpus.

    ``n_test`` = |A|, ``n_sure`` = |S|, ``n_possible`` = |P| (P = S ∪ possible),
    ``test_sure`` = |A ∩ S|, ``test_possible`` = |A ∩ P|.
    """

    n_test: int = 0
    n_sure: int = 0
    n_possible: int = 0
    test_sure: int = 0
    test_possible: int = 0

    def __add__(self, other: LinkCounts) -> LinkCounts:
        return LinkCounts(*(a + b for a, b in zip(self._tuple(), other._tuple())))

    def _tuple(self) -> tuple[int, ...]:
        return (self.n_test, self.n_sure, self.n_possible, self.test_sure, self.test_possible)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class LinkScores:
    """Link precision/recall/F1/AER; NaN where a denominator is empty."""

    precision: float
    recall: float
    f1: float
    aer: float
    counts: LinkCounts
    n_pairs: int

    @classmethod
    def from_counts(cls, counts: LinkCounts, n_pairs: int) -> LinkScores:
        """precision = |A∩P|/|A|, recall = |A∩S|/|S|, AER = 1 − (|A∩S| + |A∩P|)/(|A| + |S|)."""
        p = _ratio(counts.test_possible, counts.n_test)
        r = _ratio(counts.test_sure, counts.n_sure)
        aer_den = counts.n_test + counts.n_sure
        aer = 1.0 - (counts.test_sure + counts.test_possible) / aer_den if aer_den else math.nan
        return cls(p, r, _f1(p, r), aer, counts, n_pairs)

    def to_dict(self) -> dict:
        return _plain(self)


def link_counts(gold: Alignment, test: Alignment) -> LinkCounts:
    """Per-pair counts for :func:`link_scores` (Och & Ney 2003, §5).

    S = ``gold.sure``, P = ``gold.sure | gold.possible``, A = every link of
    ``test`` (a system's possible links are still links it proposes).
    """
    s = gold.sure
    p = gold.links
    a = test.links
    return LinkCounts(len(a), len(s), len(p), len(a & s), len(a & p))


def link_scores(gold: Alignment | Sequence[Alignment], test: Alignment | Sequence[Alignment]) -> LinkScores:
    """Micro-averaged link precision, recall, F1 and AER of ``test`` against ``gold``.

    Och & Ney (2003, §5), with S the gold sure links, P = S ∪ gold possible links
    and A the test links, all summed over the corpus before dividing::

        precision = |A∩P| / |A|      recall = |A∩S| / |S|
        F1 = 2·precision·recall / (precision + recall)
        AER = 1 − (|A∩S| + |A∩P|) / (|A| + |S|)

    ``nltk.translate.metrics.alignment_error_rate(S, A, P)`` gives the same AER
    for one pair. Empty denominators give NaN. Pairs must be over the same tokens
    where both sides know them.
    """
    total = LinkCounts()
    pairs = _paired(gold, test, "gold", "test")
    for g, t in pairs:
        total = total + link_counts(g, t)
    return LinkScores.from_counts(total, len(pairs))


# =========================================================================== phrases


def phrase_pairs(
    alignment: Alignment,
    *,
    max_len: int = 5,
    use_possible: bool = True,
    drop_identical: bool = True,
) -> frozenset[PhrasePair]:
    """PP(e1, e2, A) of ParaMetric §3 as half-open span pairs.

    Every span pair of at most ``max_len`` words a side with at least one link
    inside and no link leaving (Och & Ney 2004; extraction by
    :func:`metrics.core.phrases.extract_phrase_pairs`), without the pairs whose
    two phrases are the same case-folded text (ParaMetric's f ≠ e). Links are
    sure ∪ possible, or only sure with ``use_possible=False``.
    """
    if not alignment.has_tokens:
        raise ValueError("phrase pairs need the alignment's tokens")
    t1, t2 = alignment.tokens1, alignment.tokens2
    links = alignment.links if use_possible else alignment.sure
    out = []
    low1 = [t.lower() for t in t1]
    low2 = [t.lower() for t in t2]
    for pp in extract_phrase_pairs(links, len(t1), len(t2), max_len=max_len):
        if drop_identical and low1[pp.start1 : pp.end1] == low2[pp.start2 : pp.end2]:
            continue
        out.append(pp)
    return frozenset(out)


@dataclass(frozen=True)
class AlignCounts:
    """Per-pair or corpus counts: |PP(S)|, |PP(M)| and |PP(S) ∩ PP(M)|."""

    n_system: int = 0
    n_manual: int = 0
    n_common: int = 0

    def __add__(self, other: AlignCounts) -> AlignCounts:
        return AlignCounts(
            self.n_system + other.n_system, self.n_manual + other.n_manual, self.n_common + other.n_common
        )

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class AlignScores:
    """ParaMetric AlignPrec and AlignRecall (and their F1) over a corpus."""

    align_prec: float
    align_recall: float
    f1: float
    counts: AlignCounts
    n_pairs: int
    signature: str

    def to_dict(self) -> dict:
        return _plain(self)


def _signature(name: str, max_len: int, use_possible: bool, extra: str = "") -> str:
    return (
        f"{name}|max_len:{max_len}|links:{'sure+possible' if use_possible else 'sure'}"
        f"{extra}|tok:{TOKENIZER_VERSION}|v:{SCORING_VERSION}"
    )


def align_counts(manual: Alignment, system: Alignment, *, max_len: int = 5, use_possible: bool = True) -> AlignCounts:
    """|PP(e1, e2, S)|, |PP(e1, e2, M)| and their intersection for one sentence pair."""
    pm = phrase_pairs(manual, max_len=max_len, use_possible=use_possible)
    ps = phrase_pairs(system, max_len=max_len, use_possible=use_possible)
    return AlignCounts(len(ps), len(pm), len(ps & pm))


def align_scores(
    manual: Alignment | Sequence[Alignment],
    system: Alignment | Sequence[Alignment],
    *,
    max_len: int = 5,
    use_possible: bool = True,
) -> AlignScores:
    """ParaMetric alignment accuracy (Callison-Burch et al. 2008, §4)::

        AlignPrec   = Σ_C |PP(e1,e2,S) ∩ PP(e1,e2,M)| / Σ_C |PP(e1,e2,S)|
        AlignRecall = Σ_C |PP(e1,e2,S) ∩ PP(e1,e2,M)| / Σ_C |PP(e1,e2,M)|

    over the sentence pairs C, S the system's alignment and M the manual one; PP
    as in :func:`phrase_pairs` (span pairs, identical phrases dropped, at most
    ``max_len`` words). Both alignments need their tokens. NaN when a sum is 0.
    """
    pairs = _paired(manual, system, "manual", "system")
    total = AlignCounts()
    for k, (m, s) in enumerate(pairs):
        _need_tokens(m, k, "manual")
        _need_tokens(s, k, "system")
        total = total + align_counts(m, s, max_len=max_len, use_possible=use_possible)
    p = _ratio(total.n_common, total.n_system)
    r = _ratio(total.n_common, total.n_manual)
    return AlignScores(p, r, _f1(p, r), total, len(pairs), _signature("alignprec", max_len, use_possible))


# =========================================================================== paraphrases


@lru_cache(maxsize=200_000)
def _norm_token(token: str) -> str:
    return " ".join(tokenize(token, lowercase=True))


def _norm_tokens(tokens: Sequence[str]) -> list[str]:
    """Each token normalized on its own; joining a slice with spaces gives exactly
    ``normalize_phrase`` of the slice (the tokenizer never matches across spaces),
    without running the tokenizer once per phrase."""
    return [_norm_token(t) for t in tokens]


def _n_words(phrase: str) -> int:
    return phrase.count(" ") + 1


@lru_cache(maxsize=100_000)
def normalize_phrase(phrase: str) -> str:
    """A phrase as compared everywhere here: our tokens, lower-cased, single spaces.

    Re-tokenizing makes a table written from raw text ("God's love") match the
    tokenized sentences; tokenizing our own output changes nothing.
    """
    return " ".join(tokenize(phrase, lowercase=True))


def reference_paraphrases(
    group: Sequence[Alignment], *, max_len: int = 5, use_possible: bool = True
) -> dict[str, frozenset[str]]:
    """paraREF(p, s, G) for every phrase p of the key sentence s of group G.

    Callison-Burch et al. (2008, §4): paraREF(p1, s1, G) = {p2 : (p1, p2) ∈
    ∪_{<s1,s2,A>∈G} PP(s1, s2, A)}. Every alignment of the group must share
    ``tokens1`` (the key sentence). Phrases are case-folded text; identical
    pairs are dropped; phrases with no paraphrase are absent.
    """
    group = list(group)
    if not group:
        return {}
    key = group[0].tokens1
    out: dict[str, set[str]] = defaultdict(set)
    for k, a in enumerate(group):
        _need_tokens(a, k, "manual")
        if a.tokens1 != key:
            raise ValueError(f"group member {k} does not share the key sentence of member 0")
        links = a.links if use_possible else a.sure
        # Phrases are normalized like table entries (``normalize_phrase``) so that tokens
        # from another tokenizer still match; a token that re-splits may push a phrase
        # past max_len, and the pair then leaves. Identical pairs are dropped by that text.
        n1, n2 = _norm_tokens(a.tokens1), _norm_tokens(a.tokens2)
        for pp in extract_phrase_pairs(links, len(n1), len(n2), max_len=max_len):
            p1 = " ".join(n1[pp.start1 : pp.end1])
            p2 = " ".join(n2[pp.start2 : pp.end2])
            if p1 != p2 and p1.count(" ") < max_len and p2.count(" ") < max_len:
                out[p1].add(p2)
    return {p: frozenset(qs) for p, qs in out.items()}


class ParaphraseTable:
    """Phrase → {paraphrase: probability}, phrases normalized by :func:`normalize_phrase`.

    A paraphrase identical to its phrase is never stored (ParaMetric never counts
    identical pairs). A probability of ``None`` (a table without that column)
    passes every ``min_prob`` filter.
    """

    def __init__(self, entries: Mapping[str, Mapping[str, float | None]] | None = None):
        self._entries: dict[str, dict[str, float | None]] = {}
        for phrase, paras in (entries or {}).items():
            for para, prob in paras.items():
                self.add(phrase, para, prob)

    def add(self, phrase: str, paraphrase: str, probability: float | None = None) -> None:
        """Add one entry; a repeated entry keeps the larger probability."""
        if probability is not None and not (0.0 <= probability <= 1.0):
            raise ValueError(f"probability {probability!r} of {phrase!r} → {paraphrase!r} is not in [0, 1]")
        p, q = normalize_phrase(phrase), normalize_phrase(paraphrase)
        if not p or not q:
            raise ValueError(f"empty phrase in entry {phrase!r} → {paraphrase!r}")
        self._add_normalized(p, q, probability)

    def _add_normalized(self, p: str, q: str, probability: float | None) -> None:
        if p == q:
            return
        paras = self._entries.setdefault(p, {})
        if q not in paras:
            paras[q] = probability
        elif paras[q] is not None:
            # None (no probability column) passes every filter, so it is the larger.
            paras[q] = None if probability is None else max(paras[q], probability)

    def paraphrases(self, phrase: str, *, min_prob: float = 0.0) -> frozenset[str]:
        """The paraphrases of ``phrase`` (normalized) with probability ≥ ``min_prob``."""
        paras = self._entries.get(normalize_phrase(phrase), {})
        return frozenset(q for q, pr in paras.items() if pr is None or pr >= min_prob)

    def _paraphrases_normalized(self, p: str, min_prob: float) -> list[str]:
        paras = self._entries.get(p)
        if not paras:
            return []
        return [q for q, pr in paras.items() if pr is None or pr >= min_prob]

    def __contains__(self, phrase: str) -> bool:
        return normalize_phrase(phrase) in self._entries

    def __len__(self) -> int:
        """Number of (phrase, paraphrase) entries."""
        return sum(len(v) for v in self._entries.values())

    def phrases(self) -> list[str]:
        return sorted(self._entries)

    def items(self) -> Iterable[tuple[str, str, float | None]]:
        """Every entry as (phrase, paraphrase, probability), sorted."""
        for p in sorted(self._entries):
            for q in sorted(self._entries[p]):
                yield p, q, self._entries[p][q]

    def to_tsv(self) -> str:
        """The text format read by :func:`read_paraphrase_table`."""
        return "".join(
            f"{p}\t{q}\n" if pr is None else f"{p}\t{q}\t{pr:.6g}\n" for p, q, pr in self.items()
        )


def read_paraphrase_table(source: str | Iterable[str]) -> ParaphraseTable:
    """Read ``phrase<TAB>paraphrase[<TAB>probability]`` lines (blank lines skipped).

    All-or-nothing: a line with another field count, an empty phrase or a
    probability outside [0, 1] raises :class:`FormatError` naming the line and
    the 1-based field as ``column``.
    """
    table = ParaphraseTable()
    lines = split_lines(source) if isinstance(source, str) else source
    for n, raw in enumerate(lines, 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) not in (2, 3):
            raise FormatError(f"expected 'phrase<TAB>paraphrase[<TAB>probability]', found {len(fields)} fields", n)
        prob = None
        if len(fields) == 3:
            try:
                prob = float(fields[2])
            except ValueError:
                raise FormatError(f"probability {fields[2]!r} is not a number", n, 3) from None
            if not (0.0 <= prob <= 1.0):
                raise FormatError(f"probability {fields[2]!r} is not in [0, 1]", n, 3)
        for col in (1, 2):
            if not normalize_phrase(fields[col - 1]):
                raise FormatError("empty phrase", n, col)
        table.add(fields[0], fields[1], prob)
    return table


def paraphrase_table_from_alignments(
    alignments: Iterable[Alignment], *, max_len: int = 5, use_possible: bool = True
) -> ParaphraseTable:
    """A symmetric paraphrase table read off aligned pairs, by relative frequency.

    Every consistent, non-identical phrase pair (e1, e2) of every alignment is
    counted in both directions; Pr(e2 | e1) = c(e1, e2) / Σ_x c(e1, x), the
    phrase-table estimate of Bannard & Callison-Burch (2005) without the pivot.
    """
    counts: dict[str, Counter] = defaultdict(Counter)
    for k, a in enumerate(alignments):
        _need_tokens(a, k, "")
        low1, low2 = _norm_tokens(a.tokens1), _norm_tokens(a.tokens2)
        links = a.links if use_possible else a.sure
        for pp in extract_phrase_pairs(links, len(low1), len(low2), max_len=max_len):
            p = " ".join(low1[pp.start1 : pp.end1])
            q = " ".join(low2[pp.start2 : pp.end2])
            if p != q:
                counts[p][q] += 1
                counts[q][p] += 1
    table = ParaphraseTable()
    for p, qs in counts.items():
        total = sum(qs.values())
        for q, c in qs.items():
            table._add_normalized(p, q, c / total)
    return table


@dataclass(frozen=True)
class LengthScores:
    """LB-Precision and Rel-Recall restricted to phrases p of ``length`` words."""

    length: int
    n_posited: int
    n_correct: int
    n_reference: int
    lb_precision: float
    rel_recall: float

    def to_dict(self) -> dict:
        return _plain(self)


@dataclass(frozen=True)
class ParaphraseScores:
    """ParaMetric LB-Precision and Rel-Recall of a paraphrase table."""

    lb_precision: float
    rel_recall: float
    n_posited: int
    n_correct: int
    n_reference: int
    n_groups: int
    by_length: tuple[LengthScores, ...]
    signature: str

    def to_dict(self) -> dict:
        return _plain(self)


def _ngrams(tokens: Sequence[str], max_len: int) -> set[str]:
    """Every phrase of at most ``max_len`` tokens, normalized (which may re-split odd tokens)."""
    norm = _norm_tokens(tokens)
    out = set()
    for n in range(1, max_len + 1):
        for i in range(len(norm) - n + 1):
            p = " ".join(norm[i : i + n])
            if _n_words(p) <= max_len:
                out.add(p)
    return out


def paraphrase_scores(
    groups: Sequence[Sequence[Alignment]],
    table: ParaphraseTable,
    *,
    max_len: int = 5,
    min_prob: float = 0.0,
    use_possible: bool = True,
) -> ParaphraseScores:
    """LB-Precision and Rel-Recall (Callison-Burch et al. 2008, §4)::

        LB-Precision = Σ_{<s,G>} Σ_{p∈s} |paraM(p,s) ∩ paraREF(p,s,G)| / Σ_{<s,G>} Σ_{p∈s} |paraM(p,s)|
        Rel-Recall   = Σ_{<s,G>} Σ_{p∈s} |paraM(p,s) ∩ paraREF(p,s,G)| / Σ_{<s,G>} Σ_{p∈s} |paraREF(p,s,G)|

    ``groups``: each a list of manual alignments of the key sentence s (their
    shared ``tokens1``) with the group's other sentences. p ranges over the
    phrases of s of at most ``max_len`` words (as case-folded text, so a phrase
    occurring twice in s counts once); paraM(p, s) = the table's paraphrases of p
    with probability ≥ ``min_prob`` and at most ``max_len`` words (the paper kept
    probabilities ≥ 1%, §7.2); paraREF from :func:`reference_paraphrases`. Counts
    are unique (p, paraphrase) pairs per group, summed over groups (156 correct
    of 230 posited → LB-Precision .68 in §7.3). The precision is a lower bound
    because the reference lists are incomplete; the recall is relative to them.
    ``by_length`` breaks all three counts down by the length of p (Table 3).
    """
    if max_len < 1:
        raise ValueError("max_len must be at least 1")
    cache: dict[str, frozenset[str]] = {}
    posited_by = Counter()
    correct_by = Counter()
    reference_by = Counter()
    groups = list(groups)
    for g, group in enumerate(groups):
        group = list(group)
        if not group:
            raise ValueError(f"group {g} has no alignments")
        try:
            ref = reference_paraphrases(group, max_len=max_len, use_possible=use_possible)
        except ValueError as exc:
            raise ValueError(f"group {g}: {exc}") from None
        for p, qs in ref.items():
            reference_by[_n_words(p)] += len(qs)
        for p in _ngrams(group[0].tokens1, max_len):
            posited = cache.get(p)
            if posited is None:
                # Common phrases recur in many groups and may have thousands of entries:
                # filter each phrase's list once per call.
                posited = frozenset(q for q in table._paraphrases_normalized(p, min_prob) if q.count(" ") < max_len)
                cache[p] = posited
            if not posited:
                continue
            n = _n_words(p)
            posited_by[n] += len(posited)
            correct_by[n] += len(posited & ref.get(p, frozenset()))
    by_length = tuple(
        LengthScores(
            n,
            posited_by[n],
            correct_by[n],
            reference_by[n],
            _ratio(correct_by[n], posited_by[n]),
            _ratio(correct_by[n], reference_by[n]),
        )
        for n in range(1, max_len + 1)
    )
    n_pos, n_cor, n_ref = sum(posited_by.values()), sum(correct_by.values()), sum(reference_by.values())
    return ParaphraseScores(
        _ratio(n_cor, n_pos),
        _ratio(n_cor, n_ref),
        n_pos,
        n_cor,
        n_ref,
        len(groups),
        by_length,
        _signature("lbprec", max_len, use_possible, f"|min_prob:{min_prob:g}"),
    )


# =========================================================================== agreement


@dataclass(frozen=True)
class AgreementScores:
    """Agreement of two annotators who aligned the same sentence pairs.

    ``link``: annotator B's links scored with annotator A as gold (AER is not
    symmetric; swap the arguments for the other view). ``kappa``: Cohen's kappa
    over every grid cell labelled none / sure / possible; ``kappa_linked``: the
    same with two labels, linked / unlinked. ``observed`` is the share of cells
    given the same three-way label.
    """

    link: LinkScores
    kappa: float
    kappa_linked: float
    observed: float
    n_cells: int
    n_pairs: int

    def to_dict(self) -> dict:
        return _plain(self)


def cell_labels_kappa(confusion: Sequence[Sequence[int]]) -> float:
    """Cohen's (1960) kappa from a square confusion matrix of label counts.

    κ = (p_o − p_e) / (1 − p_e), p_o = Σ_k C_kk / N, p_e = Σ_k (row_k / N)(col_k / N);
    NaN when p_e = 1 (both raters used one and the same label throughout), as
    ``sklearn.metrics.cohen_kappa_score`` does.
    """
    k = len(confusion)
    n = sum(sum(row) for row in confusion)
    if n == 0:
        return math.nan
    po = sum(confusion[x][x] for x in range(k)) / n
    rows = [sum(confusion[x]) / n for x in range(k)]
    cols = [sum(confusion[y][x] for y in range(k)) / n for x in range(k)]
    pe = sum(r * c for r, c in zip(rows, cols))
    if pe >= 1.0:
        return math.nan
    return (po - pe) / (1.0 - pe)


def annotator_agreement(a: Alignment | Sequence[Alignment], b: Alignment | Sequence[Alignment]) -> AgreementScores:
    """Link scores (A as gold) and Cohen's kappa over grid cells for two annotators.

    Every cell (i, j) of every pair's len1 × len2 grid is one rated unit, labelled
    0 none, 1 sure, 2 possible. Only linked cells are visited: the none/none count
    is the grid size minus the cells either annotator linked, so long sentences
    cost nothing extra. Needs the tokens (the grid size) of every pair.
    """
    pairs = _paired(a, b, "first annotator's", "second annotator's")
    confusion = [[0] * 3 for _ in range(3)]
    total = LinkCounts()
    n_cells = 0
    for k, (x, y) in enumerate(pairs):
        if not (x.has_tokens or y.has_tokens):
            raise ValueError(f"pair {k}: kappa over grid cells needs the tokens (the grid size)")
        len1, len2 = (x if x.has_tokens else y).shape
        n_cells += len1 * len2
        total = total + link_counts(x, y)

        def label(al: Alignment, cell) -> int:
            return 1 if cell in al.sure else 2 if cell in al.possible else 0

        touched = x.links | y.links
        for cell in touched:
            confusion[label(x, cell)][label(y, cell)] += 1
        confusion[0][0] += len1 * len2 - len(touched)
    binary = [
        [confusion[0][0], confusion[0][1] + confusion[0][2]],
        [confusion[1][0] + confusion[2][0], sum(confusion[r][c] for r in (1, 2) for c in (1, 2))],
    ]
    observed = _ratio(sum(confusion[i][i] for i in range(3)), n_cells)
    return AgreementScores(
        LinkScores.from_counts(total, len(pairs)),
        cell_labels_kappa(confusion),
        cell_labels_kappa(binary),
        observed,
        n_cells,
        len(pairs),
    )

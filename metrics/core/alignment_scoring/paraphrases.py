"""Paraphrase tables from alignments and scores of candidate paraphrases against them."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from metrics.core.alignment.model import Alignment, FormatError
from metrics.core.phrases import extract_phrase_pairs
from metrics.core.tabular import split_lines
from metrics.core.text import tokenize

from ._shared import need_tokens, plain, ratio, score_signature

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
        t1, t2 = need_tokens(a, k, "manual")
        if a.tokens1 != key:
            raise ValueError(f"group member {k} does not share the key sentence of member 0")
        links = a.links if use_possible else a.sure
        # Phrases are normalized like table entries (``normalize_phrase``) so that tokens
        # from another tokenizer still match; a token that re-splits may push a phrase
        # past max_len, and the pair then leaves. Identical pairs are dropped by that text.
        n1, n2 = _norm_tokens(t1), _norm_tokens(t2)
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
        elif (current := paras[q]) is not None:
            # None (no probability column) passes every filter, so it is the larger.
            paras[q] = None if probability is None else max(current, probability)

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
        return "".join(f"{p}\t{q}\n" if pr is None else f"{p}\t{q}\t{pr:.6g}\n" for p, q, pr in self.items())


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
        t1, t2 = need_tokens(a, k, "")
        low1, low2 = _norm_tokens(t1), _norm_tokens(t2)
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
        return plain(self)


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
        return plain(self)


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
    posited_by: Counter[int] = Counter()
    correct_by: Counter[int] = Counter()
    reference_by: Counter[int] = Counter()
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
        for p in _ngrams(need_tokens(group[0], 0, "")[0], max_len):  # checked by reference_paraphrases
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
            ratio(correct_by[n], posited_by[n]),
            ratio(correct_by[n], reference_by[n]),
        )
        for n in range(1, max_len + 1)
    )
    n_pos, n_cor, n_ref = sum(posited_by.values()), sum(correct_by.values()), sum(reference_by.values())
    return ParaphraseScores(
        ratio(n_cor, n_pos),
        ratio(n_cor, n_ref),
        n_pos,
        n_cor,
        n_ref,
        len(groups),
        by_length,
        score_signature("lbprec", max_len, use_possible, f"|min_prob:{min_prob:g}"),
    )

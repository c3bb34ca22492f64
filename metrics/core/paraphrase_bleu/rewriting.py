"""The synthetic reference: the reference rewritten with the output's WordNet synonyms that fit (§3)."""

from __future__ import annotations

from dataclasses import dataclass

from metrics.core.text import normalize, tokenize
from metrics.core.wordnet import SynonymTable

from .classifiers import ClassifierBank, context_features

__all__ = ["FUNCTION_WORDS", "Substitution", "SyntheticReference", "synthetic_reference"]


#: Closed-class words: never replaced and never inserted. WordNet lists a few of
#: them as verbs (be, have, do) whose huge synsets ("be, live", "have, give
#: birth") would otherwise rewrite auxiliaries; the paper's examples are all
#: content words.
FUNCTION_WORDS = frozenset(
    """a an the this that these those some any each every no all both either neither such
    i me my mine myself we us our ours ourselves you your yours yourself yourselves thou thee thy thine ye
    he him his himself she her hers herself it its itself they them their theirs themselves
    who whom whose which what whatever whoever whomever
    be am is are was were been being art wast wert
    have has had having hast hath hadst
    do does did done doing doth dost didst
    will would shall should may might must can could ought shalt wilt canst couldest
    and or but nor so yet if then than because as while although though unless until since lest
    of in on at by for with about against between into through during before after above below
    to from up down out off over under again further once upon unto within without toward towards
    not here there when where why how very too also just only own same other
    """.split()
)


def _is_word(token: str) -> bool:
    return any(ch.isalpha() for ch in token)


def _is_content(token: str) -> bool:
    return _is_word(token) and token not in FUNCTION_WORDS


@dataclass(frozen=True)
class Substitution:
    """One accepted replacement in the reference: token ``position`` ``old`` → ``new`` (P(fits) = ``probability``)."""

    position: int
    old: str
    new: str
    probability: float


@dataclass(frozen=True)
class SyntheticReference:
    """The rewritten reference and the substitutions made (empty: ``text`` is the reference verbatim)."""

    text: str
    substitutions: tuple[Substitution, ...]


def _token_spans(text: str) -> tuple[str, list[str], list[tuple[int, int]]]:
    norm = normalize(text)
    toks = tokenize(norm)
    spans, pos = [], 0
    for t in toks:
        start = norm.index(t, pos)
        spans.append((start, start + len(t)))
        pos = start + len(t)
    return norm, toks, spans


def synthetic_reference(
    reference: str,
    output: str,
    *,
    synonyms: SynonymTable,
    bank: ClassifierBank,
    threshold: float = 0.5,
) -> SyntheticReference:
    """Rewrite ``reference`` towards ``output`` (Kauchak & Barzilay 2006, §3; module docstring).

    For each reference word r ∉ W, every output word w ∉ R that is a WordNet
    synonym of r is tested by w's context classifier at r's position; the most
    probable w with P(fits) ≥ ``threshold`` replaces r, in the output's spelling.
    """
    norm, ref_toks, spans = _token_spans(reference)
    ref_low = [t.lower() for t in ref_toks]
    out_toks = tokenize(output)
    surface: dict[str, str] = {}
    for t in out_toks:
        if _is_word(t):
            surface.setdefault(t.lower(), t)
    ref_words = {t for t in ref_low if _is_word(t)}
    out_only = [w for w in surface if w not in ref_words and _is_content(w)]
    subs: list[Substitution] = []
    if out_only:
        for i, r in enumerate(ref_low):
            if not _is_content(r) or r in surface:
                continue
            best: Substitution | None = None
            feats: list[str] | None = None
            r_bases = synonyms.base_forms(r)
            for w in out_only:
                # Inflections of one lemma (has/have, born/borne) are not synonyms.
                if not synonyms.are_synonyms(r, w) or r_bases & synonyms.base_forms(w):
                    continue
                clf = bank.classifier(w)
                if clf is None:
                    continue
                if feats is None:
                    feats = context_features(ref_low, i)
                p = clf.probability(feats)
                if p >= threshold and (best is None or p > best.probability):
                    best = Substitution(i, ref_toks[i], surface[w], p)
            if best is not None:
                subs.append(best)
    if not subs:
        return SyntheticReference(reference, ())
    pieces, last = [], 0
    for s in subs:
        a, b = spans[s.position]
        pieces += [norm[last:a], s.new]
        last = b
    pieces.append(norm[last:])
    return SyntheticReference("".join(pieces), tuple(subs))

# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""BLEU, chrF and TER through sacrebleu's own statistics (Post 2018).

Each segment's statistics are exactly sacrebleu's per-segment sufficient
statistics (``_extract_corpus_statistics``), and scores come from sacrebleu's
``_compute_score_from_stats``, so

* sentence ``bleu`` equals ``sacrebleu.sentence_bleu(P, [X]).score`` (computed
  with ``effective_order=True``, as ``sentence_bleu`` does), and corpus ``bleu``
  equals ``sacrebleu.corpus_bleu(Ps, [Xs]).score`` (``effective_order=False``, as
  ``corpus_bleu`` does) — to the last digit;
* ``chrf`` and ``ter`` equal ``sentence_chrf``/``corpus_chrf`` and
  ``sentence_ter``/``corpus_ter``.

X is the original R (``against=original``, the default: a similarity to the
source, as paraphrase papers report BLEU(P, R)) or the human reference
(``against=reference``). Bootstrap resamples are scored from float32 sums,
exactly as sacrebleu's ``paired_bs`` does, so a paired test gives sacrebleu's
p-value bit for bit for the same seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import sacrebleu
from sacrebleu.metrics.bleu import BLEU as _SacreBLEU
from sacrebleu.metrics.chrf import CHRF as _SacreCHRF
from sacrebleu.metrics.ter import TER as _SacreTER

from metrics.core.base import Metric, MissingReference, Param
from metrics.core.cards import MetricCard
from metrics.core.ngram_counts import ngram_overlap
from metrics.core.registry import register

__all__ = ["SacreBackend", "SacreMetric", "BleuMetric", "ChrfMetric", "TerMetric", "against_texts", "BLEU_PARAMS", "make_bleu",
           "bleu_stat_names", "bleu_ngram_stats"]

_AGAINST = Param(
    "against",
    str,
    "original",
    "score the candidate against the original (R) or the reference column",
    choices=("original", "reference"),
)


def against_texts(
    metric: Metric, originals: list[str], references: list[str | None], against: str
) -> list[str]:
    """The texts a candidate is compared with: the originals, or the references.

    Raises :class:`MissingReference` naming the first segment without one.
    """
    if against == "original":
        return originals
    for i, r in enumerate(references):
        if r is None or not r.strip():
            raise MissingReference(f"metric {metric.slug!r} with against=reference: segment {i} has no reference")
    return list(references)  # type: ignore[arg-type]


class SacreMetric(Metric):
    """A metric backed by a sacrebleu metric object (see the module docstring).

    Subclasses build ``self._corpus`` and ``self._sentence`` (:class:`SacreBackend`
    objects) in ``_check_params``.
    """

    #: Whether sacrebleu's statistics are integer counts (BLEU, chrF) or not (TER).
    _integer_stats = True
    _corpus: SacreBackend
    _sentence: SacreBackend

    @property
    def needs_references(self) -> bool:  # type: ignore[override]
        return self.param_values["against"] == "reference"

    def _segment_stats(self, originals, candidates, references):
        refs = against_texts(self, originals, references, self.param_values["against"])
        return np.asarray(self._corpus.extract_corpus_statistics(candidates, refs), dtype=np.float64)

    def _exact(self, sums: np.ndarray) -> np.ndarray:
        # sacrebleu computes from Python ints; integer statistics summed in
        # float64 are exact, so int64 gives sacrebleu's exact inputs.
        sums = np.asarray(sums, dtype=np.float64)
        return sums.astype(np.int64) if self._integer_stats else sums

    def scores_from_sums(self, sums: np.ndarray) -> np.ndarray:
        """Corpus score of each row of summed statistics (sacrebleu's formula)."""
        return self._corpus.score_many(self._exact(sums))

    def sentence_scores(self, stats: np.ndarray) -> np.ndarray:
        """Sentence score of each row (sacrebleu's sentence-level formula)."""
        return self._sentence.score_many(self._exact(stats))

    def scores_from_resampled_sums(self, sums: np.ndarray) -> np.ndarray:
        """Scores from float32 sums, as sacrebleu's ``paired_bs`` computes them."""
        return self._corpus.score_many(np.asarray(sums, dtype=np.float64).astype(np.float32))

    def signature_extra(self) -> dict[str, str]:
        return {"sacrebleu": self._corpus.signature()}


def _make_fast_13a():
    """sacrebleu's ``13a`` tokenizer, with its first (per-character) rule done by ``str.translate``.

    ``Tokenizer13a`` applies four regex substitutions; the first pads every
    character of one ASCII class with spaces and matches at almost every
    position, which makes ``re.sub`` with a template the hot spot of BLEU. A
    translate table built from sacrebleu's own compiled pattern does the same
    replacement in C; the other three rules are done as lookarounds with literal
    replacements (below), or with sacrebleu's own compiled patterns where those
    could differ. Equality with sacrebleu is tested on the whole Bible and edge cases.
    """
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    rules = TokenizerRegexp()._re
    first, _ = rules[0]
    # The class is ASCII-only: check every ASCII character against the pattern itself.
    table = {c: f" {chr(c)} " for c in range(128) if first.fullmatch(chr(c))}
    rest = rules[1:]
    # Rules 2-4 insert spaces around "." and "," next to a non-digit and after a
    # digit before "-"; their templates (\\1 \\2) make re call a Python function
    # per match. The same insertions as lookarounds with literal replacements run
    # in C — equal whenever no two of ".," are adjacent (then no match can start
    # inside the previous one); lines with such a pair take sacrebleu's rules.
    expected = [(r"([^0-9])([\.,])", r"\1 \2 "), (r"([\.,])([^0-9])", r" \1 \2"), (r"([0-9])(-)", r"\1 \2 ")]
    literal = None
    if [(rx.pattern, repl) for rx, repl in rest] == expected:
        import re

        literal = [
            (re.compile(r"(?<=[^0-9])\."), " . "), (re.compile(r"(?<=[^0-9]),"), " , "),
            (re.compile(r"\.(?=[^0-9])"), " . "), (re.compile(r",(?=[^0-9])"), " , "),
            (re.compile(r"(?<=[0-9])-"), " - "),
        ]
        adjacent = re.compile(r"[.,][.,]").search

    def tokenize_13a(line: str) -> str:
        line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
        if "&" in line:
            line = line.replace("&quot;", '"').replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">")
        line = f" {line} ".translate(table)
        if literal is not None and not adjacent(line):
            for rx, repl in literal:
                line = rx.sub(repl, line)
        else:
            for rx, repl in rest:
                line = rx.sub(repl, line)
        return " ".join(line.split())

    return tokenize_13a


_FAST_13A = _make_fast_13a()


def _preprocess(bleu: _SacreBLEU):
    """``bleu._preprocess_segment`` (lower-case, rstrip, tokenize), with the fast 13a path."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    if type(bleu.tokenizer) is not Tokenizer13a:
        return bleu._preprocess_segment
    lowercase = bleu.lowercase

    def prep(sent: str) -> str:
        if lowercase:
            sent = sent.lower()
        return _FAST_13A(sent.rstrip())

    return prep


def bleu_ngram_stats(
    bleu: _SacreBLEU, hyps: Sequence[str], refs: Sequence[str], *, ref_cache: dict[str, list[str]] | None = None
) -> np.ndarray:
    """sacrebleu's BLEU segment statistics for one reference per segment, vectorised.

    Row i is exactly ``BLEU._extract_corpus_statistics(hyps, [refs])[i]``:
    ``[hyp_len, ref_len, correct_1..N, total_1..N]`` where, over the tokens of
    sacrebleu's own preprocessing (lower-casing and tokenizer, then
    ``str.split``), correct_n = Σ_g min(c_hyp(g), c_ref(g)) over n-grams g and
    total_n = max(0, hyp_len − n + 1); the counting is
    :func:`metrics.core.ngram_counts.ngram_overlap` instead of one ``Counter``
    per sentence. Each distinct text is tokenized once per call; ``ref_cache``
    (text → tokens of this ``bleu``'s preprocessing) keeps the references'
    tokens across calls, as every system of a leaderboard is scored against
    the same originals.
    """
    cache: dict[str, list[str]] = {}
    prep = _preprocess(bleu)

    def toks(s: str, cache: dict[str, list[str]]) -> list[str]:
        t = cache.get(s)
        if t is None:
            t = cache[s] = prep(s).split()
        return t

    rc = cache if ref_cache is None else ref_cache
    hyp_tokens = [toks(h, cache) for h in hyps]
    ov = ngram_overlap(hyp_tokens, [toks(r, rc) for r in refs], max_n=bleu.max_ngram_order)
    out = np.hstack([ov.hyp_len[:, None], ov.ref_len[:, None], ov.clipped, ov.hyp_total])
    return out.astype(np.float64)


class SacreBackend:
    """A sacrebleu metric object with the two calls paraeval needs."""

    #: Bound of the reference token cache (texts); cleared when passed.
    REF_CACHE_TEXTS = 200_000

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        # paraeval always scores against exactly one text per segment; sacrebleu
        # learns this only when it first sees data, and needs it for signatures.
        obj.num_refs = 1
        #: BLEU: tokens of the references (originals) seen, shared by later
        #: calls — every system is scored against the same originals.
        self._ref_tokens: dict[str, list[str]] = {}

    def extract_corpus_statistics(self, hyps: list[str], refs: list[str]) -> np.ndarray:
        """Per-segment statistics, one reference per segment (BLEU: vectorised, identical)."""
        if isinstance(self.obj, _SacreBLEU):
            if len(self._ref_tokens) > self.REF_CACHE_TEXTS:
                self._ref_tokens.clear()
            return bleu_ngram_stats(self.obj, hyps, refs, ref_cache=self._ref_tokens)
        return np.asarray(self.obj._extract_corpus_statistics(hyps, [refs]), dtype=np.float64)

    def score_of(self, row: Any) -> float:
        # Slices of a list are copies: add-k smoothing mutates its inputs.
        return float(self.obj._compute_score_from_stats(list(row)).score)

    def score_many(self, sums: np.ndarray) -> np.ndarray:
        """``score_of`` of every row of ``sums``, vectorised, bit for bit.

        ``sums`` is float32 (sacrebleu's bootstrap sums its statistics in float32
        and computes the score from those numpy scalars), int64 (Python ints, as
        ``corpus_score`` and the approximate randomization test see them) or
        float64. Each formula below repeats sacrebleu's scalar code step by step
        in that precision — NumPy 2 promotes a Python float against float32 to
        float32 for arrays exactly as for scalars — and takes logarithms and
        exponentials from ``math`` (the same libm sacrebleu calls), so every
        score is the one ``score_of`` returns (tested on random rows of every
        dtype and smoothing). Why not just loop: 1,000 resamples × many systems
        × 11 metrics cost ~0.1 ms each in Python, more than the resampling.
        """
        sums = np.asarray(sums)
        if sums.ndim != 2:
            raise ValueError("score_many needs a 2-d array of summed statistics")
        if sums.shape[0] == 0:
            return np.zeros(0)
        obj = self.obj
        if isinstance(obj, _SacreBLEU):
            return _bleu_many(obj, sums)
        if isinstance(obj, _SacreCHRF) and not obj.eps_smoothing:
            return _chrf_many(obj, sums)
        if isinstance(obj, _SacreTER):
            return _ter_many(sums)
        rows = sums.tolist() if sums.dtype != np.float32 else list(sums)
        return np.array([self.score_of(r) for r in rows], dtype=np.float64)

    def signature(self) -> str:
        return str(self.obj.get_signature().format())


# --------------------------------------------------------------------------- vectorised scores
# sacrebleu computes a score from one row of summed statistics with Python
# scalars; these functions do the same for many rows at once (see
# ``SacreBackend.score_many``). ``ft`` is the precision sacrebleu computes in:
# float32 for float32 sums (its bootstrap), float64 for ints and floats.


def _work_dtype(sums: np.ndarray):
    return np.float32 if sums.dtype == np.float32 else np.float64


def _libm(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` (``math.log``/``math.exp``) of every element, in float64: the C library's
    results, which NumPy's own SIMD loops do not promise on every CPU."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    return np.fromiter(map(fn, flat.tolist()), dtype=np.float64, count=flat.size).reshape(np.shape(x))


def _bleu_many(bleu: _SacreBLEU, sums: np.ndarray) -> np.ndarray:
    """``BLEU.compute_bleu`` (Papineni et al. 2002; sacrebleu's smoothing, Chen & Cherry 2014) per row."""
    import math

    ft = _work_dtype(sums)
    order = bleu.max_ngram_order
    method = bleu.smooth_method
    value = bleu.smooth_value if bleu.smooth_value is not None else _SacreBLEU.SMOOTH_DEFAULTS[method]
    m = sums.shape[0]
    # int(stats[0]), int(stats[1]): the counts are whole numbers in every dtype.
    sys_len = np.trunc(sums[:, 0].astype(np.float64))
    ref_len = np.trunc(sums[:, 1].astype(np.float64))
    correct = sums[:, 2 : 2 + order].astype(ft)
    total = sums[:, 2 + order : 2 + 2 * order].astype(ft)
    with np.errstate(divide="ignore", invalid="ignore"):
        short = sys_len < ref_len
        bp = np.ones(m)
        ratio = np.where(short & (sys_len > 0), 1 - ref_len / np.where(sys_len > 0, sys_len, 1), 0.0)
        bp[short] = np.where(sys_len[short] > 0, _libm(math.exp, ratio[short]), 0.0)
        no_match = ~(correct != 0).any(axis=1)  # `if not any(correct)`, before add-k
        precisions = np.zeros((m, order))
        alive = np.ones(m, dtype=bool)  # the loop has not hit `break` yet
        eff_order = np.full(m, order)
        smooth = np.ones(m)  # smooth_mteval: a power of two, exact in float32
        for n in range(order):
            c, t = correct[:, n], total[:, n]
            if method == "add-k" and n > 0:
                c = c + ft(value)
                t = t + ft(value)
            alive &= t != 0
            if bleu.effective_order:
                eff_order = np.where(alive, n + 1, eff_order)
            zero = c == 0
            p = ft(100.0) * c / t
            if method == "exp":
                smooth = np.where(alive & zero, smooth * 2, smooth)
                p = np.where(zero, ft(100.0) / (smooth.astype(ft) * t), p)
            elif method == "floor":
                assert value is not None  # sacrebleu's floor default is 0.1
                p = np.where(zero, ft(100.0 * value) / t, p)
            else:
                p = np.where(zero, ft(0.0), p)
            precisions[:, n] = np.where(alive, p.astype(np.float64), 0.0)
        logs = np.full((m, order), -9999999999.0)  # my_log(0.0)
        pos = precisions != 0.0
        logs[pos] = _libm(math.log, precisions[pos])
        acc = np.zeros(m)
        for n in range(order):  # Python's left-to-right sum(...)
            acc = np.where(n < eff_order, acc + logs[:, n], acc)
        score = bp * _libm(math.exp, acc / eff_order)
    return np.where(no_match, 0.0, score)


def _chrf_many(chrf: _SacreCHRF, sums: np.ndarray) -> np.ndarray:
    """``CHRF._compute_f_score`` (Popović 2015, without eps smoothing) per row."""
    ft = _work_dtype(sums)
    x = sums.astype(ft)
    m = x.shape[0]
    factor = ft(chrf.beta**2)
    avg_p = np.zeros(m, dtype=ft)
    avg_r = np.zeros(m, dtype=ft)
    eff = np.zeros(m, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(chrf.order):
            n_hyp, n_ref, n_match = x[:, 3 * i], x[:, 3 * i + 1], x[:, 3 * i + 2]
            ok = (n_hyp > 0) & (n_ref > 0)
            # Adding 0 leaves a float exact, so masked sums follow sacrebleu's `+=` order.
            avg_p = avg_p + np.where(ok, n_match / n_hyp, ft(0.0))
            avg_r = avg_r + np.where(ok, n_match / n_ref, ft(0.0))
            eff += ok
        some = eff > 0
        avg_p = np.where(some, avg_p / np.where(some, eff, 1).astype(ft), ft(0.0))
        avg_r = np.where(some, avg_r / np.where(some, eff, 1).astype(ft), ft(0.0))
        nonzero = (avg_p + avg_r) != 0
        score = (ft(1) + factor) * avg_p * avg_r
        score = score / (factor * avg_p + avg_r)
        out = (ft(100) * score).astype(np.float64)
    return np.where(nonzero, out, 0.0)


def _ter_many(sums: np.ndarray) -> np.ndarray:
    """``TER._compute_score_from_stats`` (Snover et al. 2006) per row: 100 · edits / ref length."""
    ft = _work_dtype(sums)
    edits, ref = sums[:, 0].astype(ft), sums[:, 1].astype(ft)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = (ft(100) * (edits / ref)).astype(np.float64)
    return np.where(ref > 0, rate, np.where(edits > 0, 100.0, 0.0))


#: sacrebleu BLEU options shared by ``bleu`` and ``ibleu``.
BLEU_PARAMS: dict[str, Param] = {
    "tokenize": Param("tokenize", str, "13a", "sacrebleu tokenizer", choices=("13a", "none", "intl", "char", "zh")),
    "lowercase": Param("lowercase", bool, False, "lower-case before matching"),
    "smooth_method": Param(
        "smooth_method", str, "exp", "sacrebleu smoothing", choices=("exp", "floor", "add-k", "none")
    ),
    "smooth_value": Param(
        "smooth_value", float, None, "value for floor/add-k smoothing (none: sacrebleu's default)", nullable=True
    ),
    "max_ngram_order": Param("max_ngram_order", int, 4, "largest n-gram order N", minimum=1, maximum=9),
}


def make_bleu(values: Mapping[str, Any], *, effective_order: bool) -> SacreBackend:
    """A sacrebleu ``BLEU`` for the :data:`BLEU_PARAMS` in ``values``.

    ``effective_order=True`` is sentence BLEU (``sacrebleu.sentence_bleu``),
    ``False`` corpus BLEU (``sacrebleu.corpus_bleu``).
    """
    return SacreBackend(
        _SacreBLEU(
            lowercase=values["lowercase"],
            force=True,  # only silences a warning about tokenized input
            tokenize=values["tokenize"],
            smooth_method=values["smooth_method"],
            smooth_value=values["smooth_value"],
            max_ngram_order=values["max_ngram_order"],
            effective_order=effective_order,
        )
    )


def bleu_stat_names(max_order: int, prefix: str = "") -> tuple[str, ...]:
    """Column names of sacrebleu's BLEU statistics."""
    return (
        f"{prefix}sys_len",
        f"{prefix}ref_len",
        *(f"{prefix}correct_{i}" for i in range(1, max_order + 1)),
        *(f"{prefix}total_{i}" for i in range(1, max_order + 1)),
    )


@register
class BleuMetric(SacreMetric):
    """BLEU (Papineni et al. 2002) via sacrebleu.

    BLEU = BP · exp(Σ_{n=1..N} log p_n / N), p_n the clipped n-gram precision,
    BP = min(1, e^{1 − r/c}). Statistics per segment: ``[c, r, correct_1..N,
    total_1..N]``. Sentence scores use sacrebleu's ``effective_order=True`` (as
    ``sentence_bleu``), the corpus score ``effective_order=False`` (as
    ``corpus_bleu``).
    """

    slug = "bleu"
    description = "BLEU (sacrebleu) of the candidate against the original or the reference."
    params = {"against": _AGAINST, **BLEU_PARAMS}
    version = "1"
    card = MetricCard(
        measures="n-gram overlap (n = 1–4) of the candidate with the original or a reference, with a brevity penalty.",
        direction="higher",
        range="0–100",
        needs="original (R) or reference, and candidate (P)",
        reference="Papineni et al. 2002, BLEU (ACL); computed by sacrebleu (Post 2018, WMT)",
        caveats="Against the original (the default) a high BLEU means little rewording: the identical control "
                "scores 100. Choose “against reference” to measure closeness to a reference paraphrase.",
    )
    higher_is_better = True

    def _check_params(self) -> None:
        self._corpus = make_bleu(self.param_values, effective_order=False)
        self._sentence = make_bleu(self.param_values, effective_order=True)
        self.stat_names = bleu_stat_names(self.param_values["max_ngram_order"])

    def signature_extra(self) -> dict[str, str]:
        return {"effective_order": "sentence", "sacrebleu": self._corpus.signature()}


@register
class ChrfMetric(SacreMetric):
    """chrF / chrF++ (Popović 2015, 2017) via sacrebleu.

    chrF_β = (1 + β²)·CHRP·CHRR / (β²·CHRP + CHRR), averaged precision and
    recall over character n-grams (n ≤ ``char_order``) and word n-grams
    (n ≤ ``word_order``; 2 gives chrF++). Statistics per segment:
    ``[hyp, ref, match]`` counts per order.
    """

    slug = "chrf"
    description = "chrF/chrF++ (sacrebleu) of the candidate against the original or the reference."
    params = {
        "against": _AGAINST,
        "char_order": Param("char_order", int, 6, "character n-gram order", minimum=1, maximum=12),
        "word_order": Param("word_order", int, 0, "word n-gram order (2 = chrF++)", minimum=0, maximum=6),
        "beta": Param("beta", int, 2, "recall weight β", minimum=1, maximum=10),
        "lowercase": Param("lowercase", bool, False, "case-insensitive"),
        "whitespace": Param("whitespace", bool, False, "keep whitespace in character n-grams"),
        "eps_smoothing": Param("eps_smoothing", bool, False, "chrF++.py-style epsilon smoothing"),
    }
    version = "1"
    card = MetricCard(
        measures="Character n-gram F-score (chrF; with word n-grams, chrF++) of the candidate against the original "
                 "or a reference.",
        direction="higher",
        range="0–100",
        needs="original (R) or reference, and candidate (P)",
        reference="Popović 2015, chrF: character n-gram F-score for automatic MT evaluation (WMT); computed by sacrebleu",
        caveats="Against the original it measures copying, not quality; it forgives inflection changes that BLEU punishes.",
    )

    def _check_params(self) -> None:
        p = self.param_values
        self._corpus = SacreBackend(
            _SacreCHRF(
                char_order=p["char_order"],
                word_order=p["word_order"],
                beta=p["beta"],
                lowercase=p["lowercase"],
                whitespace=p["whitespace"],
                eps_smoothing=p["eps_smoothing"],
            )
        )
        self._sentence = self._corpus
        orders = p["char_order"] + p["word_order"]
        self.stat_names = tuple(f"{k}_{i}" for i in range(1, orders + 1) for k in ("hyp", "ref", "match"))


@register
class TerMetric(SacreMetric):
    """Translation edit rate (Snover et al. 2006) via sacrebleu.

    TER = 100 · edits / reference length (shifts count as one edit). Lower is
    better. Statistics per segment: ``[edits, ref_length]``.
    """

    slug = "ter"
    description = "TER (sacrebleu) of the candidate against the original or the reference; lower is better."
    params = {
        "against": _AGAINST,
        "normalized": Param("normalized", bool, False, "Tercom normalisation"),
        "no_punct": Param("no_punct", bool, False, "remove punctuation"),
        "asian_support": Param("asian_support", bool, False, "CJK handling"),
        "case_sensitive": Param("case_sensitive", bool, False, "do not lower-case"),
    }
    version = "1"
    card = MetricCard(
        measures="Translation edit rate: word edits (insertions, deletions, substitutions, shifts) needed to turn the "
                 "candidate into the original or reference, per reference word.",
        direction="lower",
        range="0 upwards (can exceed 100 when the candidate is much longer)",
        needs="original (R) or reference, and candidate (P)",
        reference="Snover et al. 2006, A Study of Translation Edit Rate with Targeted Human Annotation (AMTA); computed by sacrebleu",
        caveats="Against the original a high TER means much rewording, which for a paraphrase is not an error.",
    )
    higher_is_better = False
    stat_names = ("edits", "ref_length")
    _integer_stats = False

    def _check_params(self) -> None:
        p = self.param_values
        self._corpus = SacreBackend(
            _SacreTER(
                normalized=p["normalized"],
                no_punct=p["no_punct"],
                asian_support=p["asian_support"],
                case_sensitive=p["case_sensitive"],
            )
        )
        self._sentence = self._corpus


# sacrebleu's version is part of its signature string; expose it for docs.
SACREBLEU_VERSION = sacrebleu.__version__

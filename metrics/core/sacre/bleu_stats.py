"""sacrebleu's BLEU segment statistics, computed fast and bit for bit.

:data:`FAST_13A` is sacrebleu's ``13a`` tokenizer with its hot rules done in C
(``str.translate`` and literal replacements); :func:`bleu_ngram_stats` gives
``BLEU._extract_corpus_statistics`` for one reference per segment, counting
n-grams with :func:`metrics.core.ngram_counts.ngram_overlap`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from sacrebleu.metrics.bleu import BLEU as _SacreBLEU

from metrics.core.ngram_counts import ngram_overlap

__all__ = ["bleu_ngram_stats"]


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
            (re.compile(r"(?<=[^0-9])\."), " . "),
            (re.compile(r"(?<=[^0-9]),"), " , "),
            (re.compile(r"\.(?=[^0-9])"), " . "),
            (re.compile(r",(?=[^0-9])"), " , "),
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


FAST_13A = _make_fast_13a()


def _preprocess(bleu: _SacreBLEU):
    """``bleu._preprocess_segment`` (lower-case, rstrip, tokenize), with the fast 13a path."""
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    if type(bleu.tokenizer) is not Tokenizer13a:
        return bleu._preprocess_segment
    lowercase = bleu.lowercase

    def prep(sent: str) -> str:
        if lowercase:
            sent = sent.lower()
        return FAST_13A(sent.rstrip())

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

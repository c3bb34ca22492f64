"""Phrase tables for pivot F1: loading (cached per file) and re-keying to the metric's tokenisation."""

from __future__ import annotations

import os
from collections import defaultdict
from functools import lru_cache

from metrics.core.phrase_table import PhraseTable
from metrics.core.pivot.network import prepare_tokens
from metrics.core.text import stem as porter_stem


@lru_cache(maxsize=2)
def _load_table_cached(path: str, size: int, mtime_ns: int) -> PhraseTable:
    return PhraseTable.load(path)


def load_table(path) -> PhraseTable:
    # A metric instance lives for one batch, but loading a real table takes
    # seconds: keep the last two tables per process (keyed by file identity, so
    # a rewritten file is reloaded).
    st = os.stat(path)
    return _load_table_cached(str(os.path.realpath(path)), st.st_size, st.st_mtime_ns)


# Share of a table's distinct English words that Porter stemming changes: about 2 % for
# the shipped (stemmed) Bible table — stemming is not quite idempotent — and about
# 40 % for plain English text.  Above RAW_SHARE a table is plain text; below
# STEMMED_SHARE (with at least JUDGE_MIN_WORDS words to judge from) it is stemmed.
RAW_SHARE, STEMMED_SHARE, JUDGE_MIN_WORDS = 0.2, 0.05, 200
_PREPARED: dict[tuple[int, bool], tuple[PhraseTable, PhraseTable]] = {}


def table_for_metric(table: PhraseTable, *, stem: bool) -> PhraseTable:
    """The phrase table with its English side keyed the way :func:`prepare_tokens`
    normalises sentences, or ``ValueError`` saying why the table cannot match.

    A table typed as text (upper case, or — with
    ``stem`` — unstemmed words: more than ``RAW_SHARE`` of its distinct words change
    under Porter stemming) is re-keyed: each English phrase through the metric's own
    tokenisation and stemming, counts of phrases that become equal summed.  PEM §4.3's
    example typed as in the paper ("Hello ," → "Bonjour ,") otherwise matched nothing
    and gave 0.2 instead of 0.38 (issue 12).  A table already keyed is returned as it
    is (re-stemming a stemmed word can change it: "agre" → "agr").  With ``stem``
    false, a table that looks stemmed (under ``STEMMED_SHARE`` of its words change)
    is refused: lower-cased sentences cannot match stemmed keys.
    """
    key = (id(table), stem)
    hit = _PREPARED.get(key)
    if hit is not None and hit[0] is table:
        return hit[1]
    words = {w for e in table.english for w in e.split(" ")}
    # Upper case never survives the metric's normalisation: such a table was typed as text.
    untokenised = any(w != w.lower() for w in words)
    alpha = sorted(w for w in words if any(ch.isalpha() for ch in w))
    # A share needs no census: every k-th word of at most 1,000 (nltk's Porter stemmer
    # takes ~0.1-0.7 ms a word; the shipped table has 10,000 words).
    sample = alpha[:: max(1, len(alpha) // 1000)]
    changed = sum(porter_stem(w) != w for w in sample) / len(sample) if sample else 0.0
    out = table
    if untokenised or (stem and changed > RAW_SHARE):
        counts: dict[tuple[str, str], float] = defaultdict(float)
        for row, english in enumerate(table.english):
            normal = " ".join(prepare_tokens(english, stem=stem))
            if not normal:
                continue
            for k in range(int(table.offsets[row]), int(table.offsets[row + 1])):
                counts[(normal, str(table.pivot[k]))] += float(table.count[k])
        out = PhraseTable.from_counts(dict(counts), sha256=table.sha256)
    elif not stem and len(alpha) >= JUDGE_MIN_WORDS and changed < STEMMED_SHARE:
        raise ValueError(
            f"the phrase table's English side looks Porter-stemmed (stemming changes {changed:.0%} of its words; "
            "plain text: about 40%) but stem is false, so no lower-cased sentence would match it; use stem=true "
            "or a table built with build_phrase_table --no-stem"
        )
    if len(_PREPARED) >= 4:
        _PREPARED.clear()
    _PREPARED[key] = (table, out)
    return out

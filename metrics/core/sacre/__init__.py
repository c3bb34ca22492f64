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

Layout
------
:mod:`.bleu_stats` holds sacrebleu's ``13a`` tokenizer done fast and BLEU's
per-segment statistics (:func:`bleu_ngram_stats`); :mod:`.chrf_stats` chrF's
(character and word n-grams counted in bulk), :mod:`.ter_stats` TER's (sacrebleu's
shift search with rapidfuzz's edit distance where it provably equals the beam's);
:mod:`.backend` wraps a
sacrebleu metric object (:class:`SacreBackend`) and scores many rows of summed
statistics at once, bit for bit; :mod:`.metric` holds :class:`SacreMetric` and the
shared ``against`` option; one module a metric, as in sacrebleu: :mod:`.bleu` (the
registered ``bleu``, and :data:`BLEU_PARAMS` that ``ibleu`` and ``paraphrase-bleu``
share), :mod:`.chrf` and :mod:`.ter`.
Import each name from the module that defines it; this package holds no names of its own.
"""

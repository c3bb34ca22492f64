"""Baseline paraphrase generators: embedding neighbours, WordNet synonyms, Apertium round trip.

These are the machine "systems" of the papers paraeval implements, rebuilt so that a
study can hold paraphrases of visibly different quality:

``pg1``, ``pg2``, ``pg3`` — embedding-neighbour substitution (WEEM4PG paper, §3.2):
    "PG1 is intended to generate paraphrases by replacing words of the original
    text with the first most similar word in the vector space whereas the second
    and the third systems [replace them] with the second and third most similar
    words", using gensim's ``most_similar`` over pre-trained word2vec vectors.
    The paper states nothing more. What it leaves open, and what paraeval does
    (every choice is a parameter, so the literal reading is one flag away):

    * *which words* — the paper says "words"; paraeval replaces **content words**
      only (``content_only=true``): alphabetic tokens of two or more letters that
      are not in :data:`STOPWORDS` (closed-class English words, modern and King
      James: *the*, *shall*, *unto*, *thee*). Replacing *the* or *of* by its
      nearest neighbour makes word salad that no reader would call a paraphrase
      attempt.
    * *names* — capitalised words (*Jesus*, *God*, *LORD*) are kept
      (``keep_names=true``): GloVe is lower-cased and would turn *John* into
      *james*. Without a tagger a sentence-initial name cannot be told from a
      capitalised common word, so the first word of a sentence is kept too.
    * *rate* — the paper replaces every word; ``rate`` (default 1.0) is the
      probability that an eligible word is replaced, drawn from a seeded RNG.
    * *vectors* — GloVe 6B 50-d (400,000 lower-case words) instead of the paper's
      word2vec; ranks are cosine ranks over the whole vocabulary, exactly
      :meth:`metrics.core.embeddings.Embeddings.most_similar`, counting only alphabetic neighbours
      (GloVe's vocabulary also holds punctuation, numbers and URLs, which would
      change the token count of the sentence). The rank-th such neighbour
      replaces the word; a word without that many neighbours is kept.
      ``skip_same_stem=true`` would also skip neighbours that are inflections of
      the word itself (*answered* → *answering*); off by default, as in the paper.
      Neighbours in :data:`OFFENSIVE_WORDS` are skipped too (GloVe has slurs).

``wordnet`` — WordNet synonym substitution: each eligible word is replaced by a
    synonym chosen uniformly at random (seeded) among its WordNet 3.0 single-word
    synonyms in every part of speech, re-inflected like the word (``walked`` →
    ``strolled``; a made-up inflection must be among the 100,000 most frequent
    GloVe words, and lemmas with irregular forms are not inflected by rule).
    Without part-of-speech tags or sense disambiguation this is the unfiltered
    "WordNet" method of Kauchak & Barzilay (2006, Table 7: 63% of its
    substitutions judged correct). WordNet's vulgar senses (*love* ~ *screw*)
    are never used (:data:`OFFENSIVE_WORDS`).

``wordnet-context`` — the same candidates, each kept only where a context model
    accepts it at that position: Kauchak & Barzilay's (2006, §3) contextual
    substitution — "given a context r1 … ri−1 _ ri+1 … rm, we aim to predict
    whether wj can occur in this context at position i" with a per-word binary
    classifier over n-gram and local-collocation features. Among the accepted
    synonyms the one the model scores highest is used (75% correct in their
    Table 7).

``roundtrip-apertium`` — English → Spanish → English through Apertium's rule-based
    ``eng-spa`` and ``spa-eng`` pairs (Debian ``apertium-eng-spa``), run as a
    subprocess with a timeout: the pivot idea behind PEM, as a generator.

Common behaviour
----------------
* Deterministic: a substitution system's output for a sentence depends only on
  the sentence, the parameters and ``seed`` (each sentence gets its own RNG
  seeded from the seed and the sentence text), never on the other sentences of
  the batch. Apertium is deterministic too, but in batch mode its pipeline
  carries state from one line to the next (see
  :class:`ApertiumRoundTripParaphraser`; ``isolate=true`` removes that).
* Substitution systems rewrite words *in place*: punctuation, spacing and every
  untouched word stay exactly as in the (NFC, whitespace-collapsed) input, and a
  replacement takes the casing of the word it replaces (``light`` → ``lamp``,
  ``Light`` → ``Lamp``, ``LIGHT`` → ``LAMP``; capitalised words are only replaced
  with ``keep_names=false``).
* Results are :class:`Paraphrase` objects (text plus the substitutions made); a
  paraphraser's :meth:`Paraphraser.signature` names its slug, parameters, seed and
  resource hashes so that a generated system can be rebuilt.

Layout
------
One paraphraser a module: :mod:`.embedding` (``pg1``–``pg3``), :mod:`.wordnet`,
:mod:`.wordnet_context`, :mod:`.apertium`; the base classes, results and the shared
in-place rewriting are in :mod:`._base`, the slug registry in :mod:`.registry`.
Import each name from the module that defines it; this package holds no names of its own.
"""

"""PEM's pivot-language F1 (Liu, Dahlmeier & Ng 2010, §4.2–4.3; DESIGN.md §4).

Adequacy without lexical overlap: both sentences are mapped into a bag of
*pivot-language* n-grams through a phrase table, and the bags are compared.

1. **Segmentation** (§4.2, eq. 2). The (Porter-stemmed) sentence is split into
   the phrase sequence p_1 … p_n maximising Π Pr(p_i), Pr(p) = N(p) / Σ N, over
   English phrases of at most 4 words found in the table; any single word may be
   a phrase, with N(w) = 0.5 when it is unseen. Solved exactly by dynamic
   programming over log-probabilities.
2. **Confusion network** (§4.3, Fig. 1). Each segment becomes a slot of
   alternative pivot phrases f with Pr(f | e) > ``edge_threshold`` (0.1); an
   unseen word translates to itself with probability 1. Slots in series form
   the network.
3. **Bag of pivot n-grams (BPNG).** Every n-gram (n ≤ ``max_n`` = 4) read along
   a path of the network gets the product of the probabilities of the edges it
   passes through; pivot phrases may be multi-word, so n-grams run across the
   words of consecutive edges. An n-gram's weight W(g) is the sum over all its
   occurrences; weights ≤ ``ngram_threshold`` (0.01) are dropped.
4. **Pivot F1.** precision = Σ_g min(W_R, W_P) / Σ_g W_P,
   recall = Σ_g min(W_R, W_P) / Σ_g W_R, F1 = 2PR / (P + R) = 2 Σmin / (ΣW_P + ΣW_R).

Choices the paper leaves open, made here and recorded in the signature's
version: when the table knows a phrase but none of its translations passes
``edge_threshold``, the slot keeps the single most probable one (so that no
slot is empty and the network stays connected); English tokens are lower-cased
even when not stemmed; an empty bag gives P = R = F1 = 0.

Modules: ``network`` (tokens, segmentation, slots, and the ragged-array indexing the
batch shares), ``bag`` (the bag of one sentence),
``batch`` (the statistics of a batch, vectorised with NumPy, the same floats), ``f1``
(statistics and :func:`pivot_f1`), ``table`` (loading and re-keying phrase tables),
``metric`` (the registered :class:`PivotF1`).
Import each name from the module that defines it; this package holds no names of its own.
"""

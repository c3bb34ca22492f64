"""N-gram language models for PEM's fluency feature (Liu et al. 2010, §4.4).

Estimation: interpolated modified Kneser–Ney smoothing (Chen & Goodman 1998,
*An Empirical Study of Smoothing Techniques for Language Modeling*, TR-10-98,
§3.4 and eq. 26), vectorised with numpy/pandas, written as a standard ARPA file
that KenLM (``import kenlm``) queries. Definitions, for order n and an n-gram
h·w with context h:

* Sentences are padded as ``<s> w1 … wk </s>``; ``<s>`` is only a context.
* Adjusted counts a(·): at the highest order the raw counts c(hw); at lower
  orders the continuation counts N1+(• hw) = |{v : c(v h w) > 0}|, except for
  n-grams that begin with ``<s>``, which nothing can precede and which keep
  their raw counts (as in Chen & Goodman's implementation and KenLM's lmplz).
* Discounts per order from the counts-of-counts n_k = |{g : a(g) = k}|:
  Y = n1 / (n1 + 2 n2), D1 = 1 − 2Y n2/n1, D2 = 2 − 3Y n3/n2, D3+ = 3 − 4Y n4/n3.
  When some n_k is 0 or a discount falls outside (0, k] (tiny corpora), the
  order uses the fallback (0.5, 1.0, 1.5) — KenLM's ``--discount_fallback``
  default — and the model records it in ``fallback_orders``.
* p(w | h) = (a(hw) − D(a(hw))) / Σ_v a(hv) + γ(h) p(w | h′),
  γ(h) = (D1 N1(h•) + D2 N2(h•) + D3+ N3+(h•)) / Σ_v a(hv), h′ = h without its
  first word; N_k(h•) counts the words v with a(hv) = k (3+: ≥ 3).
* The unigram level interpolates with the uniform distribution over the
  predictable vocabulary V (every training word, ``</s>`` and ``<unk>``; not
  ``<s>``): p(w) = (a(w) − D) / Σ a + γ / |V|, so ``<unk>`` gets γ / |V|.

The interpolated model is exactly a backoff model: a seen n-gram stores its
interpolated probability, and a context h stores γ(h) as its backoff weight,
because p(w | h) = γ(h) p(w | h′) for every w unseen after h. That is what the
ARPA file holds (log10; ``<s>`` gets the conventional −99).

Layout
------
:mod:`.estimate` estimates the model (pure Python and pandas, no KenLM);
:mod:`.fluency` caches, loads and scores with KenLM and registers ``lm-fluency``.
Import each name from the module that defines it; this package holds no names of its own.
"""

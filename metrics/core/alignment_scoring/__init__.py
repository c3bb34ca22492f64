"""Scores for word alignments and for paraphrases read off them (ParaMetric).

Three families, all micro-averaged over a corpus by summing small per-pair
count vectors first (the sacrebleu way: bootstrap and paired tests re-sum them):

1. **Link scores** (Och & Ney 2003, §5): precision, recall, F1 and the alignment
   error rate of a system alignment A against a gold alignment with sure links S
   and possible links P ⊇ S.
2. **ParaMetric** (Callison-Burch, Cohn & Lapata 2008, §3–§4): AlignPrec and
   AlignRecall over consistent phrase pairs, and LB-Precision and Rel-Recall of
   a paraphrase table against the reference paraphrases of alignment groups.
3. **Annotator agreement** on the same sentence pairs: link F1/AER with one
   annotator as gold, and Cohen's kappa over grid cells.

Interpretations of the paper that are ours (each repeated where it applies):

* *Which links a phrase pair respects.* PP is computed from all links, sure and
  possible (``use_possible=True``): ParaMetric's annotators drew a single kind
  of link, and a possible link still says the words correspond.
* *What is compared in AlignPrec/AlignRecall.* PP(e1, e2, A) is a set of phrase
  pairs *in the sentence pair*, so we compare **span pairs** (token positions):
  the two occurrences of "the" in a sentence are different phrases, and a system
  that links the wrong one has not found the manual phrase pair. Pairs whose two
  phrases read the same (case-folded, the ``f ≠ e`` constraint) are dropped by
  their text.
* *Reference paraphrases, LB-Precision, Rel-Recall.* For a group G (a key
  sentence s aligned with several others), paraREF(p, s, G) is every phrase that
  PP pairs with p in G's manual alignments, as case-folded text. The phrases
  evaluated are all phrases p ∈ s of at most ``max_len`` words (the paper's
  Σ_{p∈s}); paraM(p, s) is the table's paraphrases of p (probability ≥
  ``min_prob``, at most ``max_len`` words — the only ones the reference can
  contain — and not identical to p). Counting is over unique (phrase,
  paraphrase) pairs within a group ("unique paraphrases" in §7.3), summed over
  groups as the paper's Σ_{<s,G>∈C} does, so a pair posited in two groups counts
  in each group's context.

Layout
------
One module a family of scores: :mod:`.links` (link P/R/F1, AER), :mod:`.phrases`
(consistent phrase pairs), :mod:`.paraphrases` (paraphrase tables and candidate scores),
:mod:`.agreement` (between annotators); shared ratios and checks in :mod:`._shared`.
Import each name from the module that defines it; this package holds no names of its own.
"""

"""Inter-judge agreement per criterion: Krippendorff's α, Fleiss' κ, Cohen's κ, ICC.

Ratings come as a judges × items array with NaN for "not rated" (Krippendorff's
reliability-data layout; see :func:`metrics.core.stats.data.rating_matrix`).

Confidence intervals are percentile bootstraps over items (Efron & Tibshirani 1993):
items are resampled with replacement, seeded, and each coefficient is recomputed.
Each coefficient is a function of per-item sufficient statistics (coincidence
matrices for α, category counts for Fleiss' κ, confusion counts for Cohen's κ, row
sums for the ICC), so a resample is a weighted sum: ``weights @ per_item_stats``,
vectorised over many resamples at once instead of re-running the estimator.

The package splits the coefficients by family — :mod:`.alpha` (Krippendorff's α),
:mod:`.kappa` (Fleiss' and Cohen's κ), :mod:`.icc` (intraclass correlation),
:mod:`.pairwise` (per pair of judges) and :mod:`.criterion` (everything for one
criterion; ``from metrics.core.stats.agreement.criterion import criterion_agreement``).
The bootstrap plumbing is in :mod:`metrics.core.stats._shared`.
"""

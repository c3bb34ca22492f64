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
criterion) — and re-exports every public name here, so
``from metrics.core.stats.agreement import criterion_agreement`` keeps working.
The bootstrap plumbing is in :mod:`metrics.core.stats._common`.
"""

from __future__ import annotations

# Private names other modules and tests import from here (explicit re-exports).
from .._common import percentile_ci as percentile_ci
from .._common import weight_chunks as weight_chunks
from ._shared import (
    ALPHA_LEVELS,
    ICC_FORMS,
    MAX_CATEGORIES,
    IncompleteDesignError,
)
from ._shared import KAPPA_WEIGHTS as KAPPA_WEIGHTS
from .alpha import alpha_from_coincidences as alpha_from_coincidences
from .alpha import krippendorff_alpha, krippendorff_alphas
from .alpha import unit_coincidences as unit_coincidences
from .criterion import SCALE_ALPHA_LEVEL, CriterionAgreement, agreement_by_criterion, criterion_agreement
from .icc import icc, icc_judges_for_complete_items, icc_range
from .kappa import cohen_kappa, fleiss_kappa
from .pairwise import JudgePairResult, pairwise_cohen_kappa, pairwise_pearson
from .pairwise import judge_pairs as judge_pairs

__all__ = [
    "ALPHA_LEVELS",
    "CriterionAgreement",
    "ICC_FORMS",
    "IncompleteDesignError",
    "MAX_CATEGORIES",
    "JudgePairResult",
    "SCALE_ALPHA_LEVEL",
    "agreement_by_criterion",
    "cohen_kappa",
    "criterion_agreement",
    "fleiss_kappa",
    "icc",
    "icc_judges_for_complete_items",
    "icc_range",
    "krippendorff_alpha",
    "krippendorff_alphas",
    "pairwise_cohen_kappa",
    "pairwise_pearson",
]

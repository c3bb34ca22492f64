"""Everything for one criterion: :func:`criterion_agreement` and :func:`agreement_by_criterion`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..data import RatingMatrix, rating_matrix, validate_judgments
from ..results import AgreementResult, ICCResult, jsonable
from ._shared import ALPHA_LEVELS, MAX_CATEGORIES, IncompleteDesignError, values_observed
from .alpha import krippendorff_alphas
from .icc import icc, icc_judges_for_complete_items
from .kappa import fleiss_kappa
from .pairwise import JudgePairResult, pairwise_cohen_kappa, pairwise_pearson

# ---------------------------------------------------------------------------
# everything for one criterion


@dataclass(frozen=True)
class CriterionAgreement:
    """All agreement figures for one criterion (see the module docstring).

    ``fleiss_kappa`` / ``icc`` are None when the design does not allow them; the
    reason is then in ``fleiss_kappa_reason`` / ``icc_reason``.  ``scale`` is the
    criterion's scale type when known and ``alpha_level`` the level of measurement
    that fits it (:data:`SCALE_ALPHA_LEVEL`): the headline α.
    """

    criterion: str
    n_items: int
    n_judges: int
    krippendorff_alpha: dict[str, AgreementResult]
    fleiss_kappa: AgreementResult | None
    fleiss_kappa_reason: str | None
    icc: dict[str, ICCResult] | None
    icc_reason: str | None
    cohen_kappa: tuple[JudgePairResult, ...]
    pearson: tuple[JudgePairResult, ...]
    scale: str | None = None
    alpha_level: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable dict with the same keys as the fields."""
        return {
            "criterion": self.criterion,
            "n_items": self.n_items,
            "n_judges": self.n_judges,
            "krippendorff_alpha": jsonable(self.krippendorff_alpha),
            "fleiss_kappa": jsonable(self.fleiss_kappa),
            "fleiss_kappa_reason": self.fleiss_kappa_reason,
            "icc": jsonable(self.icc),
            "icc_reason": self.icc_reason,
            "cohen_kappa": [p.to_dict() for p in self.cohen_kappa],
            "pearson": [p.to_dict() for p in self.pearson],
            "scale": self.scale,
            "alpha_level": self.alpha_level,
        }


#: Level of measurement per scale type (Krippendorff 2011, "Computing Krippendorff's
#: alpha-reliability"): labelled points are ordered categories (ordinal), a 0–100 slider
#: is interval data (WMT direct assessment, Graham et al. 2013), named categories nominal.
SCALE_ALPHA_LEVEL = {"points": "ordinal", "slider": "interval", "categorical": "nominal"}


def criterion_agreement(
    matrix: RatingMatrix,
    criterion: str,
    *,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    pairwise: bool = True,
    with_icc: bool = True,
    min_shared: int = 30,
    scale: Sequence[float] | None = None,
    scale_type: str | None = None,
) -> CriterionAgreement:
    """Krippendorff's α (four levels), Fleiss' κ, ICC and pairwise Cohen's κ / Pearson
    for one criterion's judges × items matrix.  Bootstrap CIs (``n_boot`` resamples of
    items) for α and Fleiss' κ, F-based ones for the ICC; pairwise figures are point
    estimates.  The ICC is computed on the judges
    :func:`icc_judges_for_complete_items` keeps, and refused (``icc_reason``) when
    fewer than ``min_shared`` items are complete.  Cohen's κ (with its standard error
    and asymptotic interval) weighs distances on the design's ``scale`` (its values,
    e.g. 1–5) when every score lies on it, else on the values observed.

    ``scale_type`` (``points``, ``slider`` or ``categorical``; None: unknown, compute
    all) makes the statistics follow the scale: a slider gets α at the interval level,
    ICC and Pearson, no κ (κ counts exact matches of categories, which 0–100 values
    seldom are); categories get nominal α and κ, no ICC or Pearson (their codes have
    no distances); points (ordinal) get every coefficient, with ordinal α first.

    ``pairwise=False`` leaves out the pairwise figures and ``with_icc=False`` the ICC (its
    reason then says so); α and Fleiss' κ do not depend on them."""
    values = matrix.values
    if scale_type is not None and scale_type not in SCALE_ALPHA_LEVEL:
        raise ValueError(f"unknown scale type {scale_type!r}; choose from {', '.join(SCALE_ALPHA_LEVEL)}")
    levels: tuple[str, ...] = {"slider": ("interval",), "categorical": ("nominal",)}.get(scale_type or "", ALPHA_LEVELS)
    alphas = krippendorff_alphas(values, levels=levels, n_boot=n_boot, confidence_level=confidence_level, seed=seed)
    if scale_type == "slider":
        fk, fk_reason = None, "κ is for categories or ordered points; this criterion is a 0–100 slider (interval)"
    else:
        try:
            fk, fk_reason = fleiss_kappa(values, n_boot=n_boot, confidence_level=confidence_level, seed=seed), None
        except ValueError as exc:  # IncompleteDesignError, or scores that are not categorical
            fk, fk_reason = None, str(exc)
    if not with_icc:
        ic, ic_reason = None, "not computed here (the full report has it)"
    elif scale_type == "categorical":
        ic, ic_reason = None, "the ICC needs distances between values; this criterion's values are named categories"
    else:
        kept, left_out = icc_judges_for_complete_items(values, judges=matrix.judges, min_items=min_shared)
        rows = [matrix.judges.index(j) for j in kept]
        try:
            ic = icc(values[rows], judges=kept, confidence_level=confidence_level, min_items=min_shared)
            ic = {form: replace(res, judges_left_out=left_out) for form, res in ic.items()}
            ic_reason = None
        except IncompleteDesignError as exc:
            ic, ic_reason = None, str(exc)
            if left_out:
                ic_reason += f" (after leaving out {', '.join(left_out)})"
    categorical = values_observed(values).size <= MAX_CATEGORIES and scale_type != "slider"
    labels: np.ndarray | None = None
    if scale is not None:
        observed = values_observed(values)
        labels = np.asarray(sorted(scale), dtype=float)
        if not np.isin(observed, labels).all():
            labels = None  # scores off the scale (e.g. z-scores): weigh the values observed
    ck = pairwise_cohen_kappa(values, judges=matrix.judges, labels=labels) if pairwise and categorical else ()
    pr = pairwise_pearson(values, judges=matrix.judges) if pairwise and scale_type != "categorical" else ()
    return CriterionAgreement(
        criterion,
        int(((~np.isnan(values)).sum(axis=0) >= 1).sum()),
        matrix.n_judges,
        alphas,
        fk,
        fk_reason,
        ic,
        ic_reason,
        ck,
        pr,
        scale_type,
        SCALE_ALPHA_LEVEL.get(scale_type) if scale_type else None,
    )


def agreement_by_criterion(
    judgments: pd.DataFrame,
    *,
    criteria: Sequence[str] | None = None,
    include_controls: bool = False,
    n_boot: int = 1000,
    confidence_level: float = 0.95,
    seed: int = 0,
    pairwise: bool = True,
    min_shared: int = 30,
) -> dict[str, CriterionAgreement]:
    """:func:`criterion_agreement` for each criterion of a canonical judgment frame.

    Controls are left out by default: their expected scores are extreme and easy, so
    they would inflate agreement (the reason PEM §5.2 drops them from Table 1).
    """
    frame = validate_judgments(judgments)
    names = list(criteria) if criteria is not None else sorted(frame["criterion"].unique())
    return {
        c: criterion_agreement(
            rating_matrix(frame, c, include_controls=include_controls),
            c,
            n_boot=n_boot,
            confidence_level=confidence_level,
            seed=seed,
            pairwise=pairwise,
            min_shared=min_shared,
        )
        for c in names
    }

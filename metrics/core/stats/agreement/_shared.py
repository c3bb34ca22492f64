"""What every agreement family shares: levels, weightings, ICC forms, the design error, input checks."""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..data import RatingMatrix

ALPHA_LEVELS: tuple[str, ...] = ("nominal", "ordinal", "interval", "ratio")
#: The level names as krippendorff.alpha types them.
AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]
KAPPA_WEIGHTS: tuple[str, ...] = ("unweighted", "linear", "quadratic")
ICC_FORMS: tuple[str, ...] = ("ICC(1,1)", "ICC(2,1)", "ICC(3,1)", "ICC(1,k)", "ICC(2,k)", "ICC(3,k)")


class IncompleteDesignError(ValueError):
    """The coefficient needs a design the data does not have (reason in the message)."""


def as_ratings(ratings) -> np.ndarray:
    if isinstance(ratings, RatingMatrix):
        ratings = ratings.values
    arr = np.asarray(ratings, dtype=float)
    if arr.ndim != 2:
        raise ValueError(f"ratings must be a 2-D judges × items array, got shape {arr.shape}")
    return arr


def values_observed(values: np.ndarray) -> np.ndarray:
    return np.unique(values[~np.isnan(values)])


# Above this many distinct score values the scores are treated as continuous: the
# category-based coefficients (nominal/ordinal α, Fleiss' κ, Cohen's κ) are not
# computed, and interval α uses a closed form (alpha.py) instead of a V × V matrix.
MAX_CATEGORIES = 50


def judge_names(ratings, judges, n: int) -> tuple[str, ...]:
    if judges is not None:
        names = tuple(map(str, judges))
    elif isinstance(ratings, RatingMatrix):
        names = ratings.judges
    else:
        names = tuple(str(i) for i in range(n))
    if len(names) != n:
        raise ValueError(f"{len(names)} judge names for {n} rows of ratings")
    return names

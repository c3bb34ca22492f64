"""The canonical tidy shape of judgments and metric scores, and helpers to reshape it.

Judgments: one row per (judge, item, criterion) with columns

==============  ===============================================================
``judge``        str, the judge's id
``item``         str, one (original, candidate) pair as presented
``original``     str, the original sentence's id
``system``       str, where the candidate came from
``is_control``   bool, True for controls paraeval built itself
``control_kind`` str or None: ``identical``, ``random``, ``unigram``
``criterion``    str: ``adequacy``, ``fluency``, ``dissimilarity``, ``overall`` ...
``score``        int or float
``seconds``      optional float, time the judge spent on the item
==============  ===============================================================

Metric scores: columns ``item`` (or ``candidate``), ``system``, ``score`` and
optionally ``metric`` (several metrics in one frame), or a mapping
``{metric name: frame}``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "CRITERIA",
    "DEFAULT_CONTROL_EXPECTED",
    "JUDGMENT_COLUMNS",
    "RatingMatrix",
    "rating_matrix",
    "validate_judgments",
    "validate_metric_scores",
]

CRITERIA: tuple[str, ...] = ("adequacy", "fluency", "dissimilarity", "overall")

# PEM (Liu, Dahlmeier & Ng 2010) §5.1: the fixed "human" scores of the three controls.
DEFAULT_CONTROL_EXPECTED: Mapping[str, Mapping[str, float]] = {
    "identical": {"adequacy": 5, "fluency": 5, "dissimilarity": 1, "overall": 2},
    "random": {"adequacy": 1, "fluency": 5, "dissimilarity": 5, "overall": 1},
    "unigram": {"adequacy": 1, "fluency": 1, "dissimilarity": 5, "overall": 1},
}

_VALIDATED = "paraeval_validated_rows"

JUDGMENT_COLUMNS: tuple[str, ...] = (
    "judge",
    "item",
    "original",
    "system",
    "is_control",
    "control_kind",
    "criterion",
    "score",
)


def validate_judgments(judgments: pd.DataFrame, *, excluded_judges: Iterable[str] = ()) -> pd.DataFrame:
    """Check the canonical judgment frame and return a cleaned copy.

    Preconditions: the columns of :data:`JUDGMENT_COLUMNS` exist, ``score`` is numeric
    and not missing, and no (judge, item, criterion) occurs twice.  Raises
    ``ValueError`` naming the problem otherwise.  The copy has string ids,
    boolean ``is_control``, float ``score``, ``control_kind`` None for non-controls,
    and rows of ``excluded_judges`` removed.  The input is not modified.
    """
    if not isinstance(judgments, pd.DataFrame):
        raise TypeError(f"judgments must be a pandas DataFrame, not {type(judgments).__name__}")
    if not excluded_judges and judgments.attrs.get(_VALIDATED) == len(judgments):
        # Already the output of this function (the marker is its row count, so a frame
        # that gained rows since is checked again); the stats functions never mutate it.
        return judgments
    missing = [c for c in JUDGMENT_COLUMNS if c not in judgments.columns]
    if missing:
        raise ValueError(f"judgments lack column(s): {', '.join(missing)}")
    cols = list(JUDGMENT_COLUMNS) + (["seconds"] if "seconds" in judgments.columns else [])
    frame = judgments.loc[:, cols].copy()
    for col in ("judge", "item", "original", "system", "criterion"):
        frame[col] = frame[col].astype(str)
    excluded = {str(j) for j in excluded_judges}
    if excluded:
        frame = frame.loc[~frame["judge"].isin(excluded)]
    try:
        frame["score"] = pd.to_numeric(frame["score"], errors="raise").astype(float)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"judgments column 'score' must be numeric: {exc}") from None
    if frame["score"].isna().any():
        raise ValueError("judgments column 'score' has missing values")
    frame["is_control"] = frame["is_control"].astype(bool)
    kind = frame["control_kind"].astype(object)
    frame["control_kind"] = kind.where(frame["is_control"] & kind.notna(), None)
    if frame["is_control"].any() and frame.loc[frame["is_control"], "control_kind"].isna().any():
        raise ValueError("every control row needs a control_kind")
    if "seconds" in frame.columns:
        frame["seconds"] = pd.to_numeric(frame["seconds"], errors="coerce").astype(float)
    dup = frame.duplicated(["judge", "item", "criterion"])
    if dup.any():
        row = frame.loc[dup].iloc[0]
        raise ValueError(f"judge {row['judge']!r} scored item {row['item']!r} on {row['criterion']!r} more than once")
    frame = frame.reset_index(drop=True)
    frame.attrs[_VALIDATED] = len(frame)
    return frame


def validate_metric_scores(metric_scores: pd.DataFrame | Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Return metric scores as one long frame with columns ``metric, item, system, score``.

    Accepts a frame with ``item`` (or ``candidate``), ``system``, ``score`` and an
    optional ``metric`` column (default name ``"metric"``), or a mapping from metric
    name to such a frame.  Raises ``ValueError`` on missing columns, non-numeric or
    duplicate (metric, item) scores.
    """
    if isinstance(metric_scores, Mapping):
        parts = []
        for name, frame in metric_scores.items():
            part = _one_metric_frame(frame)
            part["metric"] = str(name)
            parts.append(part)
        if not parts:
            raise ValueError("metric_scores is empty")
        long = pd.concat(parts, ignore_index=True)
    else:
        long = _one_metric_frame(metric_scores)
        if "metric" in metric_scores.columns:
            long["metric"] = metric_scores["metric"].astype(str).to_numpy()
        else:
            long["metric"] = "metric"
    dup = long.duplicated(["metric", "item"])
    if dup.any():
        row = long.loc[dup].iloc[0]
        raise ValueError(f"metric {row['metric']!r} has more than one score for item {row['item']!r}")
    return long.loc[:, ["metric", "item", "system", "score"]].reset_index(drop=True)


def _one_metric_frame(frame: pd.DataFrame) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"metric scores must be a pandas DataFrame, not {type(frame).__name__}")
    key = "item" if "item" in frame.columns else "candidate" if "candidate" in frame.columns else None
    if key is None or "score" not in frame.columns:
        raise ValueError("metric scores need columns 'item' (or 'candidate') and 'score'")
    out = pd.DataFrame({"item": frame[key].astype(str).to_numpy()})
    out["system"] = frame["system"].astype(str).to_numpy() if "system" in frame.columns else None
    try:
        out["score"] = pd.to_numeric(frame["score"], errors="raise").astype(float).to_numpy()
    except (ValueError, TypeError) as exc:
        raise ValueError(f"metric column 'score' must be numeric: {exc}") from None
    return out


@dataclass(frozen=True)
class RatingMatrix:
    """Scores of one criterion as a dense ``(n_judges, n_items)`` array, NaN = not rated.

    This is Krippendorff's "reliability data" layout (coders × units).
    """

    values: np.ndarray
    judges: tuple[str, ...]
    items: tuple[str, ...]

    @property
    def n_judges(self) -> int:
        return len(self.judges)

    @property
    def n_items(self) -> int:
        return len(self.items)


def rating_matrix(judgments: pd.DataFrame, criterion: str, *, include_controls: bool = False) -> RatingMatrix:
    """Pivot one criterion of a *validated* judgment frame to a judges × items matrix.

    Items and judges are sorted by id so that the same data always gives the same
    matrix.  Controls are left out unless ``include_controls``.
    """
    rows = judgments.loc[judgments["criterion"] == criterion]
    if not include_controls:
        rows = rows.loc[~rows["is_control"]]
    judge_codes, judges = pd.factorize(rows["judge"], sort=True)
    item_codes, items = pd.factorize(rows["item"], sort=True)
    values = np.full((len(judges), len(items)), np.nan)
    values[judge_codes, item_codes] = rows["score"].to_numpy(dtype=float)
    return RatingMatrix(values, tuple(map(str, judges)), tuple(map(str, items)))

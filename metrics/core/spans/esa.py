"""ESA analysis: errors per system by severity, an MQM-style weighted score, the ESA score, a ranking.

* **Errors by severity** — minor and major spans per judgment, per system, genuine items.
* **MQM-style score** of one annotation: −Σ_spans w(severity), with WMT's MQM weights
  minor 1, major 5 (Freitag et al. 2021, Table 3, and WMT's ESA papers, which score
  ESA spans the same way: Kocmi et al. 2024) unless the study sets others; the weights
  used travel with every result (:attr:`EsaSummary.weights`). 0 is error-free, lower is
  worse. (MQM's 0.1 for minor punctuation and 25 for non-translation are not used: ESA
  has no categories of its own.)
* **ESA score** — the judge's 0–100 score; reported raw and as per-judge z-scores
  (:mod:`metrics.core.stats.zscores`, WMT's way: genuine items, sample SD; undefined,
  and left out of the z means, for a judge with fewer than two genuine scores or σ = 0).
* **System ranking** — by any of the three, with bootstrap intervals over originals and
  WMT-style significance clusters (:func:`metrics.core.stats.significance.system_ranking`).

Controls (paraeval's own candidates) are left out of every system figure and checked by
:func:`control_checks` instead: an identical copy should get no major span; an unrelated
sentence (``random``/``unigram`` controls) should get a major span or a very low score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from metrics.core.stats.results import SystemRank, jsonable
from metrics.core.stats.significance import system_ranking
from metrics.core.stats.zscores import judge_zscores

from .model import SEVERITIES, ErrorSpan, EsaAnnotation

__all__ = [
    "MQM_WEIGHTS",
    "ControlCheck",
    "EsaSummary",
    "control_checks",
    "errors_by_severity",
    "esa_frame",
    "esa_judgments",
    "esa_summary",
    "esa_system_ranking",
    "mqm_score",
]

#: WMT's MQM weights for ESA's two severities (Freitag et al. 2021; Kocmi et al. 2024).
MQM_WEIGHTS: Mapping[str, float] = {"minor": 1.0, "major": 5.0}
UNRELATED_CONTROLS = ("random", "unigram")


def _weights(weights: Mapping[str, float]) -> dict[str, float]:
    missing = [s for s in SEVERITIES if s not in weights]
    if missing:
        raise ValueError(f"weights lack severity {', '.join(missing)}")
    return {s: float(weights[s]) for s in SEVERITIES}


def mqm_score(spans: Sequence[ErrorSpan], *, weights: Mapping[str, float] = MQM_WEIGHTS) -> float:
    """−Σ w(severity) over ``spans`` (0 = no error; −1 a minor, −5 a major by default)."""
    w = _weights(weights)
    return -sum(w[s.severity] for s in spans)


def esa_frame(annotations: Sequence[EsaAnnotation], *, weights: Mapping[str, float] = MQM_WEIGHTS) -> pd.DataFrame:
    """One row per annotation: ids, ``esa`` (0–100 or NaN), ``mqm``, counts by severity and side.

    Columns: judge, item, original, system, is_control, control_kind, esa, mqm, minor,
    major, candidate_spans, original_spans, missing_spans, seconds.
    """
    rows = []
    for a in annotations:
        rows.append(
            {
                "judge": a.judge,
                "item": a.item,
                "original": a.original,
                "system": a.system,
                "is_control": a.is_control,
                "control_kind": a.control_kind,
                "esa": float("nan") if a.score is None else float(a.score),
                "mqm": mqm_score(a.spans, weights=weights),
                "minor": a.count("minor"),
                "major": a.count("major"),
                "candidate_spans": sum(1 for s in a.spans if s.side == "candidate" and not s.missing),
                "original_spans": sum(1 for s in a.spans if s.side == "original"),
                "missing_spans": sum(1 for s in a.spans if s.missing),
                "seconds": float("nan") if a.seconds is None else float(a.seconds),
            }
        )
    columns = [
        "judge",
        "item",
        "original",
        "system",
        "is_control",
        "control_kind",
        "esa",
        "mqm",
        "minor",
        "major",
        "candidate_spans",
        "original_spans",
        "missing_spans",
        "seconds",
    ]
    return pd.DataFrame(rows, columns=columns)


def esa_judgments(annotations: Sequence[EsaAnnotation], *, weights: Mapping[str, float] = MQM_WEIGHTS) -> pd.DataFrame:
    """The annotations as the canonical judgment frame of :mod:`metrics.core.stats.data`.

    Two criteria: ``esa`` (the 0–100 score; annotations without one are left out) and
    ``mqm`` (the weighted span score), so that every statistic of :mod:`metrics.core.stats`
    (agreement, metric–human correlations, z-scores) applies to span-based scores as is.
    """
    frame = esa_frame(annotations, weights=weights)
    ids = ["judge", "item", "original", "system", "is_control", "control_kind"]
    parts = []
    for criterion in ("esa", "mqm"):
        part = frame.loc[frame[criterion].notna(), ids].copy()
        part["criterion"] = criterion
        part["score"] = frame.loc[frame[criterion].notna(), criterion].to_numpy()
        parts.append(part)
    return pd.concat(parts, ignore_index=True)


def errors_by_severity(annotations: Sequence[EsaAnnotation]) -> pd.DataFrame:
    """Per system (genuine items): judgments, minor and major spans, and each per judgment.

    Columns: system, n_judgments, minor, major, minor_per_judgment, major_per_judgment,
    omissions (spans on the original plus missing markers); most major errors last.
    """
    frame = esa_frame(annotations)
    genuine = frame.loc[~frame["is_control"]].copy()
    genuine["omissions"] = genuine["original_spans"] + genuine["missing_spans"]
    table = genuine.groupby("system", sort=True).agg(
        n_judgments=("item", "size"), minor=("minor", "sum"), major=("major", "sum"), omissions=("omissions", "sum")
    )
    table["minor_per_judgment"] = table["minor"] / table["n_judgments"]
    table["major_per_judgment"] = table["major"] / table["n_judgments"]
    table = table.reset_index().sort_values(["major_per_judgment", "system"], kind="stable")
    return table.loc[
        :, ["system", "n_judgments", "minor", "major", "minor_per_judgment", "major_per_judgment", "omissions"]
    ].reset_index(drop=True)


@dataclass(frozen=True)
class EsaSummary:
    """Per-system ESA figures (genuine items) and the MQM weights they were computed with.

    ``table`` columns: system, n_originals, n_judgments, esa (mean raw 0–100), esa_z (mean
    per-judge z), mqm (mean weighted span score), minor_per_judgment, major_per_judgment;
    each a mean over originals of the mean over that original's judges. Best ``esa`` first.
    """

    weights: Mapping[str, float]
    table: pd.DataFrame

    def to_dict(self) -> dict[str, Any]:
        return jsonable({"weights": dict(self.weights), "systems": self.table.to_dict(orient="records")})


def esa_summary(annotations: Sequence[EsaAnnotation], *, weights: Mapping[str, float] = MQM_WEIGHTS) -> EsaSummary:
    """The per-system table of :class:`EsaSummary`."""
    w = _weights(weights)
    frame = esa_frame(annotations, weights=w)
    esa = esa_judgments(annotations, weights=w)
    z = judge_zscores(esa, criteria=["esa"]) if esa["criterion"].eq("esa").any() else None
    frame = frame.set_index(["judge", "item"])
    if z is not None:
        frame["esa_z"] = z.set_index(["judge", "item"])["z"].reindex(frame.index)
    else:
        frame["esa_z"] = float("nan")
    genuine = frame.loc[~frame["is_control"]].reset_index()
    per_original = genuine.groupby(["system", "original"], sort=True).agg(
        esa=("esa", "mean"),
        esa_z=("esa_z", "mean"),
        mqm=("mqm", "mean"),
        minor=("minor", "mean"),
        major=("major", "mean"),
        n=("item", "size"),
    )
    table = per_original.groupby(level="system").agg(
        n_originals=("n", "size"),
        n_judgments=("n", "sum"),
        esa=("esa", "mean"),
        esa_z=("esa_z", "mean"),
        mqm=("mqm", "mean"),
        minor_per_judgment=("minor", "mean"),
        major_per_judgment=("major", "mean"),
    )
    table = table.reset_index().sort_values(["esa", "mqm"], ascending=False, kind="stable").reset_index(drop=True)
    return EsaSummary(w, table)


def esa_system_ranking(
    annotations: Sequence[EsaAnnotation],
    *,
    by: str = "esa",
    weights: Mapping[str, float] = MQM_WEIGHTS,
    n_boot: int = 1000,
    significance_level: float = 0.05,
    seed: int = 0,
) -> tuple[SystemRank, ...]:
    """Systems ranked by ``by`` (``esa``, ``esa_z`` or ``mqm``) with significance clusters.

    :func:`metrics.core.stats.significance.system_ranking` on the genuine items: a system's
    score is the mean over originals of its per-original mean; bootstrap intervals resample
    originals; a new cluster starts where the paired bootstrap (Koehn 2004) finds the
    system significantly worse than the one above it.
    """
    if by not in ("esa", "esa_z", "mqm"):
        raise ValueError(f"by must be esa, esa_z or mqm, not {by!r}")
    frame = esa_frame(annotations, weights=weights)
    if by == "esa_z":
        z = judge_zscores(esa_judgments(annotations, weights=weights), criteria=["esa"])
        frame = frame.merge(z[["judge", "item", "z"]].rename(columns={"z": "esa_z"}), on=["judge", "item"], how="left")
    genuine = frame.loc[~frame["is_control"] & frame[by].notna()]
    return system_ranking(
        genuine,
        score_col=by,
        system_col="system",
        unit_col="original",
        n_boot=n_boot,
        significance_level=significance_level,
        seed=seed,
    )


@dataclass(frozen=True)
class ControlCheck:
    """One control annotation judged against what a control of its kind should get."""

    judge: str
    item: str
    control_kind: str
    passed: bool
    reason: str


def control_checks(
    annotations: Sequence[EsaAnnotation], *, unrelated_max_score: float = 30.0
) -> tuple[ControlCheck, ...]:
    """Check every control annotation (the module docstring).

    ``identical``: passes with no major span. ``random``/``unigram`` (an unrelated
    sentence): passes with at least one major span or a score ≤ ``unrelated_max_score``.
    Other control kinds are not judged here.
    """
    out = []
    for a in annotations:
        if not a.is_control or a.control_kind is None:
            continue
        majors = a.count("major")
        if a.control_kind == "identical":
            ok = majors == 0
            reason = "no major span" if ok else f"{majors} major span(s) on an identical copy"
        elif a.control_kind in UNRELATED_CONTROLS:
            low = a.score is not None and a.score <= unrelated_max_score
            ok = majors > 0 or low
            reason = (
                ("a major span" if majors else f"score {a.score:g} ≤ {unrelated_max_score:g}")
                if ok
                else (
                    "no major span and "
                    + ("no score" if a.score is None else f"score {a.score:g} > {unrelated_max_score:g}")
                )
            )
        else:
            continue
        out.append(ControlCheck(a.judge, a.item, a.control_kind, ok, reason))
    return tuple(out)

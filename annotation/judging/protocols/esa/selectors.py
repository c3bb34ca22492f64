"""Error span annotation, read for the researcher: the latest annotations as records (for the report),
progress, the exports (CSV and JSON Lines) and the QC table. The writes and what a judge is served
are in :mod:`.services`."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

import pandas as pd

from annotation.judging.selectors.exclusions import judges_excluded
from annotation.models import Study
from metrics.core.spans.esa import control_checks
from metrics.core.spans.jsonl import annotation_line
from metrics.core.spans.model import EsaAnnotation

from ...enums import CONTROL_KIND_OF_SYSTEM_KIND, CONTROL_SYSTEM_PREFIX
from ...selectors.export_rows import CANDIDATE_COLUMNS, RECORD_COLUMNS, judgment_record_cells
from ..base import ExportAnswer
from .models import EsaJudgment
from .services import span_of


def _latest(study: Study):
    return (
        EsaJudgment.objects.filter(study=study, is_latest=True)
        .select_related("judge", "item__candidate__system", "item__candidate__original")
        .order_by("judge__username", "item__assignment_id", "item__position")
    )


def _control_kind(system) -> str | None:
    return CONTROL_KIND_OF_SYSTEM_KIND.get(system.kind) if system.name.startswith(CONTROL_SYSTEM_PREFIX) else None


def esa_annotations(
    *, study: Study, include_excluded: bool = False
) -> tuple[list[EsaAnnotation], dict[str, tuple[str, str]]]:
    """Latest judgments as :class:`~metrics.core.spans.model.EsaAnnotation` values and the
    texts of each item (item → (original, candidate)); judges excluded on the QC page are
    left out unless ``include_excluded``. The item of an annotation is its candidate (so
    two judges of one candidate share it: span agreement pairs them)."""
    excluded = set() if include_excluded else judges_excluded(study=study)
    out, texts = [], {}
    for j in _latest(study):
        if j.judge.username in excluded:
            continue
        cand = j.item.candidate
        item = f"c{cand.pk}"
        texts[item] = (cand.original.text, cand.text)
        kind = _control_kind(cand.system)
        out.append(
            EsaAnnotation(
                judge=j.judge.username,
                item=item,
                original=cand.original.external_id,
                system=cand.system.name,
                spans=tuple(span_of(s) for s in j.spans),
                score=j.score,
                is_control=j.item.is_control,
                control_kind=kind,
                seconds=j.active_seconds if j.active_seconds is not None else j.seconds,
                proposed=tuple(span_of(s) for s in j.item.proposed),
            )
        )
    return out, texts


EXPORT_HEADER = [
    "judge",
    "position",
    *CANDIDATE_COLUMNS,
    "score",
    "n_minor",
    "n_major",
    "spans",
    "proposed",
    *RECORD_COLUMNS,
]


def esa_export_rows(*, study: Study) -> Iterator[list]:
    """The researcher's CSV: one row per latest judgment, spans as JSON (code points, end exclusive)."""
    yield EXPORT_HEADER
    for j in _latest(study):
        cand = j.item.candidate
        severities = Counter(s["severity"] for s in j.spans)
        yield [
            j.judge.username,
            j.item.position,
            cand.original.external_id,
            cand.system.name,
            j.item.is_control,
            _control_kind(cand.system) or "",
            cand.original.text,
            cand.text,
            "" if j.score is None else j.score,
            severities["minor"],
            severities["major"],
            json.dumps(j.spans, ensure_ascii=False),
            json.dumps(j.item.proposed, ensure_ascii=False),
            *judgment_record_cells(j),
        ]


def esa_jsonl_lines(*, study: Study, offsets: str = "codepoint") -> Iterator[str]:
    """Every latest judgment as one JSON line (:func:`metrics.core.spans.jsonl.annotation_line`),
    excluded judges included (an export is the raw data)."""
    annotations, texts = esa_annotations(study=study, include_excluded=True)
    for a in annotations:
        original, candidate = texts[a.item]
        yield annotation_line(a, original, candidate, offsets=offsets) + "\n"


def esa_qc(*, study: Study) -> list[dict]:
    """Per judge with annotated controls (:func:`metrics.core.spans.esa.control_checks`): an
    identical copy should get no major span; an unrelated sentence a major span or a low
    score. Rows: judge, n, passed, rate, passes (every check passed), failures (reasons), excluded."""
    annotations, _ = esa_annotations(study=study, include_excluded=True)
    excluded = judges_excluded(study=study)
    rows: dict[str, dict] = {}
    for c in control_checks(annotations):
        r = rows.setdefault(c.judge, {"judge": c.judge, "n": 0, "passed": 0, "failures": []})
        r["n"] += 1
        r["passed"] += int(c.passed)
        if not c.passed:
            r["failures"].append(f"{c.control_kind}: {c.reason}")
    return [
        r | {"rate": r["passed"] / r["n"], "passes": r["passed"] == r["n"], "excluded": r["judge"] in excluded}
        for _, r in sorted(rows.items())
    ]


#: The answers of an ESA judgment in the progress page's tidy and wide CSVs.
EXPORT_QUESTIONS = ["score", "spans"]


def esa_export_answers(*, study: Study) -> Iterator[ExportAnswer]:
    """Every latest judgment (screened-out judges left out) as the tidy and wide CSVs write it:
    the candidate, its 0–100 score and how many error spans the judge marked."""
    for j in _latest(study).exclude(item__assignment__screened_out_at__isnull=False):
        cand = j.item.candidate
        yield ExportAnswer(
            judge=j.judge.username,
            item=str(cand.pk),
            original_id=cand.original.external_id,
            system=cand.system.name,
            control_kind=_control_kind(cand.system) or "",
            original=cand.original.text,
            candidate=cand.text,
            values={"score": "" if j.score is None else j.score, "spans": len(j.spans)},
            seconds=j.seconds,
            active_seconds=j.active_seconds,
            submitted_at=j.submitted_at,
            revision=j.revision,
        )


def esa_pilot_frame(*, study: Study):
    """The latest ESA scores (judges excluded on the QC page left out) as the planner's pilot:
    the tidy judgments frame with the criterion ``score`` (0–100), one row per scored item."""
    annotations, _ = esa_annotations(study=study)
    rows = [
        (a.judge, a.item, a.original, a.system, a.is_control, "score", float(a.score))
        for a in annotations
        if a.score is not None
    ]
    return pd.DataFrame.from_records(
        rows, columns=["judge", "item", "original", "system", "is_control", "criterion", "score"]
    )

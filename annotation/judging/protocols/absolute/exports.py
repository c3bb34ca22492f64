"""The absolute protocol's judgments CSV exports (tidy and wide): a row per judge × item ×
criterion of the design, with the judge's z-score on 0–100 criteria, streamed from the
database in chunks (the unit's ``export_rows``; the shared columns and the other protocols'
rows are :mod:`annotation.judging.selectors.export_rows`)."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import groupby

from annotation.models import Study
from metrics.core.stats.zscores import JudgeScale, ScaleAccumulator

from ... import scales
from ...enums import CONTROL_KIND_OF_SYSTEM_KIND
from ...selectors.design import study_criteria, study_criteria_slugs
from ...selectors.exclusions import judges_excluded
from ...selectors.export_rows import CANDIDATE_COLUMNS, TIDY_EXPORT_COLUMNS, export_iso
from .models import Judgment

#: Rows fetched per database round trip by the CSV exports, which stream: their memory
#: does not grow with the study.
EXPORT_CHUNK_SIZE = 2_000


#: What the judgments frame (:mod:`.frame`) and the tidy export read of each latest judgment.
JUDGMENT_COLUMNS = (
    "judge__username",
    "item__candidate_id",
    "item__candidate__original__external_id",
    "item__candidate__system__name",
    "item__candidate__system__kind",
    "values",
    "seconds",
    "submitted_at",
)


def _export_rows(study: Study) -> Iterator[tuple]:
    """The latest judgments, by judge then item, read in chunks (for the tidy export);
    screened-out judges' judgments are kept apart (not exported)."""
    return (
        Judgment.objects.filter(study=study, is_latest=True)
        .exclude(item__assignment__screened_out_at__isnull=False)
        .order_by("judge__username", "item__candidate_id")
        .values_list(*JUDGMENT_COLUMNS, "revision", "active_seconds")
        .iterator(chunk_size=EXPORT_CHUNK_SIZE)
    )


def judge_scales_streamed(*, study: Study) -> dict[tuple[str, str], JudgeScale]:
    """(judge, criterion) → the judge's z-basis (:class:`JudgeScale`: genuine items' mean
    and sample SD) for every criterion whose scale is z-scored (the 0–100 sliders), over
    the judgments the tidy export writes (latest revisions, screened-out judges left out).

    One streamed pass over the judgments, in constant memory per judge and criterion
    (:class:`ScaleAccumulator`); the same numbers as
    :func:`metrics.core.stats.zscores.judge_scales` on the judgments frame."""
    zscored = scales.criteria_zscored(study_criteria(study=study))
    if not zscored:
        return {}
    acc: dict[tuple[str, str], ScaleAccumulator] = {}
    rows = (
        Judgment.objects.filter(study=study, is_latest=True)
        .exclude(item__assignment__screened_out_at__isnull=False)
        .values_list("judge__username", "item__candidate__system__kind", "values")
        .iterator(chunk_size=EXPORT_CHUNK_SIZE)
    )
    for judge, kind, values in rows:
        if kind in CONTROL_KIND_OF_SYSTEM_KIND:  # controls get a z but are not in its basis
            continue
        for crit in zscored:
            if values.get(crit) is not None:
                acc.setdefault((judge, crit), ScaleAccumulator()).add(values[crit])
    return {key: a.scale() for key, a in acc.items()}


def _z_cell(scale: JudgeScale | None, value) -> float | str:
    """The tidy export's ``z`` (6 decimals): empty for a criterion without z-scores and
    where the judge's z is undefined (fewer than two genuine scores, or all equal). A
    number, not text: a negative z is a number to a spreadsheet, not a formula."""
    z = scale.z(value) if scale is not None and value is not None else None
    return "" if z is None else round(z, 6)


def criteria_tidy_rows(*, study: Study) -> Iterator[list]:
    """Header, then one row per judge × item × criterion the judgment has a value for
    (latest revisions, every judge), criteria in the design's order. The last column,
    ``z``, is the judge's WMT z-score on 0–100 criteria (:func:`judge_scales_streamed`),
    empty elsewhere and where it is undefined.

    Streams: judgments are read from the database in chunks as the rows are written (a
    first pass over them gathers each judge's mean and SD)."""
    excluded = judges_excluded(study=study)
    order = study_criteria_slugs(study=study)
    z_basis = judge_scales_streamed(study=study)
    yield list(TIDY_EXPORT_COLUMNS)
    for judge, cand, original, system, kind, values, seconds, submitted_at, rev, active in _export_rows(study):
        control_kind = CONTROL_KIND_OF_SYSTEM_KIND.get(kind, "")
        for crit in order:
            if crit not in values:
                continue
            yield [
                study.name,
                judge,
                cand,
                original,
                system,
                str(bool(control_kind)).lower(),
                control_kind,
                crit,
                values[crit],
                "" if seconds is None else f"{seconds:.3f}",
                "" if active is None else f"{active:.3f}",
                export_iso(submitted_at),
                rev,
                str(judge in excluded).lower(),
                _z_cell(z_basis.get((judge, crit)), values[crit]),
            ]


def criteria_wide_rows(*, study: Study) -> Iterator[list]:
    """Header, then one row per item: its texts and a column ``judge:criterion`` per
    judge × criterion of the design (empty where that judge gave the item no value).

    Streams: judgments are read in item order, in chunks, and each item's row is
    written once its judgments have been read."""
    latest = Judgment.objects.filter(study=study, is_latest=True).exclude(
        item__assignment__screened_out_at__isnull=False
    )  # screened-out judges are kept apart
    judges = sorted(set(latest.values_list("judge__username", flat=True).distinct()))
    order = study_criteria_slugs(study=study)
    yield [
        "study",
        "item",
        *CANDIDATE_COLUMNS,
        *[f"{j}:{c}" for j in judges for c in order],
    ]
    rows = (
        latest.order_by(
            "item__candidate__original__position",
            "item__candidate__original__external_id",
            "item__candidate__system__name",
            "item__candidate_id",
            "judge__username",
        )
        .values_list(
            "item__candidate_id",
            "judge__username",
            "values",
            "item__candidate__original__external_id",
            "item__candidate__system__name",
            "item__candidate__system__kind",
            "item__candidate__original__text",
            "item__candidate__text",
        )
        .iterator(chunk_size=EXPORT_CHUNK_SIZE)
    )
    for cand, group in groupby(rows, key=lambda r: r[0]):
        scores: dict[str, dict] = {}
        for r in group:
            scores[r[1]] = r[2]
            external_id, system, kind, original_text, candidate_text = r[3:]
        control_kind = CONTROL_KIND_OF_SYSTEM_KIND.get(kind, "")
        cells: list[object] = []  # a value per judge and criterion; "" where none
        for j in judges:
            values = scores.get(j, {})
            cells.extend(values.get(c, "") for c in order)
        yield [
            study.name,
            cand,
            external_id,
            system,
            str(bool(control_kind)).lower(),
            control_kind,
            original_text,
            candidate_text,
            *cells,
        ]

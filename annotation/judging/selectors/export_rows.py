"""The judgments CSV exports' rows (tidy and wide), streamed from the database in chunks."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from annotation.models import Study

from ..protocols.registry import protocol_for_study
from .exclusions import judges_excluded

#: The columns that say which candidate of which original a row is about, in every protocol's
#: CSV that has them: the original's id in the study's file, its system (blinding ends at the
#: researcher), whether it is a control and of which kind, and the two texts.
CANDIDATE_COLUMNS = ("original_id", "system", "is_control", "control_kind", "original", "candidate")

TIDY_EXPORT_COLUMNS = (
    "study",
    "judge",
    "item",
    "original_id",
    "system",
    "is_control",
    "control_kind",
    "criterion",
    "score",
    "seconds",
    "active_seconds",
    "submitted_at",
    "revision",
    "judge_excluded",
    "z",
)


def export_iso(dt: datetime | None) -> str:
    """A time as the exports write it (ISO 8601; empty: none)."""
    return dt.isoformat() if dt else ""


#: The last columns of a protocol's own CSV (ESA, ranking, side by side): how and when the
#: judgment was made (:func:`judgment_record_cells`).
RECORD_COLUMNS = ("revision", "source", "served_at", "submitted_at", "seconds", "active_seconds")


def judgment_record_cells(judgment) -> list:
    """A judgment's :data:`RECORD_COLUMNS` cells (times in ISO 8601, seconds to the millisecond,
    empty where unknown), for any protocol's judgment table (they share ``JudgmentBase``)."""
    return [
        judgment.revision,
        judgment.source,
        export_iso(judgment.served_at),
        export_iso(judgment.submitted_at),
        "" if judgment.seconds is None else round(judgment.seconds, 3),
        "" if judgment.active_seconds is None else round(judgment.active_seconds, 3),
    ]


def export_tidy_rows(*, study: Study) -> Iterator[list]:
    """The tidy CSV of ``study``, as its protocol gives its answers: its own rows (the
    unit's ``export_rows``: the absolute protocol's criteria), or the protocol's answers
    (:meth:`~annotation.judging.protocols.base.JudgingProtocol.export_answers`: an ESA score
    and its spans, a ranked candidate's rank, a pair's answer per question) in the same
    columns, ``criterion`` naming the answer and ``z`` empty."""
    unit = protocol_for_study(study=study)
    own = unit.export_rows(study=study, wide=False)
    if own is not None:  # the protocol's own rows (the absolute protocol's criteria, streamed)
        yield from own
        return
    questions = unit.export_questions(study=study) or []
    excluded = judges_excluded(study=study)
    yield list(TIDY_EXPORT_COLUMNS)
    for a in unit.export_answers(study=study):
        for q in questions:
            if q not in a.values:
                continue
            yield [
                study.name,
                a.judge,
                a.item,
                a.original_id,
                a.system,
                str(bool(a.control_kind)).lower(),
                a.control_kind,
                q,
                a.values[q],
                "" if a.seconds is None else f"{a.seconds:.3f}",
                "" if a.active_seconds is None else f"{a.active_seconds:.3f}",
                export_iso(a.submitted_at),
                a.revision,
                str(a.judge in excluded).lower(),
                "",
            ]


def export_wide_rows(*, study: Study) -> Iterator[list]:
    """The wide CSV of ``study``: a row per item and a column ``judge:answer`` per judge ×
    criterion of the design (the unit's ``export_rows``) or × answer of the study's protocol
    (see :func:`export_tidy_rows`), items in their original's order."""
    unit = protocol_for_study(study=study)
    own = unit.export_rows(study=study, wide=True)
    if own is not None:
        yield from own
        return
    questions = unit.export_questions(study=study) or []
    answers = list(unit.export_answers(study=study))
    judges = sorted({a.judge for a in answers})
    yield [
        "study",
        "item",
        *CANDIDATE_COLUMNS,
        *[f"{j}:{q}" for j in judges for q in questions],
    ]
    by_item: dict[str, list] = {}
    for a in answers:
        by_item.setdefault(a.item, []).append(a)
    for item, group in sorted(by_item.items(), key=lambda kv: (kv[1][0].original_id, kv[1][0].system, kv[0])):
        first = group[0]
        values = {a.judge: a.values for a in group}
        yield [
            study.name,
            item,
            first.original_id,
            first.system,
            str(bool(first.control_kind)).lower(),
            first.control_kind,
            first.original,
            first.candidate,
            *[values.get(j, {}).get(q, "") for j in judges for q in questions],
        ]

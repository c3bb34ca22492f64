"""The answers a dashboard shows: :func:`study_answers` asks the study's protocol unit
(``JudgingProtocol.dashboard_answers``), whose figures are plain JSON.

They are the heavy part of a dashboard: the worker calls them (never a poll) and the
snapshot keeps their result with the version stamp it was computed at. Each protocol
computes its own in its package's ``report.py`` (the absolute protocol's from
``build_report`` called as its report calls it; side by side, ESA and ranking from their
report's own result).
"""

from __future__ import annotations

from annotation.judging.protocols.registry import protocol_for_design
from annotation.judging.selectors.design import design_for_study
from annotation.models import Study


def study_answers(study: Study) -> dict:
    design = design_for_study(study=study)
    if design is None:
        return {"available": False, "reason": "No judging design yet."}
    unit = protocol_for_design(design)
    answers = unit.dashboard_answers(study=study)
    if answers is None:
        return {"available": False, "reason": f"No live figures for {unit.name} studies yet: build the report."}
    return answers

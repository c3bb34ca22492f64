"""What every protocol's judge endpoints ask first: the judged study (a 404 for a study the
user does not judge) and the judge's assignment of an open study, each one query on the
judge's hot path (:mod:`annotation.judging.selectors.hot_path`).

The endpoints are each protocol's (its package's ``apis.py``), most of them built by
:func:`annotation.judging.apis.protocol.judge_api_views`.
"""

from __future__ import annotations

from rest_framework.exceptions import NotFound, PermissionDenied

from annotation.enums import StudyStatus
from annotation.judging.selectors.hot_path import assignment_ready_for_judge, study_for_judge
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.models import Study
from annotation.selectors import ROLE_CONFLICT_HOLD_MESSAGE

from ..errors import StudyNotOpen


def get_judged_study(request, study_id: int) -> Study:
    """The study, if the requesting user judges it; 404 otherwise (existence is not revealed)."""
    # One query on the judge's hot path: being a judge here, and (user_role_conflict's
    # rule) also being an annotator of the same study, which holds the account out.
    study = study_for_judge(study_id=study_id, judge=request.user)
    if study is None:
        raise NotFound("You are not a judge of this study.")
    if study.judge_also_annotates:  # type: ignore[attr-defined]  # annotated by selectors.study_for_judge
        raise PermissionDenied(ROLE_CONFLICT_HOLD_MESSAGE)
    return study


def open_assignment_for_judge(request, study: Study):
    """The judge's assignment of an open study (built now if need be); StudyNotOpen otherwise."""
    if study.status != StudyStatus.OPEN:
        raise StudyNotOpen("This study is not open for judging.")
    # The common case in one query; otherwise the service decides (and may build it).
    assignment = assignment_ready_for_judge(study=study, judge=request.user) or assignment_ensure_for_judge(
        study=study, judge=request.user
    )
    if assignment is None:
        raise StudyNotOpen("This study is not open for judging yet.")
    return assignment

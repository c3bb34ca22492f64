"""Fixtures of the metric-run tests: a study with references and a control system."""

from __future__ import annotations

import pytest

from annotation.enums import SystemKind
from tests.factories import CandidateFactory, OriginalFactory, StudyFactory, SystemFactory

from .sentences import HUMAN, MACHINE, ORIGINALS, REFERENCES


def make_study(owner, *, with_references=True, with_control=True, missing_reference_at=None, name="Metric study"):
    """7 originals × (human, machine[, control_identical]) = 14 or 21 candidates."""
    study = StudyFactory(owner=owner, name=name)
    from annotation.services.membership import study_member_add

    study_member_add(study=study, user=owner, role="researcher")
    human = SystemFactory(study=study, name="human")
    machine = SystemFactory(study=study, name="machine")
    control = (
        SystemFactory(study=study, name="control:identical", kind=SystemKind.CONTROL_IDENTICAL)
        if with_control
        else None
    )
    for i, text in enumerate(ORIGINALS):
        ref = REFERENCES[i] if with_references and i != missing_reference_at else ""
        o = OriginalFactory(study=study, external_id=f"v{i}", text=text, reference=ref, position=i)
        CandidateFactory(original=o, system=human, text=HUMAN[i])
        CandidateFactory(original=o, system=machine, text=MACHINE[i])
        if control:
            CandidateFactory(original=o, system=control, text=text)
    return study


@pytest.fixture
def metric_study(researcher):
    return make_study(researcher)

"""Side-by-side comparison has no import format: the one import command, which asks the study's
unit, refuses its studies and writes nothing."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotation.judging.services.design import design_update
from annotation.models import Candidate
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db


def test_import_judgments_refuses_a_side_by_side_study(researcher, tmp_path):
    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="Side by side")
    design_update(study=study, changes={"protocol": "comparison"})
    path = tmp_path / "j.csv"
    path.write_text("judge,original_id,system,criterion,value\nann,s0,alpha,quality,3\n")
    before = Candidate.objects.filter(original__study=study).count()
    with pytest.raises(CommandError, match="side-by-side comparison; no file of its judgments can be imported"):
        call_command("import_judgments", str(path), "--study", study.name)
    assert Candidate.objects.filter(original__study=study).count() == before

"""ESA's import format behind the one import command: ``import_judgments`` asks the study's unit,
which reads a span file; ``import_esa_spans`` is the same door by its old name."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.judging.protocols.esa.models import EsaJudgment
from annotation.judging.services.design import design_update
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

LINE = {"judge": "ann", "original_id": "s0", "system": "alpha", "score": 70, "error_spans": []}


@pytest.fixture
def esa_study(researcher):
    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="ESA import")
    design_update(study=study, changes={"protocol": "esa"})
    return study


def _file(tmp_path, *lines):
    path = tmp_path / "spans.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_import_judgments_reads_a_span_file_into_an_esa_study(esa_study, tmp_path, capsys):
    call_command(
        "import_judgments", _file(tmp_path, LINE, LINE | {"system": "beta", "score": 30}), "--study", esa_study.name
    )
    assert sorted(EsaJudgment.objects.filter(study=esa_study).values_list("score", flat=True)) == [30, 70]
    assert "2 annotations (0 revisions) by 1 judges" in capsys.readouterr().out


def test_import_esa_spans_is_the_same_door_and_refuses_another_protocols_study(esa_study, researcher, tmp_path):
    call_command("import_esa_spans", _file(tmp_path, LINE), "--study", esa_study.name)
    assert EsaJudgment.objects.filter(study=esa_study).count() == 1
    absolute = study_with_data(owner=researcher, n_originals=1, systems=("alpha",), name="Absolute")
    with pytest.raises(CommandError, match="not judged with error span annotation"):
        call_command("import_esa_spans", _file(tmp_path, LINE), "--study", absolute.name)


def test_the_long_formats_options_are_refused_for_a_span_file(esa_study, tmp_path):
    for option in (["--mode", "add"], ["--format", "csv"]):
        with pytest.raises(CommandError, match="--format and --mode are for the long format"):
            call_command("import_judgments", _file(tmp_path, LINE), "--study", esa_study.name, *option)
    assert not EsaJudgment.objects.filter(study=esa_study).exists()

"""The ranking protocol's import format behind the one import command: ``import_judgments``
asks the study's unit, which reads a ranking file; ``import_rankings`` is the same door."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.judging.protocols.ranking.models import RankingJudgment
from annotation.judging.services.design import design_update
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

LINE = {"judge": "ann", "original_id": "s0", "ranking": ["alpha", ["beta", "gamma"]]}


@pytest.fixture
def rank_study(researcher):
    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta", "gamma"), name="Rank import")
    design_update(study=study, changes={"protocol": "ranking", "ranking_k": 3})
    return study


def _file(tmp_path, *lines):
    path = tmp_path / "rankings.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


def test_import_judgments_reads_a_ranking_file_into_a_ranking_study(rank_study, tmp_path, capsys):
    call_command("import_judgments", _file(tmp_path, LINE, LINE | {"original_id": "s1"}), "--study", rank_study.name)
    assert RankingJudgment.objects.filter(study=rank_study).count() == 2
    assert "2 lines, 2 rankings (0 revisions) by 1 judges" in capsys.readouterr().out


def test_import_rankings_is_the_same_door_and_refuses_another_protocols_study(rank_study, researcher, tmp_path):
    call_command("import_rankings", _file(tmp_path, LINE), "--study", rank_study.name)
    assert RankingJudgment.objects.filter(study=rank_study).count() == 1
    absolute = study_with_data(owner=researcher, n_originals=1, systems=("alpha",), name="Absolute")
    with pytest.raises(CommandError, match="not a ranking study"):
        call_command("import_rankings", _file(tmp_path, LINE), "--study", absolute.name)

"""load_demo's two small protocol studies: error spans (ESA, spans pre-filled by the aligner) and
ranking (k = 4), built from the demo study's own verses, owned by the demo researcher, opened
with the demo judges' work ready; blinded as the demo study is; created once."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.demo import DEMO_STUDY_NAME, DEMO_SYSTEMS, demo_verses
from annotation.judging.models import JudgingDesign
from annotation.judging.protocols.esa.models import EsaItem
from annotation.judging.protocols.esa.unit import ESA
from annotation.judging.protocols.ranking.models import RankingItem
from annotation.judging.protocols.ranking.unit import RANKING
from annotation.models import Candidate, Original, Study, StudyMembership
from tests.test_demo_study import _character_classes

pytestmark = pytest.mark.django_db
JUDGES = {"judge1", "judge2", "judge3"}
ESA_DEMO_NAME, RANKING_DEMO_NAME = ESA.demo.name, RANKING.demo.name


def _texts(study) -> dict[tuple[str, str], str]:
    return {
        (ext, system): text
        for ext, system, text in Candidate.objects.filter(original__study=study)
        .exclude(system__name__startswith="control:")
        .values_list("original__external_id", "system__name", "text")
    }


def test_load_demo_opens_an_esa_and_a_ranking_study_of_demo_verses_for_the_demo_judges(capsys):
    call_command("load_demo", "--quiet-credentials")
    out = capsys.readouterr().out
    demo = Study.objects.get(name=DEMO_STUDY_NAME)
    esa, ranking = Study.objects.get(name=ESA_DEMO_NAME), Study.objects.get(name=RANKING_DEMO_NAME)
    assert ESA_DEMO_NAME in out and RANKING_DEMO_NAME in out and "k = 4" in out
    assert Study.objects.count() == 3
    demo_texts = _texts(demo)
    assert len(demo_verses(source=demo)) == 70  # the verses a small study may take (demo_verses' docstring)
    for study in (esa, ranking):
        assert study.status == "open" and study.owner.username == "researcher"
        assert (
            set(StudyMembership.objects.filter(study=study, role="judge").values_list("user__username", flat=True))
            == JUDGES
        )
        assert Original.objects.filter(study=study).count() == 12
        texts = _texts(study)
        assert len(texts) == 12 * 4 and {s for _, s in texts} == set(DEMO_SYSTEMS)
        assert all(demo_texts[key] == text for key, text in texts.items())  # the demo's verses, as the demo shows them
        # every candidate differs from its original and from the other three versions
        for original in Original.objects.filter(study=study):
            shown = [c.text for c in original.candidates.exclude(system__name__startswith="control:")]
            assert len({*shown, original.text}) == 5
    assert not set(Original.objects.filter(study=esa).values_list("external_id", flat=True)) & set(
        Original.objects.filter(study=ranking).values_list("external_id", flat=True)
    )

    design = JudgingDesign.objects.get(study=esa)
    assert (design.protocol, design.esa_prefill) == ("esa", "aligner")
    for judge in JUDGES:
        items = EsaItem.objects.filter(assignment__study=esa, assignment__judge__username=judge)
        assert items.count() == 12 * (4 + 2)  # four versions and two controls per verse
        assert items.filter(is_control=True).count() == 24
    proposed = EsaItem.objects.filter(assignment__study=esa).exclude(proposed=[])
    assert proposed.filter(is_control=False).count() > 3 * 12 * 2  # the aligner suggests spans on most versions

    design = JudgingDesign.objects.get(study=ranking)
    assert (design.protocol, design.ranking_k) == ("ranking", 4)
    for judge in JUDGES:
        sets = RankingItem.objects.filter(assignment__study=ranking, assignment__judge__username=judge)
        assert sets.count() == 12 * 3  # one set of the four versions and one per control, per verse
        assert all(len(s.candidates) == 4 for s in sets)
        genuine = sets.filter(is_control=False)
        assert genuine.count() == 12
        for s in genuine:
            assert set(Candidate.objects.filter(pk__in=s.candidates).values_list("system__name", flat=True)) == set(
                DEMO_SYSTEMS
            )


def test_a_second_load_demo_adds_nothing_and_an_older_demo_gains_the_two_studies(monkeypatch, capsys):
    import annotation.demo

    monkeypatch.setattr(annotation.demo, "DEMO_STUDY_HOOKS", ())
    call_command("load_demo", "--quiet-credentials")  # a demo loaded before the protocol studies existed
    assert list(Study.objects.values_list("name", flat=True)) == [DEMO_STUDY_NAME]
    monkeypatch.undo()
    call_command("load_demo", "--quiet-credentials")
    assert "Already loaded" in capsys.readouterr().out
    assert Study.objects.filter(name__in=(ESA_DEMO_NAME, RANKING_DEMO_NAME), status="open").count() == 2

    def counts():
        return (
            Study.objects.count(),
            Candidate.objects.count(),
            EsaItem.objects.count(),
            RankingItem.objects.count(),
            StudyMembership.objects.count(),
        )

    before = counts()
    call_command("load_demo", "--quiet-credentials")
    assert counts() == before
    assert ESA_DEMO_NAME not in capsys.readouterr().out.replace("Already loaded", "")


@pytest.mark.parametrize("name", [ESA_DEMO_NAME, RANKING_DEMO_NAME])
def test_the_protocol_demo_studies_are_blinded_as_the_demo_study_is(name):
    """No mark tells a system apart within the small study (each text of its verses uses exactly the marks space, comma and full stop),
    and judge1's page shows no system name, control word or study name."""
    call_command("load_demo", "--quiet-credentials")
    study = Study.objects.get(name=name)
    per_system: dict[str, set[str]] = {}
    for system, text in Candidate.objects.filter(original__study=study).values_list("system__name", "text"):
        per_system.setdefault(system, set()).update(_character_classes(text))
    assert len(per_system) == 6  # four versions, the identical copy and the unrelated verse
    tells = set.union(*per_system.values()) - set.intersection(*per_system.values())
    assert tells == set()

    client = Client()
    client.force_login(study.memberships.get(user__username="judge1").user)
    start = client.post(f"/judge/studies/{study.pk}/instructions/")
    assert start.status_code == 302
    page = client.get(f"/judge/studies/{study.pk}/", follow=True)
    html = page.content.decode()
    assert page.status_code == 200 and 'name="token"' in html
    words = re.compile(
        "|".join(re.escape(w) for w in (*DEMO_SYSTEMS, "control", "identical", "random", "Demo:", "KJV", "WEB")), re.I
    )
    assert words.findall(re.sub(r'name="(key|csrfmiddlewaretoken|serve)" value="[^"]*"', "", html)) == []

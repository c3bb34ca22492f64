"""Document context: the judge sees the sentences around the original, and is told when there are none."""

from __future__ import annotations

import pytest

from annotation.judging.protocols.absolute.selectors import item_for_judge, item_next_for_judge
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Original

pytestmark = pytest.mark.django_db


def _open(study, add_judge, *, show: bool):
    # s0..s3 form one document in import order; s4 stands alone.
    for i, o in enumerate(Original.objects.filter(study=study).order_by("position")):
        o.document = "doc-a" if i < 4 else ""
        o.position = i
        o.save()
    ann = add_judge(study, "ann")
    design_update(
        study=study,
        changes={"show_context": show, "seed": 3, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    return ann, assignment_for_judge(study=study, judge=ann)


def test_the_item_carries_the_neighbouring_sentences_of_its_document(study, add_judge):
    ann, assignment = _open(study, add_judge, show=True)
    texts = {o.external_id: o.text for o in Original.objects.filter(study=study)}
    seen = {}
    for item in assignment.items.select_related("candidate__original"):
        j = item_for_judge(study=study, judge=ann, token=item.token)
        seen[item.candidate.original.external_id] = (j.context_before, j.context_after)
        assert j.context_shown
    assert seen["s0"] == ((), (texts["s1"], texts["s2"]))
    assert seen["s2"] == ((texts["s0"], texts["s1"]), (texts["s3"],))
    assert seen["s4"] == ((), ())


def test_the_page_shows_context_collapsible_or_says_there_is_none(client, study, add_judge):
    ann, assignment = _open(study, add_judge, show=True)
    client.force_login(ann)
    client.post(f"/judge/studies/{study.pk}/instructions/")
    by_original = {
        i.candidate.original.external_id: i.token for i in assignment.items.select_related("candidate__original")
    }
    page = client.get(f"/judge/studies/{study.pk}/items/{by_original['s1']}/").content.decode()
    assert '<section class="context"' in page and "<details open>" in page
    assert Original.objects.get(study=study, external_id="s0").text in page
    alone = client.get(f"/judge/studies/{study.pk}/items/{by_original['s4']}/").content.decode()
    assert "No context for this pair" in alone


def test_without_the_setting_no_context_is_sent(client, study, add_judge):
    ann, assignment = _open(study, add_judge, show=False)
    item = item_next_for_judge(assignment=assignment)
    assert not item.context_shown and item.context_before == () and item.context_after == ()
    client.force_login(ann)
    client.post(f"/judge/studies/{study.pk}/instructions/")
    assert 'class="context"' not in client.get(f"/judge/studies/{study.pk}/").content.decode()

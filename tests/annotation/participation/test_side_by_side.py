"""A side-by-side study through a join link (issue 24, item 2): participants are given pairs,
judge them on the compare page, and get the completion code only once every pair is answered."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.protocols.side_by_side.models import ComparisonItem, ComparisonJudgment
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Participant
from annotation.participation import services

from .conftest import join, prolific_params

pytestmark = pytest.mark.django_db
CODE = "C1A2B3C4"


@pytest.fixture
def cmp_field_study(study):
    """The fixture study (5 originals × 2 systems) judged side by side, opened with no judges."""
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 11, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def cmp_link(cmp_field_study, researcher):
    return services.join_link_create(
        study=cmp_field_study,
        role="judge",
        platform="prolific",
        created_by=researcher,
        completion_code=CODE,
        screen_out_code="SCREEN01",
    )


def _answer_on_the_page(client, study, answer="A") -> int:
    """Answer every pair through the compare page's form; returns how many were answered."""
    n = 0
    while True:
        r = client.get(f"/judge/studies/{study.pk}/compare/")
        assert r.status_code == 200, r.status_code
        html = r.content.decode()
        token = re.search(r'name="token" value="([^"]+)"', html)
        if token is None:
            return n
        form = {k: re.search(rf'name="{k}" value="([^"]*)"', html).group(1) for k in ("serve", "key")}
        r = client.post(
            f"/judge/studies/{study.pk}/compare/submit/", {"token": token.group(1), "preference": answer, **form}
        )
        assert r.status_code == 302, r.content
        n += 1


def test_a_side_by_side_participant_is_given_pairs_and_sent_to_the_compare_page(cmp_link, cmp_field_study):
    client, welcome = join(cmp_link, prolific_params())
    assert welcome.status_code == 200
    p = Participant.objects.get()
    assignment = Assignment.objects.get(study=cmp_field_study, judge=p.user)
    assert ComparisonItem.objects.filter(assignment=assignment).count() == assignment.n_items == 5
    assert not AssignmentItem.objects.filter(assignment=assignment).exists()  # no rating items
    go = client.get(welcome.context["next_url"])
    assert go.status_code == 302 and go["Location"] == f"/judge/studies/{cmp_field_study.pk}/compare/"
    first = client.get(go["Location"])  # the instructions first, then pairs: never a 500
    assert first.status_code == 302 and first["Location"].endswith("/instructions/")
    assert b"Which paraphrase is better?" in client.get(first["Location"]).content
    client.post(first["Location"])
    page = client.get(go["Location"])
    assert page.status_code == 200 and b"Paraphrase A" in page.content


def test_the_completion_code_comes_only_once_every_pair_is_answered(cmp_link, cmp_field_study):
    client, welcome = join(cmp_link, prolific_params())
    client.post(f"/judge/studies/{cmp_field_study.pk}/instructions/")
    user = Participant.objects.get().user
    # the rating door gives nothing away before the pairs are done: no code, no "finished"
    done = client.get(f"/judge/studies/{cmp_field_study.pk}/done/")
    assert done.status_code == 302 and done["Location"].endswith("/compare/")
    r = client.get(f"/api/judging/studies/{cmp_field_study.pk}/items/next/")
    assert r.status_code == 409 and CODE not in r.content.decode()
    assert _answer_on_the_page(client, cmp_field_study, answer="B") == 5
    assert ComparisonJudgment.objects.filter(judge=user, is_latest=True).count() == 5
    end = client.get(f"/judge/studies/{cmp_field_study.pk}/compare/")
    assert end.status_code == 200 and CODE in end.content.decode()
    assert Participant.objects.get().completed_at is not None
    from annotation.participation.selectors import participants_rows

    (row,) = participants_rows(study=cmp_field_study)  # the researcher's table counts pairs
    assert (row["status"], row["items_done"], row["items_total"]) == ("completed", 5, 5)
    done = client.get(f"/judge/studies/{cmp_field_study.pk}/done/")
    assert done.status_code == 302 and done["Location"].endswith("/compare/")


def test_pairs_per_participant_are_balanced_and_a_timed_out_participants_pairs_released(cmp_field_study, researcher):
    link = services.join_link_create(
        study=cmp_field_study, role="judge", created_by=researcher, items_per_participant=2, timeout_minutes=30
    )
    join(link)
    join(link)
    join(link)
    held = list(
        ComparisonItem.objects.filter(assignment__study=cmp_field_study).values_list("left__original_id", flat=True)
    )
    assert len(held) == 6 and max(held.count(o) for o in set(held)) == 2 and len(set(held)) == 5
    assert services.participants_release_timed_out(now=timezone.now() + timedelta(hours=1)) == 3
    assert not ComparisonItem.objects.filter(assignment__study=cmp_field_study).exists()
    assert all(a.n_items == 0 for a in Assignment.objects.filter(study=cmp_field_study))


def test_the_design_page_sets_up_side_by_side_training_and_attention_checks(cmp_field_study, researcher):
    """Issue 24: the training section takes pairs with reference answers (form and file) and the
    rules (no tolerance per criterion: answers are A, tie or B)."""
    from django.test import Client

    from annotation.judging import training
    from annotation.judging.models import ScreeningSettings

    client = Client()
    client.force_login(researcher)
    url = f"/studies/{cmp_field_study.pk}/judging/design/"
    html = client.get(url).content.decode()
    assert 'id="no-screening"' not in html and 'id="training-comparison-note"' in html
    assert 'name="a"' in html and 'name="b"' in html and '<select name="preference"' in html
    assert 'name="tolerance_' not in html and 'name="training_tolerance"' not in html
    assert "Training: questions checked" in html
    client.post(
        f"/studies/{cmp_field_study.pk}/judging/training/",
        {"original": "O.", "a": "A text.", "b": "B text.", "preference": "B", "explanation": "Why."},
    )
    (item,) = training.training_items(study=cmp_field_study)
    assert item.expected == {"b": "B text.", "answers": {"preference": "B"}}
    html = client.get(url).content.decode()
    assert "A text." in html and "B text." in html and "preference B" in html
    r = client.post(
        f"/studies/{cmp_field_study.pk}/judging/screening/",
        {
            "training_criteria": "preference",
            "training_required": "0",
            "training_retries": "1",
            "training_items_per_attempt": "",
            "attention_count": "2",
            "attention_policy": "end",
            "attention_max_failures": "1",
            "qc_auto_pvalue": "0.01",
            "qc_auto_min_controls": "10",
        },
    )
    assert r.status_code == 302
    saved = ScreeningSettings.objects.get(study=cmp_field_study)
    assert saved.attention_count == 2 and saved.training_criteria == ["preference"]

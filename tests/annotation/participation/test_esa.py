"""An ESA study through a join link: participants are given items (with their proposals),
annotate them on the ESA page, get the completion code only once every item is done; a
participant who keeps annotating is not timed out, an idle one's items are released."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.protocols.esa.models import EsaItem, EsaJudgment
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Participant
from annotation.participation import services

from .conftest import join, prolific_params

pytestmark = pytest.mark.django_db
CODE = "E5A6B7C8"


@pytest.fixture
def esa_field_study(study):
    """The fixture study (5 originals × 2 systems) judged with ESA, opened with no judges."""
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "seed": 11,
            "esa_prefill": "aligner",
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def _annotate_on_the_page(client, study) -> int:
    n = 0
    while True:
        html = client.get(f"/judge/studies/{study.pk}/esa/").content.decode()
        token = re.search(r'name="token" value="([^"]+)"', html)
        if token is None:
            return n
        form = {k: re.search(rf'name="{k}" value="([^"]*)"', html).group(1) for k in ("serve", "key")}
        data = json.loads(
            re.search(r'<script id="esa-data" type="application/json">(.*?)</script>', html, re.S).group(1)
        )
        r = client.post(
            f"/judge/studies/{study.pk}/esa/submit/",
            {"token": token.group(1), "spans": json.dumps(data["spans"]), "score": "55", **form},
        )
        assert r.status_code == 302, r.content
        n += 1


def test_an_esa_participant_annotates_every_item_and_then_gets_the_code(esa_field_study, researcher):
    link = services.join_link_create(
        study=esa_field_study,
        role="judge",
        platform="prolific",
        created_by=researcher,
        completion_code=CODE,
        screen_out_code="SCREEN01",
    )
    client, welcome = join(link, prolific_params())
    assert welcome.status_code == 200
    user = Participant.objects.get().user
    assignment = Assignment.objects.get(study=esa_field_study, judge=user)
    assert EsaItem.objects.filter(assignment=assignment).count() == assignment.n_items == 10
    assert not AssignmentItem.objects.filter(assignment=assignment).exists()
    go = client.get(welcome.context["next_url"])
    assert go.status_code == 302 and go["Location"] == f"/judge/studies/{esa_field_study.pk}/esa/"
    client.post(f"/judge/studies/{esa_field_study.pk}/instructions/")
    assert _annotate_on_the_page(client, esa_field_study) == 10
    assert EsaJudgment.objects.filter(judge=user, is_latest=True).count() == 10
    end = client.get(f"/judge/studies/{esa_field_study.pk}/esa/")
    assert end.status_code == 200 and CODE in end.content.decode()
    from annotation.participation.selectors import participants_rows

    (row,) = participants_rows(study=esa_field_study)
    assert (row["status"], row["items_done"], row["items_total"]) == ("completed", 10, 10)


def test_a_working_participant_is_not_timed_out_and_an_idle_ones_items_are_released(esa_field_study, researcher):
    link = services.join_link_create(
        study=esa_field_study, role="judge", created_by=researcher, items_per_participant=2, timeout_minutes=30
    )
    busy, _ = join(link)
    join(link)
    busy_user = Participant.objects.order_by("pk").first().user
    Participant.objects.update(consented_at=timezone.now() - timedelta(hours=1))
    busy.post(f"/judge/studies/{esa_field_study.pk}/instructions/")
    html = busy.get(f"/judge/studies/{esa_field_study.pk}/esa/").content.decode()
    form = {k: re.search(rf'name="{k}" value="([^"]*)"', html).group(1) for k in ("token", "serve", "key")}
    assert (
        busy.post(
            f"/judge/studies/{esa_field_study.pk}/esa/submit/", {**form, "spans": "[]", "score": "60"}
        ).status_code
        == 302
    )
    assert services.participants_release_timed_out(now=timezone.now() + timedelta(minutes=5)) == 1
    assert Participant.objects.get(user=busy_user).timed_out_at is None
    assert EsaItem.objects.filter(assignment__study=esa_field_study).count() == 2


def test_an_esa_participants_qc_verdict_comes_from_their_annotations(study, researcher):
    """The participants table's QC column reads the ESA judgments (it said "no data" for every
    ESA participant): a participant who marks a major error on every identical copy fails the
    protocol's control checks; before any annotation there is no data."""
    from annotation.judging.protocols.esa import services as esa
    from annotation.participation.selectors import participants_rows

    design_update(
        study=study,
        changes={"protocol": "esa", "seed": 11, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    link = services.join_link_create(study=study, role="judge", created_by=researcher)
    join(link)
    user = Participant.objects.get().user
    (row,) = participants_rows(study=study)
    assert row["qc_verdict"] == "no data"
    assignment = Assignment.objects.get(study=study, judge=user)
    while (entry := esa.esa_item_next_for_judge(assignment=assignment)) is not None:
        major = [{"side": "candidate", "start": 0, "end": len(entry.candidate.split()[0]), "severity": "major"}]
        esa.esa_submit(
            study=study,
            judge=user,
            token=entry.token,
            key=f"k-{entry.token}",
            spans=major,
            score=90,
            serve_stamp=entry.serve_stamp,
        )
    (row,) = participants_rows(study=study)
    assert row["items_done"] == assignment.n_items
    assert row["qc_verdict"] == "flagged: control checks"

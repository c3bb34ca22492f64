"""A ranking study through a join link: a participant who keeps ranking keeps their seat and
items; an idle one times out (issue 38 item 2: the seat release read only three tables)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.judging.models import Assignment
from annotation.judging.protocols.ranking import services as ranking
from annotation.judging.protocols.ranking.models import RankingItem
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Participant
from annotation.participation import services
from annotation.participation.selectors import join_link_seat_frees_at
from tests.annotation.judging.conftest import new_key

from .conftest import join

pytestmark = pytest.mark.django_db


@pytest.fixture
def ranking_field_study(study):
    """The fixture study (5 originals × 2 systems) ranked in sets of 2, opened with no judges."""
    design_update(
        study=study,
        changes={
            "protocol": "ranking",
            "ranking_k": 2,
            "seed": 5,
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def _rank_one(study, user):
    entry = ranking.ranking_next_for_judge(assignment=Assignment.objects.get(study=study, judge=user))
    ranking.ranking_submit(
        study=study, judge=user, token=entry.token, key=new_key(), order=[2, 1], serve_stamp=entry.serve_stamp
    )


def test_a_participant_who_just_ranked_keeps_their_seat_and_items(ranking_field_study, researcher):
    link = services.join_link_create(
        study=ranking_field_study, role="judge", created_by=researcher, items_per_participant=3, timeout_minutes=30
    )
    join(link)
    join(link)
    busy, idle = (p.user for p in Participant.objects.order_by("pk"))
    Participant.objects.update(consented_at=timezone.now() - timedelta(hours=1))
    _rank_one(ranking_field_study, busy)  # just now: 25 minutes before the release below

    assert services.participants_release_timed_out(now=timezone.now() + timedelta(minutes=5)) == 1
    assert Participant.objects.get(user=busy).timed_out_at is None
    assert Participant.objects.get(user=idle).timed_out_at is not None
    assert RankingItem.objects.filter(assignment__judge=busy).count() == 3  # none released
    assert not RankingItem.objects.filter(assignment__judge=idle).exists()


def test_a_ranking_participants_seat_frees_a_timeout_after_their_last_ranking(ranking_field_study, researcher):
    link = services.join_link_create(
        study=ranking_field_study, role="judge", created_by=researcher, items_per_participant=3, timeout_minutes=30
    )
    join(link)
    participant = Participant.objects.get()
    Participant.objects.update(consented_at=timezone.now() - timedelta(hours=1))
    before = timezone.now()
    _rank_one(ranking_field_study, participant.user)

    frees = join_link_seat_frees_at(link=link)
    assert frees is not None and frees >= before + timedelta(minutes=30)

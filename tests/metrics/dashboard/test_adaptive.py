"""Adaptive allocation in a study: the hook reorders only the judge's own next items, keeps every
fairness rule, and the study stops by itself when the ranking is stable."""

from __future__ import annotations

from collections import Counter

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.adaptive import publication, refresh
from annotation.adaptive import services as adaptive
from annotation.adaptive.models import AdaptiveAllocation
from annotation.judging.models import Assignment, AssignmentItem
from annotation.judging.selectors.hot_path import item_next_for_judge_fast
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.judging.services.submission import judgment_submit
from annotation.services.membership import study_member_add
from metrics.reports.services.simulation import simulated_judges_fill
from tests.metrics.reports.conftest import make_study_data, open_judging

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_cache():
    publication.adaptive_cache_clear()
    yield
    publication.adaptive_cache_clear()


def _study(researcher, make_user, *, judges=("ann", "bob")):
    study = make_study_data(researcher, name="Adaptive", n_originals=8, systems=("human", "machine", "mt"))
    for name in judges:
        study_member_add(study=study, user=make_user(name), role="judge")
    return open_judging(study)


def _rate(study, username, value_of, n):
    """``username`` rates their next ``n`` items through the hot path, each item by its system."""
    user = Assignment.objects.get(study=study, judge__username=username).judge
    a = assignment_for_judge(study=study, judge=user)
    for _ in range(n):
        item = item_next_for_judge_fast(assignment=a)
        if item is None:
            return
        row = AssignmentItem.objects.select_related("candidate__system").get(token=item.token)
        v = value_of(row.candidate.system.name)
        judgment_submit(
            study=study,
            judge=user,
            token=item.token,
            key=f"k-{item.token}",
            scores={"adequacy": v, "fluency": v, "dissimilarity": 3, "overall": v},
            serve_stamp=item.serve_stamp,
        )


def test_a_study_without_the_option_pays_no_query_for_it(researcher, make_user):
    study = _study(researcher, make_user)
    a = Assignment.objects.filter(study=study).first()
    with CaptureQueriesContext(connection) as ctx:
        item_next_for_judge_fast(assignment=a)
    assert len(ctx.captured_queries) == 1


def test_the_hook_serves_the_most_informative_item_among_the_judges_next_ones(researcher, make_user, settings):
    study = _study(researcher, make_user)
    adaptive.adaptive_settings_update(study=study, changes={"enabled": True, "window": 20})
    publication.adaptive_publish()
    # Priorities as the worker would leave them: "mt" needs judgments most.
    AdaptiveAllocation.objects.filter(study=study).update(
        priorities={"human": 0.1, "machine": 0.2, "mt": 9.0}, refreshed_at="2999-01-01T00:00:00Z"
    )
    publication.adaptive_publish()
    a = Assignment.objects.get(study=study, judge__username="ann")
    before = set(AssignmentItem.objects.filter(assignment=a).values_list("candidate_id", flat=True))
    window = list(
        AssignmentItem.objects.filter(assignment=a).select_related("candidate__system").order_by("position")[:20]
    )
    item = item_next_for_judge_fast(assignment=a)
    served = AssignmentItem.objects.select_related("candidate__system").get(token=item.token)
    head = window[0].candidate.system.kind
    if head.startswith("control"):  # a control at the head keeps its place
        assert served.pk == window[0].pk
    else:
        assert served.candidate.system.name == "mt" and served.position == 1
    # The judge's set of items is unchanged (k per item and balance hold), positions stay 1..n.
    assert set(AssignmentItem.objects.filter(assignment=a).values_list("candidate_id", flat=True)) == before
    assert sorted(AssignmentItem.objects.filter(assignment=a).values_list("position", flat=True)) == list(
        range(1, a.n_items + 1)
    )
    assert "mt" not in item.original + item.paraphrase and not hasattr(item, "system")  # blinding


def test_refresh_ranks_priorities_and_the_study_stops_by_itself_when_stable(researcher, make_user):
    study = _study(researcher, make_user)
    adaptive.adaptive_settings_update(
        study=study, changes={"enabled": True, "stop_when_stable": True, "level": 0.05, "min_judgments": 5}
    )
    means = {"human": 5, "machine": 3, "mt": 1}  # far apart: stable quickly
    _rate(study, "ann", lambda s: means.get(s, 3), 20)
    out = refresh.adaptive_refresh(study=study)
    allocation = AdaptiveAllocation.objects.get(study=study)
    assert out["stopped"] and allocation.stopped_at is not None and "stable" in allocation.stop_reason
    assert out["wrong_bound"] <= 0.05
    # Every judge's unrated items were released: judges (and participants) have finished.
    for a in Assignment.objects.filter(study=study):
        assert not AssignmentItem.objects.filter(assignment=a, done_at__isnull=True).exists()
        assert item_next_for_judge_fast(assignment=a) is None
    assert not publication.adaptive_study(study.pk)


def test_a_close_race_does_not_stop_and_points_at_the_unseparated_pair(researcher, make_user):
    study = _study(researcher, make_user)
    adaptive.adaptive_settings_update(
        study=study, changes={"enabled": True, "stop_when_stable": True, "min_judgments": 5}
    )
    simulated_judges_fill(study=study, n_judges=2, seed=4, item_sd=1.2)
    out = refresh.adaptive_refresh(study=study)
    assert not out["stopped"] or out["wrong_bound"] <= 0.05
    assert set(out["priorities"]) == {"human", "machine", "mt"}


def test_k_per_item_and_balance_hold_after_a_whole_adaptive_study(researcher, make_user):
    study = make_study_data(researcher, name="Balanced", n_originals=6, systems=("human", "machine"))
    for name in ("ann", "bob", "cat"):
        study_member_add(study=study, user=make_user(name), role="judge")
    design_update(study=study, changes={"judges_mode": "k", "judges_per_item": 2, "seed": 3})
    study_judging_open(study=study)
    adaptive.adaptive_settings_update(study=study, changes={"enabled": True})
    for name in ("ann", "bob", "cat"):
        refresh.adaptive_refresh(study=study)
        _rate(study, name, lambda s: 4 if s == "human" else 2, 100)
    per_item = Counter(
        AssignmentItem.objects.filter(assignment__study=study, done_at__isnull=False).values_list(
            "candidate_id", flat=True
        )
    )
    assert set(per_item.values()) == {2}
    loads = [a.n_items for a in Assignment.objects.filter(study=study)]
    assert max(loads) - min(loads) <= 1


def test_bad_settings_are_named(researcher, make_user):
    from django.core.exceptions import ValidationError

    study = _study(researcher, make_user)
    with pytest.raises(ValidationError) as exc:
        adaptive.adaptive_settings_update(study=study, changes={"level": 2.0})
    assert "level" in exc.value.message_dict
    with pytest.raises(ValidationError):
        adaptive.adaptive_settings_update(study=study, changes={"colour": "red"})


def test_the_adaptive_api_turns_it_on_for_researchers_only(researcher, make_user):
    from rest_framework.test import APIClient

    study = _study(researcher, make_user)
    client = APIClient()
    client.force_authenticate(researcher)
    r = client.patch(f"/api/dashboard/studies/{study.pk}/adaptive/", {"enabled": True, "level": 0.1}, format="json")
    assert r.status_code == 200 and r.json()["enabled"] and r.json()["level"] == 0.1
    assert client.patch(f"/api/dashboard/studies/{study.pk}/adaptive/", {"level": 3}, format="json").status_code == 400
    judge = APIClient()
    judge.force_authenticate(Assignment.objects.filter(study=study).first().judge)
    assert (
        judge.patch(f"/api/dashboard/studies/{study.pk}/adaptive/", {"enabled": False}, format="json").status_code
        == 403
    )


def test_a_side_by_side_study_cannot_turn_it_on(researcher, make_user):
    from django.core.exceptions import ValidationError

    study = make_study_data(researcher, name="Side by side", n_originals=4, systems=("a", "b"))
    design_update(study=study, changes={"protocol": "comparison"})
    with pytest.raises(ValidationError) as exc:
        adaptive.adaptive_settings_update(study=study, changes={"enabled": True})
    assert "absolute ratings" in str(exc.value)

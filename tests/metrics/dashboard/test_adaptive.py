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
from annotation.enums import SystemKind
from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.hot_path import item_next_for_judge_fast
from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.services.membership import study_member_add
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
    publication.adaptive_publish()  # as every process finds it once anything published the list
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
    study = _study(researcher, make_user, judges=("ann", "bob", "cat", "dan"))
    adaptive.adaptive_settings_update(
        study=study, changes={"enabled": True, "stop_when_stable": True, "level": 0.05, "min_judgments": 5}
    )
    means = {"human": 5, "machine": 3, "mt": 1}  # far apart: stable quickly
    for name in ("ann", "bob", "cat"):
        _rate(study, name, lambda s: means.get(s, 3), 10)
    out = refresh.adaptive_refresh(study=study)
    allocation = AdaptiveAllocation.objects.get(study=study)
    assert out["stopped"] and allocation.stopped_at is not None and "stable" in allocation.stop_reason
    assert out["wrong_bound"] <= 0.05 and out["judges"] == 3 and "3 judges" in allocation.stop_reason
    assert not publication.adaptive_study(study.pk)
    # Dan never started: every item of his was released, he has finished.
    dan = Assignment.objects.get(study=study, judge__username="dan")
    assert not AssignmentItem.objects.filter(assignment=dan, done_at__isnull=True).exists()
    dan.refresh_from_db()
    assert item_next_for_judge_fast(assignment=dan) is None and dan.n_items == 0
    # The three who were judging keep only the item on their screen; rating it is stored, then they have finished.
    for name in ("ann", "bob", "cat"):
        a = Assignment.objects.get(study=study, judge__username=name)
        assert AssignmentItem.objects.filter(assignment=a, done_at__isnull=True).count() == 1
        _rate(study, name, lambda s: means.get(s, 3), 1)
        assert AssignmentItem.objects.filter(assignment=a, done_at__isnull=False).count() == 11
        assert item_next_for_judge_fast(assignment=a) is None


def test_one_judge_alone_can_never_stop_the_study(researcher, make_user):
    """Issue 38: one judge scoring by text similarity (never seeing a system) drove P(wrong) to
    0.026 and stopped the study for everyone."""
    study = _study(researcher, make_user, judges=("ann", "bob", "cat"))
    adaptive.adaptive_settings_update(
        study=study, changes={"enabled": True, "stop_when_stable": True, "level": 0.05, "min_judgments": 5}
    )
    means = {"human": 5, "machine": 3, "mt": 1}
    _rate(study, "ann", lambda s: means.get(s, 3), 100)  # all of her items, perfectly consistent
    out = refresh.adaptive_refresh(study=study)
    assert out["wrong_bound"] <= 0.05  # the evidence looks conclusive ...
    assert not out["stopped"] and "1 of the 3 judges" in out["held"]  # ... but it is one judge's
    allocation = AdaptiveAllocation.objects.get(study=study)
    assert allocation.stopped_at is None and allocation.judges_seen == 1 and allocation.largest_judge_share == 1.0
    bob = Assignment.objects.get(study=study, judge__username="bob")
    assert AssignmentItem.objects.filter(assignment=bob, done_at__isnull=True).count() == bob.n_items > 0
    # Nor can a setting make one judge enough.
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as exc:
        adaptive.adaptive_settings_update(study=study, changes={"min_judges": 1})
    assert "min_judges" in exc.value.message_dict


def test_one_judge_with_most_of_the_judgments_holds_the_stop(researcher, make_user):
    study = _study(researcher, make_user, judges=("ann", "bob", "cat"))
    adaptive.adaptive_settings_update(
        study=study, changes={"enabled": True, "stop_when_stable": True, "level": 0.05, "min_judgments": 5}
    )
    means = {"human": 5, "machine": 3, "mt": 1}
    _rate(study, "ann", lambda s: means.get(s, 3), 20)
    _rate(study, "bob", lambda s: means.get(s, 3), 5)
    _rate(study, "cat", lambda s: means.get(s, 3), 5)
    out = refresh.adaptive_refresh(study=study)
    assert out["judges"] == 3 and out["wrong_bound"] <= 0.05
    assert not out["stopped"] and "one judge gave" in out["held"] and "at most 50%" in out["held"]
    adaptive.adaptive_settings_update(study=study, changes={"max_judge_share": 0.9})
    assert refresh.adaptive_refresh(study=study)["stopped"]


def test_excluded_and_screened_out_judges_do_not_count(researcher, make_user):
    from django.utils import timezone

    from annotation.judging.services.exclusions import judge_exclusion_set

    study = _study(researcher, make_user, judges=("ann", "bob", "cat", "dan"))
    adaptive.adaptive_settings_update(
        study=study, changes={"enabled": True, "stop_when_stable": True, "level": 0.05, "min_judgments": 5}
    )
    means = {"human": 5, "machine": 3, "mt": 1}
    for name in ("ann", "bob", "cat", "dan"):
        _rate(study, name, lambda s: means.get(s, 3), 6)
    cat = Assignment.objects.get(study=study, judge__username="cat").judge
    judge_exclusion_set(study=study, judge=cat, excluded=True, decided_by=researcher, reason="copies")
    Assignment.objects.filter(study=study, judge__username="dan").update(
        screened_out_at=timezone.now(), screened_out_rule="qc"
    )
    out = refresh.adaptive_refresh(study=study)
    assert out["judges"] == 2 and not out["stopped"] and "2 of the 3 judges" in out["held"]
    counted = (
        Judgment.objects.filter(study=study, is_latest=True, judge__username__in=("ann", "bob"))
        .exclude(item__candidate__system__kind__in=SystemKind.control_kinds())
        .count()
    )
    assert out["judgments"] == counted == AdaptiveAllocation.objects.get(study=study).judgments_seen
    # A wildly different excluded judge moves neither the tallies nor the priorities.
    before = out["priorities"]
    _rate(study, "cat", lambda s: 6 - means.get(s, 3), 10)
    after = refresh.adaptive_refresh(study=study)
    assert after["judgments"] == counted and after["priorities"] == before


def test_the_stop_keeps_the_item_a_judge_is_rating_and_stores_its_judgment(researcher, make_user):
    """A judge who has an item on screen when the study stops gets that judgment stored (the
    stop released it before, and the submission found no item)."""
    study = _study(researcher, make_user, judges=("ann", "bob", "cat"))
    adaptive.adaptive_settings_update(study=study, changes={"enabled": True, "stop_when_stable": True})
    _rate(study, "ann", lambda s: 3, 2)
    ann = Assignment.objects.get(study=study, judge__username="ann")
    shown = item_next_for_judge_fast(assignment=ann)
    result = refresh.adaptive_stop(study=study, reason="test")
    assert result.stopped and result.released > 0 and result.left == 1
    stored = judgment_submit(
        study=study,
        judge=ann.judge,
        token=shown.token,
        key="on-screen-at-the-stop",
        scores={"adequacy": 3, "fluency": 3, "dissimilarity": 3, "overall": 3},
        serve_stamp=shown.serve_stamp,
    )
    assert stored.created and Judgment.objects.filter(key="on-screen-at-the-stop", item__token=shown.token).exists()
    assert item_next_for_judge_fast(assignment=ann) is None
    # A second stop (two refreshes at once) stops nothing twice.
    assert not refresh.adaptive_stop(study=study, reason="again").stopped


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


def test_an_emptied_cache_is_rebuilt_from_the_database_not_read_as_no_adaptive_studies(researcher, make_user):
    """Issue 38: which studies are adaptive lived only in the cache, so after Redis restarted
    empty every process treated them as ordinary until something published the list again."""
    from django.core.cache import cache

    study = _study(researcher, make_user)
    adaptive.adaptive_settings_update(study=study, changes={"enabled": True})
    publication.adaptive_publish()
    assert publication.adaptive_study(study.pk)
    cache.clear()  # the cache server restarted empty
    publication.adaptive_memo_forget()  # another process, or a second later
    assert publication.adaptive_study(study.pk)
    assert study.pk in cache.get(publication.CACHE_KEY)  # published again for the other processes
    # The hook works again at once: the judge's next item is chosen adaptively.
    AdaptiveAllocation.objects.filter(study=study).update(refreshed_at="2999-01-01T00:00:00Z")
    publication.adaptive_publish()
    cache.clear()
    publication.adaptive_memo_forget()
    a = Assignment.objects.get(study=study, judge__username="ann")
    with CaptureQueriesContext(connection) as ctx:
        item_next_for_judge_fast(assignment=a)
    assert any("adaptive_adaptiveallocation" in q["sql"] for q in ctx.captured_queries)
    # A study that is not adaptive stays ordinary after a cache loss, and the empty list is kept.
    adaptive.adaptive_settings_update(study=study, changes={"enabled": False})
    publication.adaptive_publish()
    cache.clear()
    publication.adaptive_memo_forget()
    assert not publication.adaptive_study(study.pk) and cache.get(publication.CACHE_KEY) == {}

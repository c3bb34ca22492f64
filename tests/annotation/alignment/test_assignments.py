"""Pairs are handed out k annotators a pair, evenly, once, starting from the pre-fill system."""

import pytest
from django.core.exceptions import ValidationError

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.alignment.services.drafts import assignment_draft_save, assignment_submit
from annotation.enums import Role
from annotation.services.membership import study_member_add

pytestmark = pytest.mark.django_db


def test_k_annotators_per_pair_spread_evenly_and_never_twice(study, pairs, annotator, second_annotator, make_user):
    study_member_add(study=study, user=make_user("cleo"), role=Role.ANNOTATOR)
    alignment_config_update(study=study, annotators_per_pair=2)
    result = assignments_create(study=study)
    assert result == {"created": 6, "pairs_short": 0, "annotators_per_pair": 2, "annotators": 3}
    per_pair = {}
    for pid, uid in AlignmentAssignment.objects.values_list("pair_id", "annotator_id"):
        per_pair.setdefault(pid, []).append(uid)
    assert all(len(v) == len(set(v)) == 2 for v in per_pair.values())
    loads = sorted(AlignmentAssignment.objects.filter(annotator__username=u).count() for u in ("anna", "bert", "cleo"))
    assert loads == [2, 2, 2]


def test_handing_out_again_adds_nothing_and_raising_k_tops_up(study, pairs, annotator, second_annotator):
    assignments_create(study=study)
    assert assignments_create(study=study)["created"] == 0
    alignment_config_update(study=study, annotators_per_pair=3)
    result = assignments_create(study=study)
    assert result["created"] == 3 and result["pairs_short"] == 3
    assert AlignmentAssignment.objects.count() == 6


def test_no_annotators_is_a_clear_error(study, pairs):
    with pytest.raises(ValidationError, match="no annotators"):
        assignments_create(study=study)


def test_a_new_prefill_system_reaches_only_untouched_assignments(study, pairs, annotator, system):
    assignments_create(study=study)
    first, second, third = AlignmentAssignment.objects.order_by("pair__position")
    assert first.sure == [] and first.prefill_system is None
    assignment_draft_save(assignment=first, sure=[[3, 3]], possible=[], revision=0, active_seconds=1)
    alignment_config_update(study=study, prefill_system=system)
    first.refresh_from_db()
    second.refresh_from_db()
    assert first.sure == [[3, 3]]
    assert (
        second.sure == [[0, 0], [1, 1], [4, 4], [5, 5]]
        and second.possible == [[2, 2]]
        and second.prefill_system == system
    )


def test_the_gold_combines_annotators_like_och_and_ney(study, pairs, annotator, second_annotator):
    from annotation.alignment.selectors import gold_alignments

    alignment_config_update(study=study, annotators_per_pair=2)
    assignments_create(study=study)
    p1 = pairs[0]
    a, b = AlignmentAssignment.objects.filter(pair=p1).order_by("annotator__username")
    assignment_submit(assignment=a, sure=[[0, 0], [2, 2]], possible=[[1, 1]], revision=0, active_seconds=1)
    assignment_submit(assignment=b, sure=[[0, 0], [1, 1]], possible=[[3, 3]], revision=0, active_seconds=1)
    gold = gold_alignments(study=study)
    assert set(gold) == {p1.pk}
    assert gold[p1.pk].sure == {(0, 0)} and gold[p1.pk].possible == {(1, 1), (2, 2), (3, 3)}

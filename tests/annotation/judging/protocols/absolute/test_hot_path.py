"""The judge's hot path (``items/next`` and the submit): a pinned number of queries, and
the one-query selectors answer exactly what the ORM selectors answer."""

from __future__ import annotations

import dataclasses

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token

from annotation.adaptive.publication import adaptive_publish
from annotation.enums import Role
from annotation.judging.protocols.absolute.hot_path import assignment_done_count_fast, item_next_for_judge_fast
from annotation.judging.protocols.absolute.selectors import assignment_done_count, item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.hot_path import assignment_ready_for_judge, study_for_judge
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Original, StudyMembership
from annotation.selectors import user_role_conflict
from annotation.services.membership import study_member_add
from tests.annotation.judging.conftest import api_next, api_submit, new_key, scores
from tests.queries import queries_with_unused_joins

pytestmark = pytest.mark.django_db

#: Queries of ``GET items/next/`` with an API token: the token and its user, the study
#: with the judge's roles, the assignment, the item with its texts and counts, and the
#: study's screening rules (training, attention checks, automatic QC; one lookup).
NEXT_QUERIES = 5
#: Queries of ``POST judgments/`` (a new judgment): the token, the study, the design's
#: criteria, the locked item, the key and the item's latest judgment, the study's status,
#: the insert in its savepoint (3), the item's done_at update, the done count, and the
#: transaction's own two statements (in a test, the outer transaction is a savepoint too),
#: and the study's screening rules (the automatic QC rule runs after a new judgment).
SUBMIT_QUERIES = 14


def _token_client(api_client, user):
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return api_client


def _without_stamp(item):
    return dataclasses.replace(item, serve_stamp="")


def test_items_next_and_submit_make_a_fixed_number_of_queries(api_client, opened_study):
    client = _token_client(api_client, User.objects.get(username="ann"))
    # The steady state: the list of adaptive studies is published (a process's first read of an
    # empty cache builds it from the database once), whatever ran before in this process.
    adaptive_publish()
    for _ in range(3):  # the count holds item after item, not only for the first
        with CaptureQueriesContext(connection) as ctx:
            r = api_next(client, opened_study)
        assert r.status_code == 200
        assert len(ctx.captured_queries) == NEXT_QUERIES, [q["sql"] for q in ctx.captured_queries]
        assert queries_with_unused_joins(ctx.captured_queries) == []
        item = r.json()["item"]
        with CaptureQueriesContext(connection) as ctx:
            r = api_submit(client, opened_study, item)
        assert r.status_code == 201, r.json()
        assert len(ctx.captured_queries) == SUBMIT_QUERIES, [q["sql"] for q in ctx.captured_queries]
        assert queries_with_unused_joins(ctx.captured_queries) == []


def test_the_one_query_next_item_equals_the_selector_item_after_item(opened_study):
    ann = User.objects.get(username="ann")
    assignment = assignment_for_judge(study=opened_study, judge=ann)
    n = 0
    while (slow := item_next_for_judge(assignment=assignment)) is not None:
        with CaptureQueriesContext(connection) as ctx:
            fast = item_next_for_judge_fast(assignment=assignment)
        assert len(ctx.captured_queries) == 1
        assert _without_stamp(fast) == _without_stamp(slow)
        assert assignment_done_count_fast(assignment=assignment) == assignment_done_count(assignment=assignment) == n
        # Rate every other item out of order (by token) to leave gaps behind the resume point.
        judgment_submit(
            study=opened_study,
            judge=ann,
            token=fast.token,
            key=new_key(),
            scores=scores(),
            serve_stamp=fast.serve_stamp,
        )
        n += 1
    assert item_next_for_judge_fast(assignment=assignment) is None
    assert assignment_done_count_fast(assignment=assignment) == assignment.n_items == n


def test_the_one_query_next_item_carries_the_same_context(study, add_judge):
    for i, o in enumerate(Original.objects.filter(study=study).order_by("position")):
        o.document, o.position = ("doc-a" if i < 4 else ""), i
        o.save()
    ann = add_judge(study, "ann")
    design_update(
        study=study,
        changes={"show_context": True, "seed": 3, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    assignment = assignment_for_judge(study=study, judge=ann)
    seen_context = False
    while (slow := item_next_for_judge(assignment=assignment)) is not None:
        fast = item_next_for_judge_fast(assignment=assignment)
        assert fast.context_shown and _without_stamp(fast) == _without_stamp(slow)
        seen_context |= fast.has_context
        judgment_submit(
            study=study, judge=ann, token=fast.token, key=new_key(), scores=scores(), serve_stamp=fast.serve_stamp
        )
    assert seen_context


def test_the_one_query_study_and_assignment_follow_the_role_and_opening_rules(study, add_judge, make_user):
    ann = add_judge(study, "ann")
    outsider = make_user("olga")
    # Not opened yet: the study is the judge's, the assignment not yet (the service says None too).
    got = study_for_judge(study_id=study.pk, judge=ann)
    assert got == study and got.judge_also_annotates is False
    assert study_for_judge(study_id=study.pk, judge=outsider) is None
    assert assignment_ready_for_judge(study=study, judge=ann) is None
    assert assignment_ensure_for_judge(study=study, judge=ann) is None
    study_judging_open(study=study)
    assert assignment_ready_for_judge(study=study, judge=ann) == assignment_for_judge(study=study, judge=ann)
    # A late judge: nothing until the service builds it, then the same row.
    late = add_judge(study, "lena")
    built = assignment_ensure_for_judge(study=study, judge=late)
    assert built.joined_late and assignment_ready_for_judge(study=study, judge=late) == built
    # Also an annotator (a row from before the services refused it): held out, as
    # user_role_conflict says; and an annotator who is no judge is not let in.
    StudyMembership.objects.create(study=study, user=ann, role=Role.ANNOTATOR)
    assert user_role_conflict(study=study, user=ann)
    assert study_for_judge(study_id=study.pk, judge=ann).judge_also_annotates is True
    annotator = make_user("arno")
    study_member_add(study=study, user=annotator, role=Role.ANNOTATOR)
    assert study_for_judge(study_id=study.pk, judge=annotator) is None

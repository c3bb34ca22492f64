"""Many judges submitting at once (threads, real transactions): the database ends with
exactly the judgments that were acknowledged — one per key, revisions without gaps.

Runs on whichever database the suite uses; CI runs it on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import threading
from collections import Counter, defaultdict

import pytest
from django.contrib.auth.models import User
from django.db import connection
from rest_framework.test import APIClient

from annotation.enums import Role
from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
from annotation.judging.protocols.absolute.selectors import item_for_judge
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.assignments import assignment_ensure_for_judge
from annotation.judging.services.opening import study_judging_open
from annotation.services.membership import study_member_add

from .conftest import real_database_file

pytestmark = pytest.mark.django_db(transaction=True)

N_JUDGES = 6
N_THREADS = 24


@pytest.fixture
def busy_study(study, make_user):
    judges = [make_user(f"judge{i}") for i in range(N_JUDGES)]
    for j in judges:
        study_member_add(study=study, user=j, role=Role.JUDGE)
    study_judging_open(study=study)
    return study, judges


def plan_requests(study, judges):
    """Per thread, a list of submissions. Includes the same key sent from two threads
    (a retry racing the original) and two different keys for one item (a revision
    racing the first rating)."""
    requests = []
    for judge in judges:
        assignment = assignment_for_judge(study=study, judge=judge)
        items = list(AssignmentItem.objects.filter(assignment=assignment).order_by("position")[:8])
        for n, item in enumerate(items):
            stamp = item_for_judge(study=study, judge=judge, token=item.token).serve_stamp
            body = {
                "item": item.token,
                "serve_stamp": stamp,
                "scores": {"adequacy": 1 + n % 5, "fluency": 2, "dissimilarity": 3, "overall": 4},
            }
            key = f"{judge.username}-item{n}-key"
            requests.append((judge, dict(body, key=key)))
            if n in (0, 1):  # the same key again, from another thread
                requests.append((judge, dict(body, key=key)))
            if n == 2:  # a second, different rating of the same item: a revision
                requests.append(
                    (judge, dict(body, key=f"{judge.username}-item{n}-rev", scores=dict(body["scores"], overall=1)))
                )
    return requests


def test_parallel_submissions_store_exactly_what_was_acknowledged(busy_study, tmp_path):
    study, judges = busy_study
    requests = plan_requests(study, judges)
    with real_database_file(tmp_path):
        run_and_check(study, requests)


def run_and_check(study, requests):
    # Deal the requests round-robin so each same-key pair lands in different threads.
    lanes = [requests[i::N_THREADS] for i in range(N_THREADS)]
    barrier = threading.Barrier(N_THREADS)
    acks: list[tuple[str, str, int, dict]] = []
    failures: list[str] = []
    lock = threading.Lock()

    def client_thread(lane):
        client = APIClient()
        try:
            barrier.wait(timeout=30)
            for judge, body in lane:
                client.force_authenticate(user=judge)
                r = client.post(f"/api/judging/studies/{study.pk}/judgments/", body, format="json")
                with lock:
                    if r.status_code in (200, 201):
                        acks.append((judge.username, body["key"], r.status_code, r.json()))
                    else:
                        failures.append(f"{judge.username} {body['key']}: {r.status_code} {r.content[:300]!r}")
        except Exception as exc:  # noqa: BLE001 - reported below with the thread's context
            with lock:
                failures.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=client_thread, args=(lane,)) for lane in lanes]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert len(acks) == len(requests)

    acknowledged_keys = {(judge, key) for judge, key, _, _ in acks}
    stored = list(
        Judgment.objects.filter(study=study).values_list(
            "judge__username", "key", "item__token", "revision", "is_latest"
        )
    )
    # exactly one row per acknowledged key, and nothing else
    assert Counter((j, k) for j, k, _, _, _ in stored) == Counter(acknowledged_keys)
    # both answers to a duplicated key describe the same stored judgment; one of them is the replay
    by_key = defaultdict(list)
    for judge, key, status_code, body in acks:
        by_key[(judge, key)].append((status_code, body["revision"], body["scores"]))
    for answers in by_key.values():
        assert sorted(a[0] for a in answers) == ([200, 201] if len(answers) == 2 else [201])
        assert len({(a[1], json.dumps(a[2], sort_keys=True)) for a in answers}) == 1
    # revisions of an item are 1..n without gaps, with exactly one latest
    per_item = defaultdict(list)
    for _, _, token, rev, latest in stored:
        per_item[token].append((rev, latest))
    for revs in per_item.values():
        assert sorted(r for r, _ in revs) == list(range(1, len(revs) + 1))
        assert sum(latest for _, latest in revs) == 1
    assert sum(len(v) == 2 for v in per_item.values()) == N_JUDGES  # one raced revision per judge
    # progress agrees with the rows
    assert AssignmentItem.objects.filter(assignment__study=study, done_at__isnull=False).count() == len(per_item)
    frame = judgments_frame(study=study)
    assert len(frame) == 4 * len(per_item)


def test_concurrent_late_judge_builds_make_one_assignment(study, make_user, tmp_path):
    study_judging_open(study=study)
    late = make_user("late")
    study_member_add(study=study, user=late, role=Role.JUDGE)
    with real_database_file(tmp_path):
        build_concurrently(study, late)


def build_concurrently(study, late):
    barrier = threading.Barrier(8)
    errors = []

    def build():
        try:
            barrier.wait(timeout=30)
            assignment_ensure_for_judge(study=study, judge=User.objects.get(pk=late.pk))
        except Exception as exc:  # noqa: BLE001
            errors.append(repr(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assignment = assignment_for_judge(study=study, judge=late)
    assert AssignmentItem.objects.filter(assignment__judge=late).count() == assignment.n_items == 25

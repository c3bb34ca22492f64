"""The adaptive stop while judges submit (threads, real transactions): the stop never waits on an
item being submitted, and that judgment is stored (issue 38: the stop under live judging broke a
judgment's foreign key once and deadlocked a judge's request into a 500).

On PostgreSQL the submission holds its item's row lock while the stop runs, so the stop must
skip that row; on SQLite the write lock serialises the two (the stop runs after the submission).
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, transaction
from rest_framework.test import APIClient

from annotation.adaptive import publication, refresh
from annotation.adaptive import services as adaptive
from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.hot_path import item_next_for_judge_fast
from annotation.judging.protocols.absolute.models import AssignmentItem, Judgment
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.tokens import serve_stamp_make
from annotation.models import Study
from tests.annotation.judging.conftest import real_database_file

from .test_adaptive import _rate, _study

pytestmark = pytest.mark.django_db(transaction=True)

SCORES = {"adequacy": 3, "fluency": 3, "dissimilarity": 3, "overall": 3}


@pytest.fixture(autouse=True)
def _fresh_cache():
    publication.adaptive_cache_clear()
    yield
    publication.adaptive_cache_clear()


def test_the_stop_skips_an_item_being_submitted_and_its_judgment_is_stored(researcher, make_user, tmp_path):
    study = _study(researcher, make_user, judges=("ann", "bob", "cat"))
    adaptive.adaptive_settings_update(study=study, changes={"enabled": True, "stop_when_stable": True})
    bob = Assignment.objects.select_related("judge").get(study=study, judge__username="bob")
    # Not the item at the head: the one a stop keeps for an active judge is another rule.
    target = AssignmentItem.objects.filter(assignment=bob).order_by("position")[2]
    stamp = serve_stamp_make(target.token)
    locked, stop_done = threading.Event(), threading.Event()
    errors: list[str] = []
    results: dict = {}

    def submitter():
        try:
            with transaction.atomic():
                # The submission's own first step (its item lock), held while the stop runs.
                AssignmentItem.objects.select_for_update().get(pk=target.pk)
                locked.set()
                stop_done.wait(timeout=3)  # PostgreSQL: the stop ends meanwhile; SQLite: it waits for us
                results["submit"] = judgment_submit(
                    study=study,
                    judge=bob.judge,
                    token=target.token,
                    key="held-at-the-stop",
                    scores=SCORES,
                    serve_stamp=stamp,
                )
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"submit: {exc!r}")
        finally:
            connection.close()

    def stopper():
        try:
            assert locked.wait(timeout=30)
            results["stop"] = refresh.adaptive_stop(study=Study.objects.get(pk=study.pk), reason="stable")
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"stop: {exc!r}")
        finally:
            stop_done.set()
            connection.close()

    with real_database_file(tmp_path):
        threads = [threading.Thread(target=submitter), threading.Thread(target=stopper)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert results["submit"].created and results["stop"].stopped
        assert Judgment.objects.filter(key="held-at-the-stop", item_id=target.pk, is_latest=True).exists()
        assert AssignmentItem.objects.get(pk=target.pk).done_at is not None
        # Every other item of Bob's was released, but for the one on his screen where the stop
        # came after the judgment (SQLite) and so found him judging.
        left = AssignmentItem.objects.filter(assignment=bob, done_at__isnull=True)
        assert left.count() <= 1 and all(i.position == 1 for i in left)
        assert Assignment.objects.get(pk=bob.pk).n_items == 1 + left.count()


def test_judges_submitting_while_the_study_stops_get_every_judgment_stored_and_never_a_500(
    researcher, make_user, tmp_path
):
    names = ("ann", "bob", "cat", "dan")
    study = _study(researcher, make_user, judges=names)
    adaptive.adaptive_settings_update(study=study, changes={"enabled": True, "stop_when_stable": True})
    for name in names:  # each judge is judging when the stop comes
        _rate(study, name, lambda s: 3, 1)
    judges = {a.judge.username: a for a in Assignment.objects.select_related("judge").filter(study=study)}
    barrier = threading.Barrier(len(names) + 1)
    answers: list[tuple[str, int, bytes]] = []
    errors: list[str] = []
    lock = threading.Lock()

    def judge_thread(name: str):
        client = APIClient()
        client.force_authenticate(user=judges[name].judge)
        try:
            barrier.wait(timeout=30)
            for n in range(40):
                item = item_next_for_judge_fast(assignment=Assignment.objects.get(pk=judges[name].pk))
                if item is None:
                    return
                r = client.post(
                    f"/api/judging/studies/{study.pk}/judgments/",
                    {
                        "item": item.token,
                        "serve_stamp": item.serve_stamp,
                        "key": f"{name}-live-{n:03d}",
                        "scores": SCORES,
                    },
                    format="json",
                )
                with lock:
                    answers.append((f"{name}-live-{n:03d}", r.status_code, r.content[:200]))
        except Exception as exc:  # noqa: BLE001 - reported below
            with lock:
                errors.append(f"{name}: {exc!r}")
        finally:
            connection.close()

    def stop_thread():
        try:
            barrier.wait(timeout=30)
            refresh.adaptive_stop(study=Study.objects.get(pk=study.pk), reason="stable")
        except Exception as exc:  # noqa: BLE001 - reported below
            with lock:
                errors.append(f"stop: {exc!r}")
        finally:
            connection.close()

    with real_database_file(tmp_path):
        threads = [threading.Thread(target=judge_thread, args=(n,)) for n in names]
        threads.append(threading.Thread(target=stop_thread))
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        # Every answer is a stored judgment (the item a judge was rating is kept by the stop), or,
        # for an item served in the instant the stop's release commits, 404 "no such item"; never a 500.
        assert answers and [a for a in answers if a[1] not in (201, 404)] == []
        assert sum(code == 404 for _, code, _ in answers) <= len(names)
        stored = set(Judgment.objects.filter(study=study).values_list("key", flat=True))
        assert {key for key, code, _ in answers if code == 201} <= stored
        # And after the stop every judge has finished.
        for a in Assignment.objects.filter(study=study):
            assert not AssignmentItem.objects.filter(assignment=a, done_at__isnull=True).exists()

"""Fixtures for field studies: an opened study, join links, and a participant's browser (a Django client)."""

from __future__ import annotations

import itertools
import secrets

import pytest
from django.test import Client

_n = itertools.count(1)


def prolific_params() -> dict:
    return {
        "PROLIFIC_PID": secrets.token_hex(12),
        "STUDY_ID": secrets.token_hex(12),
        "SESSION_ID": secrets.token_hex(12),
    }


def mturk_params(worker: str | None = None) -> dict:
    return {
        "workerId": worker or f"A{secrets.token_hex(6).upper()}",
        "assignmentId": secrets.token_hex(15).upper(),
        "hitId": secrets.token_hex(15).upper(),
        "turkSubmitTo": "https://workersandbox.mturk.com",
    }


def join(link, params: dict | None = None, client: Client | None = None) -> tuple[Client, object]:
    """Open ``link`` in a (new) browser, accept, and return (client, the welcome response)."""
    client = client or Client()
    params = params or {}
    r = client.get(f"/join/{link.token}/", params, follow=True)  # the ids go to the session, the URL is cleaned
    assert r.status_code == 200 and b"consent-form" in r.content
    return client, client.post(f"/join/{link.token}/", {**params, "action": "accept"})


def come_back(link, params: dict | None = None, client: Client | None = None):
    """Open ``link`` again (with the same platform ids) in ``client`` (a new browser by default): the page offers to
    continue, without signing in; pressing Continue (a POST) signs in. Returns (client, the POST's response)."""
    client = client or Client()
    page = client.get(f"/join/{link.token}/", params or {}, follow=True)
    assert page.status_code == 200 and b"resume-form" in page.content, page.status_code
    assert "_auth_user_id" not in client.session  # a GET never signs anyone in
    return client, client.post(f"/join/{link.token}/", {"action": "resume"})


def rate(study, user, n: int | None = None, active: float = 5.0) -> int:
    """Rate the next ``n`` items (all when None) of ``user`` through the judging service. Returns how many."""
    from annotation.judging.models import Assignment
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.tokens import serve_stamp_make

    assignment = Assignment.objects.get(study=study, judge=user)
    done = 0
    while n is None or done < n:
        item = item_next_for_judge(assignment=assignment)
        if item is None:
            break
        judgment_submit(
            study=study,
            judge=user,
            token=item.token,
            key=f"k-{next(_n):08d}",
            scores={"adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4},
            serve_stamp=serve_stamp_make(item.token),
            active_seconds=active,
        )
        done += 1
    return done


@pytest.fixture
def open_study(study):
    """The fixture study (5 originals × 2 systems), no controls, opened for judging with no judges."""
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    design_update(study=study, changes={"control_counts": {"identical": 0, "random": 0, "unigram": 0}, "seed": 11})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def judge_link(open_study, researcher):
    from annotation.participation import services

    return services.join_link_create(study=open_study, role="judge", created_by=researcher)


@pytest.fixture
def prolific_link(open_study, researcher):
    from annotation.participation import services

    return services.join_link_create(
        study=open_study,
        role="judge",
        platform="prolific",
        created_by=researcher,
        completion_code="C1A2B3C4",
        screen_out_code="SCREEN01",
    )

"""Fixtures for judging: an opened study with judges, and helpers to rate through the API."""

from __future__ import annotations

import contextlib
import itertools
import sqlite3

import pytest

from annotation.enums import Role
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open

_keys = itertools.count(1)


def new_key() -> str:
    return f"test-key-{next(_keys):06d}"


def scores(a=3, f=4, d=2, o=3) -> dict:
    return {"adequacy": a, "fluency": f, "dissimilarity": d, "overall": o}


@pytest.fixture
def add_judge(make_user):
    from annotation.services.membership import study_member_add

    def add(study, username):
        from django.contrib.auth.models import User

        user = User.objects.filter(username=username).first() or make_user(username)
        study_member_add(study=study, user=user, role=Role.JUDGE)
        return user

    return add


@pytest.fixture
def opened_study(study, add_judge):
    """The fixture study (5 originals × human/machine) with judges ann and bob, opened
    with PEM's default controls (5 × 5 = 25 items per judge, fully crossed)."""
    from annotation.judging.services.design import design_update

    add_judge(study, "ann")
    add_judge(study, "bob")
    design_update(study=study, changes={"seed": 1234})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


def api_login(client, user):
    client.force_authenticate(user=user)
    return client


def api_next(client, study):
    return client.get(f"/api/judging/studies/{study.pk}/items/next/")


def api_submit(client, study, item: dict, *, key=None, values=None, **extra):
    body = {
        "item": item["token"],
        "key": key or new_key(),
        "scores": values or scores(),
        "serve_stamp": item["serve_stamp"],
        **extra,
    }
    return client.post(f"/api/judging/studies/{study.pk}/judgments/", body, format="json")


def rate_all_via_service(study, judge, *, score_fn=None):
    """Rate every item of ``judge``'s assignment through the service; returns the count."""
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.selectors.judge import assignment_for_judge

    assignment = assignment_for_judge(study=study, judge=judge)
    n = 0
    while (item := item_next_for_judge(assignment=assignment)) is not None:
        values = score_fn(item) if score_fn else scores()
        judgment_submit(
            study=study, judge=judge, token=item.token, key=new_key(), scores=values, serve_stamp=item.serve_stamp
        )
        n += 1
    return n


@contextlib.contextmanager
def real_database_file(tmp_path):
    """Run the block against the test data copied into a SQLite *file* (no-op elsewhere).

    pytest-django's SQLite test database lives in memory with a shared cache, where
    concurrent connections fail at once with "database table is locked" instead of
    waiting: that is not how paraeval runs (a WAL file with IMMEDIATE transactions and
    a busy timeout, see config/settings.py). For the thread tests we copy the test
    data into a file, point every new connection at it with the same OPTIONS, and
    restore the in-memory database afterwards.
    """
    from django.db import connections

    conn = connections["default"]
    if conn.vendor != "sqlite" or not conn.is_in_memory_db():
        yield
        return
    conn.ensure_connection()
    path = str(tmp_path / "judging-concurrency.sqlite3")
    target = sqlite3.connect(path)
    conn.connection.backup(target)
    target.close()
    saved_connection, saved_name = conn.connection, conn.settings_dict["NAME"]
    conn.connection = None
    conn.settings_dict["NAME"] = path  # shared with the connections other threads create
    try:
        yield
    finally:
        if conn.connection is not None:
            conn.connection.close()
        conn.settings_dict["NAME"] = saved_name
        conn.connection = saved_connection


@pytest.fixture
def three_judges(study, add_judge):
    for name in ("ann", "bob", "cy"):
        add_judge(study, name)
    design_update(study=study, changes={"seed": 4242})
    return study

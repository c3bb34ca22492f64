"""The database went away (a PostgreSQL restart): a view answers 503 with Retry-After, not 500.

Issue 38 #19: docs/reliability.md promises that a client meeting an outage is told to come
back (503, ``Retry-After``) rather than shown a 500 for a bug. ``config.middleware.
ServiceUnavailableMiddleware`` did that for the cache and the broker only; a view whose query
met a restarting PostgreSQL (``OperationalError``, or ``InterfaceError`` on a dropped
connection) answered 500. The view here raises the error itself, as psycopg does mid-restart.
"""

from __future__ import annotations

import logging

import pytest
from django.db import InterfaceError, OperationalError

from annotation import selectors


@pytest.fixture(params=[OperationalError, InterfaceError])
def database_down(request, monkeypatch):
    error = request.param

    def away(*args, **kwargs):
        raise error("server closed the connection unexpectedly\n\tThis probably means the server terminated")

    monkeypatch.setattr(selectors, "study_list_for_researcher", away)
    return error


@pytest.mark.django_db
def test_a_page_whose_query_meets_a_database_restart_answers_503_with_retry_after(
    database_down, client, researcher, caplog
):
    client.force_login(researcher)
    with caplog.at_level(logging.ERROR, logger="paraeval.outage"):
        r = client.get("/studies/")
    assert r.status_code == 503
    assert r["Retry-After"] == "30"
    assert "Briefly unavailable" in r.content.decode()
    assert "no-store" in r["Cache-Control"]
    [record] = [rec for rec in caplog.records if rec.name == "paraeval.outage"]
    assert f"database unreachable ({database_down.__name__}: server closed" in record.getMessage()
    assert "\n" not in record.getMessage()


@pytest.mark.django_db
def test_an_api_call_that_meets_a_database_restart_answers_503_json_with_retry_after(
    database_down, api_client, researcher
):
    api_client.force_authenticate(researcher)
    r = api_client.get("/api/studies/")
    assert r.status_code == 503
    assert r["Retry-After"] == "30"
    assert r.json()["retry_after_seconds"] == 30 and "briefly unavailable" in r.json()["detail"]


@pytest.mark.django_db
def test_other_database_errors_are_still_bugs(monkeypatch, client, researcher):
    from django.db import IntegrityError

    def broken(*args, **kwargs):
        raise IntegrityError("a bug, not an outage")

    monkeypatch.setattr(selectors, "study_list_for_researcher", broken)
    client.force_login(researcher)
    client.raise_request_exception = False
    assert client.get("/studies/").status_code == 500

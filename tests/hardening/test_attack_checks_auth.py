"""The CI attack walk's sign-in checks (.ci/attack_checks_auth.py) hold against a live server.

The checks speak HTTP only; here they run against Django's live test server with the
preconditions their docstring names (a short lockout; the cache on a dead Redis port).
"""

from __future__ import annotations

import importlib.util
from datetime import timedelta
from pathlib import Path

import pytest

from tests.annotation.participation.conftest import prolific_params
from tests.hardening.test_cache_down import dead_redis_url

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def attack_checks():
    path = Path(__file__).resolve().parents[2] / ".ci" / "attack_checks_auth.py"
    spec = importlib.util.spec_from_file_location("attack_checks_auth", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lockout_check_passes_against_a_live_server(live_server, make_user, settings):
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(seconds=3)
    make_user("probe", password="probe-password-1")
    done = attack_checks().check_lockout_not_extended(
        live_server.url, username="probe", password="probe-password-1", failure_limit=3, lockout_seconds=3, headers={}
    )
    assert "ended" in done


def test_the_lockout_check_fails_when_attempts_extend_the_lockout(live_server, make_user, settings):
    """The check is not a formality: with axes' default (every attempt restarts the lock) it raises."""
    settings.AXES_FAILURE_LIMIT = 3
    settings.AXES_COOLOFF_TIME = timedelta(seconds=3)
    settings.AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = True
    make_user("probe", password="probe-password-1")
    checks = attack_checks()
    with pytest.raises(checks.CheckFailed, match="extended|answered"):
        checks.check_lockout_not_extended(
            live_server.url,
            username="probe",
            password="probe-password-1",
            failure_limit=3,
            lockout_seconds=3,
            headers={},
        )


def test_the_cache_down_check_passes_against_a_live_server(live_server, make_user, settings, study, researcher):
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.participation import services

    make_user("probe", password="probe-password-1")
    design_update(study=study, changes={"control_counts": {"identical": 0, "random": 0, "unigram": 0}})
    study_judging_open(study=study)
    link = services.join_link_create(study=study, role="judge", platform="prolific", created_by=researcher)
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": dead_redis_url(),
            "OPTIONS": {"socket_connect_timeout": 0.5},
        }
    }
    done = attack_checks().check_cache_down(
        live_server.url,
        username="probe",
        password="probe-password-1",
        join_path=f"/join/{link.token}/",
        join_params=prolific_params(),
        headers={},
    )
    assert "503" in done

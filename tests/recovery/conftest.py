"""Fixtures of tests/recovery: real workers, stopped at the end of the test."""

from __future__ import annotations

import pytest

from tests.recovery.recovery_helpers import Workers


@pytest.fixture
def workers(transactional_db, tmp_path):
    made = []

    def make(**settings) -> Workers:
        w = Workers(tmp_path, **settings)
        made.append(w)
        return w

    yield make
    for w in made:
        w.stop_all()

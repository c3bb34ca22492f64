"""Migration dashboard 0004 keeps every stored snapshot: a row written before the JSON text
existed gets its snapshot as text, a row that has the text keeps it, and then the JSON column
(which held the same values twice) is dropped."""

from __future__ import annotations

import json

import pytest
from django.db import connection

from metrics.dashboard.models import Dashboard
from tests.factories import StudyFactory
from tests.migrations import migrate_to, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("dashboard", "0003_snapshot_text")]
AFTER = [("dashboard", "0004_snapshot_once")]


def test_old_snapshots_become_text_and_newer_texts_are_kept():
    old_only, both = StudyFactory(), StudyFactory()
    snapshot = {"totals": {"done": 3}, "judges": [{"judge": "قاضٍ", "n": 3}], "rate": "0.1200"}
    try:
        old = migrate_to(BEFORE)
        Old = old.get_model("dashboard", "Dashboard")
        Old.objects.create(study_id=old_only.pk, snapshot=snapshot)
        Old.objects.create(study_id=both.pk, snapshot={"stale": True}, snapshot_text='{"kept":true}')
        migrate_to(AFTER)
        first = Dashboard.objects.get(study=old_only)
        assert json.loads(first.snapshot_text) == snapshot and first.snapshot == snapshot
        assert "قاضٍ" in first.snapshot_text  # stored as UTF-8 text, as the API sends it
        assert Dashboard.objects.get(study=both).snapshot == {"kept": True}
        columns = {
            c.name for c in connection.introspection.get_table_description(connection.cursor(), "dashboard_dashboard")
        }
        assert "snapshot" not in columns and "snapshot_text" in columns
    finally:
        migrate_to_latest()

"""The admin lists every registered protocol's judgment record, read-only."""

from __future__ import annotations

import pytest
from django.contrib import admin

from annotation.judging.protocols.registry import protocols_all

pytestmark = pytest.mark.django_db


def test_every_protocols_judgments_are_listed_in_the_admin_and_never_added_or_changed(admin_client):
    models = {unit.judgment_model for unit in protocols_all()}
    assert len(models) >= 4
    for model in models:
        model_admin = admin.site.get_model_admin(model)
        assert not model_admin.has_add_permission(None) and not model_admin.has_change_permission(None), model
        meta = model._meta
        r = admin_client.get(f"/admin/{meta.app_label}/{meta.model_name}/")
        assert r.status_code == 200, (model, r.status_code)
        assert {"study", "judge", "item", "revision", "is_latest"} <= set(model_admin.list_display), model

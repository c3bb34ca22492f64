"""The Metrics tab shows every metric's card, and PEM without a model leads to the Train PEM form."""

from __future__ import annotations

import html as html_lib

import pytest

from metrics.core.cards import card_rows
from metrics.core.registry import available_metrics
from metrics.models import MetricRun

pytestmark = pytest.mark.django_db


def _url(study):
    return f"/studies/{study.pk}/metrics/"


def test_the_start_form_shows_each_metrics_card(client, researcher, metric_study):
    client.force_login(researcher)
    page = html_lib.unescape(client.get(_url(metric_study)).content.decode())
    for cls in available_metrics():
        assert f'data-card="{cls.slug}"' in page
        for label, text in card_rows(cls.card):
            if label != "Prepare first":
                assert f"<dt>{label}</dt><dd>{text}</dd>" in page
    assert "<dt>Direction</dt><dd>neither: it describes a property, not quality</dd>" in page  # pinc


def test_pem_points_to_the_train_pem_form_on_the_same_page(client, researcher, metric_study):
    client.force_login(researcher)
    page = html_lib.unescape(client.get(_url(metric_study)).content.decode())
    assert 'data-prepare="pem"' in page and '<a href="#pem-h">Go to the Train PEM form</a>' in page
    assert 'id="pem-h"' in page
    assert "pem_train" not in page  # not an internal function name


def test_starting_pem_without_a_model_names_the_train_pem_form_not_a_function(client, researcher, metric_study):
    client.force_login(researcher)
    r = client.post(_url(metric_study), {"metric": "pem", "against": "original"})
    assert r.status_code == 200
    page = html_lib.unescape(r.content.decode())
    errors = page.split('id="run-errors"', 1)[1].split("</div>", 1)[0]
    assert "needs model" in errors and "Train PEM" in errors
    assert "pem_train" not in errors
    assert MetricRun.objects.count() == 0


def test_the_metrics_api_returns_each_card(api_client, researcher):
    api_client.force_authenticate(researcher)
    r = api_client.get("/api/metrics/")
    assert r.status_code == 200
    cards = {m["slug"]: m["card"] for m in r.json()}
    assert cards["ter"]["direction"] == "lower"
    assert "Train PEM" in cards["pem"]["prepare"]
    assert set(cards["bleu"]) == {"measures", "direction", "range", "needs", "reference", "caveats", "prepare"}

"""Rough edges a new user met in the first hour (issue 15), page by page: 403 pages say why
and log no traceback; counts keep controls apart and use plurals; kinds are readable; a
PEM run page says what PEM is scored from."""

from __future__ import annotations

import io
import logging

import pytest
from django.urls import reverse

from annotation.enums import SystemKind
from metrics.models import MetricRun
from tests.factories import SystemFactory
from tests.metrics.web.conftest import make_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def console_log():
    """What the console handler of settings.LOGGING writes, as text."""
    handler = next(
        h
        for h in logging.getLogger().handlers
        if any(type(f).__name__ == "DropPermissionDeniedTraceback" for f in h.filters)
    )
    stream = io.StringIO()
    old = handler.setStream(stream)
    yield stream
    handler.setStream(old)


def test_a_403_page_says_why_and_what_to_do(client, make_user):
    client.force_login(make_user("jo"))
    r = client.get(reverse("annotation:study_list"))
    assert r.status_code == 403
    html = r.content.decode()
    assert "You may not open this page" in html
    assert "Only researchers see the study list." in html
    assert "You are logged in as <strong>jo</strong>" in html
    assert 'href="/"' in html  # a way back to their start page


def test_a_403_on_a_study_page_names_the_reason(client, make_user, study):
    client.force_login(make_user("jo"))
    r = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk}))
    assert r.status_code == 403
    assert "Only this study&#x27;s researchers may open this page." in r.content.decode()


def test_a_403_logs_one_line_and_no_traceback(client, make_user, console_log):
    client.force_login(make_user("jo"))
    assert client.get(reverse("annotation:study_list")).status_code == 403
    logged = console_log.getvalue()
    assert "Forbidden (Permission denied): /studies/" in logged
    assert "Traceback" not in logged


def test_other_errors_keep_their_traceback_in_the_log(console_log):
    try:
        raise ValueError("boom")
    except ValueError:
        logging.getLogger("django.request").error("Internal Server Error: /x", exc_info=True)
    assert "Traceback" in console_log.getvalue() and "ValueError: boom" in console_log.getvalue()


def test_the_studies_list_counts_systems_without_controls(client, researcher):
    make_study(researcher)  # human, machine and the identical control
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_list")).content.decode()
    assert 'data-systems="2">2 <span class="muted">+ 1 control</span>' in html


def test_the_study_page_says_one_system_not_one_systems_and_counts_controls_apart(client, researcher):
    study = make_study(researcher)
    study.systems.filter(name="machine").delete()
    SystemFactory(study=study, name="control:random", kind=SystemKind.CONTROL_RANDOM)
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).content.decode()
    assert '<strong data-count="systems">1</strong> system</span>' in html
    assert '<strong data-count="controls">2</strong> controls</span>' in html
    assert "1 systems" not in html


def test_the_study_page_shows_readable_kinds_not_raw_ones(client, researcher):
    study = make_study(researcher)
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_detail", kwargs={"study_id": study.pk})).content.decode()
    table = html.split('id="system-counts"', 1)[1].split("</table>", 1)[0]
    assert "Control: the original itself" in table and "Imported" in table
    assert "control_identical" not in table


def test_a_pem_run_page_says_what_pem_is_scored_from_not_compared_with_the_original(client, researcher):
    study = make_study(researcher)
    run = MetricRun.objects.create(study=study, metric="pem", params={}, n=21)
    client.force_login(researcher)
    html = client.get(reverse("metrics:run_detail", kwargs={"study_id": study.pk, "run_id": run.pk})).content.decode()
    assert "Compared with" not in html
    assert '<dt>Scored from</dt><dd id="scored-from">original (R), candidate (P), a trained PEM model' in html
    assert "higher is better; range about 1–5" in html


def test_a_bleu_run_page_still_says_what_it_was_compared_with(client, researcher):
    study = make_study(researcher)
    run = MetricRun.objects.create(
        study=study, metric="bleu", params={"against": "reference"}, against="reference", n=21
    )
    client.force_login(researcher)
    html = client.get(reverse("metrics:run_detail", kwargs={"study_id": study.pk, "run_id": run.pk})).content.decode()
    assert '<dt>Compared with</dt><dd id="compared-with">' in html

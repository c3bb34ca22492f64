"""The alignment pages render what they promise: guidelines, task list, pair views, run states."""

import pytest
from django.urls import reverse

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services import queueing
from annotation.alignment.services.assignments import assignments_create
from annotation.alignment.services.drafts import assignment_submit
from annotation.alignment.services.queueing import scoring_run_create
from annotation.alignment.services.scoring import scoring_run_execute

pytestmark = pytest.mark.django_db


def test_the_guidelines_cover_the_cases_parametric_annotators_had_rules_for(client, annotator):
    client.force_login(annotator)
    html = client.get(reverse("alignment:guidelines")).content.decode()
    for heading in ("Repetition", "Pronouns", "Genitives", "Phrasal verbs", "Omissions"):
        assert f">{heading}" in html
    assert "one word to one word" in html and "One-to-many" in html and "Many-to-many" in html


def test_the_grid_page_loads_its_script_and_data_without_inline_code(client, study, pairs, annotator):
    assignments_create(study=study)
    a = AlignmentAssignment.objects.filter(annotator=annotator).first()
    client.force_login(annotator)
    r = client.get(reverse("alignment:grid", kwargs={"assignment_id": a.pk}))
    html = r.content.decode()
    assert '<script type="module" src="/static/alignment/grid.js"></script>' in html
    assert '<script id="grid-data" type="application/json">' in html
    assert " style=" not in html and " onclick=" not in html
    assert "script-src 'self'" in r["Content-Security-Policy"]
    a.refresh_from_db()
    assert a.opened_at is not None


def test_the_researcher_sees_pairs_and_a_read_only_grid_of_any_source(client, researcher, study, pairs, system):
    client.force_login(researcher)
    html = client.get(reverse("alignment:pairs", kwargs={"study_id": study.pk})).content.decode()
    assert "g1:2" in html and "7 × 7" in html
    url = reverse("alignment:pair", kwargs={"study_id": study.pk, "pair_id": pairs[2].pk})
    html = client.get(url, {"source": f"system:{system.pk}"}).content.decode()
    assert '"readonly": true' in html and '"sure": [[0, 0], [1, 1]]' in html
    html = client.get(url, {"source": "gold"}).content.decode()
    assert "This source has no alignment of this pair." in html


def test_a_queued_run_shows_progress_and_a_failed_run_its_error(
    client, researcher, study, pairs, annotator, monkeypatch
):
    assignments_create(study=study)
    a = AlignmentAssignment.objects.filter(annotator=annotator).first()
    assignment_submit(assignment=a, sure=[[0, 0]], possible=[], revision=0, active_seconds=1)
    monkeypatch.setattr(queueing, "TABLE_CHECK_IN_REQUEST_BYTES", 0)  # the module that reads it
    run = scoring_run_create(
        study=study, user=researcher, kind="paraphrases", table_data=b"x\n", table_filename="t.tsv"
    )
    client.force_login(researcher)
    url = reverse("alignment:run", kwargs={"study_id": study.pk, "run_id": run.pk})
    html = client.get(url).content.decode()
    assert 'id="run-progress"' in html and "job_progress.js" in html
    status = client.get(reverse("alignment:run_status", kwargs={"study_id": study.pk, "run_id": run.pk})).json()
    assert status["status"] == "queued" and status["percent"] == 0
    scoring_run_execute(run_id=run.pk)
    html = client.get(url).content.decode()
    assert "The run failed." in html and "t.tsv, line 1: expected" in html
    r = client.get(reverse("alignment:run_export", kwargs={"study_id": study.pk, "run_id": run.pk, "fmt": "json"}))
    assert r.status_code == 409


def test_settings_and_handing_out_from_the_page(client, researcher, study, pairs, annotator, system):
    client.force_login(researcher)
    r = client.post(
        reverse("alignment:settings", kwargs={"study_id": study.pk}),
        {"config-annotators_per_pair": "1", "config-prefill_system": str(system.pk)},
    )
    assert r.status_code == 302
    client.post(reverse("alignment:assign", kwargs={"study_id": study.pk}))
    a = AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position").first()
    assert a.prefill_system == system and a.sure == [[0, 0], [2, 2], [5, 4]]
    html = client.get(reverse("alignment:study", kwargs={"study_id": study.pk})).content.decode()
    assert 'id="annotator-progress"' in html and "pre-fills grids" in html

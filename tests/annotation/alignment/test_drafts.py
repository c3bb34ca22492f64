"""Drafts are saved on the server as the annotator works; a reload restores them; submission freezes them."""

import json

import pytest
from django.urls import reverse

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services.assignments import alignment_config_update, assignments_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def mine(study, pairs, annotator, system):
    alignment_config_update(study=study, prefill_system=system)
    assignments_create(study=study)
    return AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position").first()


def _grid_data(client, assignment):
    html = client.get(reverse("alignment:grid", kwargs={"assignment_id": assignment.pk})).content.decode()
    start = html.index('<script id="grid-data" type="application/json">') + len(
        '<script id="grid-data" type="application/json">'
    )
    return json.loads(html[start : html.index("</script>", start)])


def _put(api_client, a, **body):
    return api_client.put(
        reverse("alignment-api:assignment_draft", kwargs={"assignment_id": a.pk}), body, format="json"
    )


def test_a_new_grid_starts_from_the_prefill_system(client, mine, annotator):
    client.force_login(annotator)
    data = _grid_data(client, mine)
    assert data["sure"] == [[0, 0], [2, 2], [5, 4]] and data["possible"] == [[1, 1]]
    assert data["automatic"] == {"sure": [[0, 0], [2, 2], [5, 4]], "possible": [[1, 1]]}
    assert data["tokens1"][2] == "beginning" and data["revision"] == 0 and data["readonly"] is False


def test_an_autosaved_draft_is_what_the_page_shows_after_a_reload(client, api_client, mine, annotator):
    client.force_login(annotator)
    api_client.force_authenticate(annotator)
    r = _put(api_client, mine, sure=[[2, 2], [0, 0]], possible=[[6, 6]], revision=0, active_seconds=12.4)
    assert r.status_code == 200 and r.json()["revision"] == 1 and r.json()["status"] == "in_progress"
    data = _grid_data(client, mine)
    assert data["sure"] == [[0, 0], [2, 2]] and data["possible"] == [[6, 6]]
    assert data["revision"] == 1 and data["active_seconds"] == 12.4
    assert data["automatic"]["sure"] == [[0, 0], [2, 2], [5, 4]]  # reset still goes back to the system


def test_a_stale_tab_cannot_overwrite_newer_work(api_client, mine, annotator):
    api_client.force_authenticate(annotator)
    assert _put(api_client, mine, sure=[[1, 1]], possible=[], revision=0, active_seconds=1).status_code == 200
    r = _put(api_client, mine, sure=[], possible=[], revision=0, active_seconds=1)
    assert r.status_code == 409 and r.json()["revision"] == 1
    mine.refresh_from_db()
    assert mine.sure == [[1, 1]]


@pytest.mark.parametrize(
    "body, message",
    [
        ({"sure": [[0, 9]], "possible": []}, "outside the 7×7 grid"),
        ({"sure": [[1, 1]], "possible": [[1, 1]]}, "both sure and possible"),
    ],
)
def test_links_that_do_not_fit_are_refused(api_client, mine, annotator, body, message):
    api_client.force_authenticate(annotator)
    r = _put(api_client, mine, revision=0, active_seconds=0, **body)
    assert r.status_code == 400 and message in r.json()["detail"]


def test_malformed_links_are_refused_by_the_serializer(api_client, mine, annotator):
    api_client.force_authenticate(annotator)
    assert _put(api_client, mine, sure=[[0, 0, 1]], possible=[], revision=0, active_seconds=0).status_code == 400
    assert _put(api_client, mine, sure=[[-1, 0]], possible=[], revision=0, active_seconds=0).status_code == 400


def test_active_time_never_goes_down(api_client, mine, annotator):
    api_client.force_authenticate(annotator)
    _put(api_client, mine, sure=[], possible=[], revision=0, active_seconds=30)
    _put(api_client, mine, sure=[], possible=[], revision=1, active_seconds=5)
    mine.refresh_from_db()
    assert mine.active_seconds == 30


def test_submitting_stores_the_links_and_the_timing_and_freezes_the_pair(client, api_client, mine, annotator):
    client.force_login(annotator)
    _grid_data(client, mine)  # opening the page records the server time
    api_client.force_authenticate(annotator)
    r = api_client.post(
        reverse("alignment-api:assignment_submit", kwargs={"assignment_id": mine.pk}),
        {"sure": [[0, 0], [5, 4]], "possible": [[2, 2]], "revision": 0, "active_seconds": 77},
        format="json",
    )
    assert r.status_code == 200
    nxt = AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position")[1]
    assert r.json()["next_url"] == reverse("alignment:grid", kwargs={"assignment_id": nxt.pk})
    mine.refresh_from_db()
    assert (mine.status, mine.sure, mine.possible, mine.active_seconds) == ("submitted", [[0, 0], [5, 4]], [[2, 2]], 77)
    assert (
        mine.opened_at <= mine.submitted_at
        and mine.server_seconds == (mine.submitted_at - mine.opened_at).total_seconds()
    )
    assert _put(api_client, mine, sure=[], possible=[], revision=1, active_seconds=80).status_code == 409
    assert _grid_data(client, mine)["readonly"] is True


def test_the_last_submission_sends_the_annotator_back_to_the_task_list(api_client, study, pairs, annotator):
    assignments_create(study=study)
    api_client.force_authenticate(annotator)
    for a in AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position"):
        r = api_client.post(
            reverse("alignment-api:assignment_submit", kwargs={"assignment_id": a.pk}),
            {"sure": [], "possible": [], "revision": 0},
            format="json",
        )
    assert r.json()["next_url"] == reverse("alignment:home")

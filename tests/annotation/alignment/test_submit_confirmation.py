"""Submitting an alignment from the grid page is confirmed on the page it moves on to."""

import json

import pytest
from django.db import models
from django.urls import reverse

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services.assignments import assignments_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def mine(study, pairs, annotator):
    assignments_create(study=study)
    return AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position").first()


def _submit(client, assignment):
    return client.post(
        reverse("alignment-api:assignment_submit", kwargs={"assignment_id": assignment.pk}),
        json.dumps({"sure": [[0, 0]], "possible": [], "revision": 0, "active_seconds": 5}),
        content_type="application/json",
    )


def test_the_next_page_confirms_the_submitted_pair(client, mine, annotator):
    client.force_login(annotator)
    r = _submit(client, mine)
    assert r.status_code == 200
    page = client.get(r.json()["next_url"]).content.decode()
    assert ('<li class="message success">Alignment of pair “1” submitted. Here is your next pair.</li>') in page


def test_the_confirmation_names_the_annotators_own_pair_number_never_the_researchers_pair_id(
    client, study, pairs, annotator
):
    """Issue 23 #7: "Alignment of pair “John 1:1 synonyms” submitted" named the system (docs/people.md)."""
    from annotation.alignment.models import AlignmentPair

    assignments_create(study=study)
    AlignmentPair.objects.filter(study=study).update(
        external_id=models.functions.Concat(models.Value("synonyms-system "), "external_id")
    )
    mine = list(AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position"))
    client.force_login(annotator)
    _submit(client, mine[0])
    r = _submit(client, mine[1])
    page = client.get(r.json()["next_url"]).content.decode()
    assert "Alignment of pair “2” submitted." in page
    assert "synonyms-system" not in page and mine[1].pair.external_id not in page


def test_the_confirmation_is_shown_once(client, mine, annotator):
    client.force_login(annotator)
    next_url = _submit(client, mine).json()["next_url"]
    client.get(next_url)
    assert "submitted. Here is your next pair." not in client.get(next_url).content.decode()


def test_token_clients_get_no_page_message(api_client, mine, annotator):
    api_client.force_authenticate(annotator)
    r = api_client.post(
        reverse("alignment-api:assignment_submit", kwargs={"assignment_id": mine.pk}),
        {"sure": [], "possible": [], "revision": 0, "active_seconds": 1},
        format="json",
    )
    assert r.status_code == 200
    assert "messages" not in r.cookies

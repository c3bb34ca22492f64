"""Languages: a study's judge and annotator pages render in the study's language with nothing
left in English, researcher pages keep the site's language, and the researcher sets a study's
language on its page and through the API."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import translation

from annotation.alignment.models import AlignmentAssignment
from annotation.alignment.services.assignments import assignments_create
from annotation.alignment.services.drafts import assignment_submit
from annotation.alignment.services.pairs import pairs_import_file
from annotation.enums import Role
from annotation.judging.protocols.absolute.selectors import item_next_for_judge, item_previous_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.opening import study_judging_close
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.annotation.i18n_helpers import SHIPPED, english_left, study_data

pytestmark = pytest.mark.django_db


def test_every_judge_page_renders_in_the_study_language_with_nothing_left_in_english(
    client, translated_study, judge, lang
):
    study = translated_study
    expected = SHIPPED[lang]
    client.force_login(judge)
    data = study_data(study)
    pages = {"home": client.get(reverse("judging:home"))}
    pages["instructions"] = client.get(reverse("judging:instructions", kwargs={"study_id": study.pk}))
    client.post(reverse("judging:instructions", kwargs={"study_id": study.pk}))
    pages["rate"] = client.get(reverse("judging:rate", kwargs={"study_id": study.pk}))
    # An incomplete form comes back with the error box and per-criterion errors.
    html = pages["rate"].content.decode()
    token = re.search(r'name="token" value="([^"]*)"', html).group(1)
    pages["rate-error"] = client.post(reverse("judging:submit", kwargs={"study_id": study.pk}), {"token": token})
    assert pages["rate-error"].status_code == 400
    # Revising an earlier item, then the finished page.
    assignment = assignment_for_judge(study=study, judge=judge)
    while (item := item_next_for_judge(assignment=assignment)) is not None:
        judgment_submit(
            study=study,
            judge=judge,
            token=item.token,
            key=f"es-key-{item.position:06d}",
            scores={"adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4},
            serve_stamp=item.serve_stamp,
        )
    last = item_previous_for_judge(study=study, judge=judge)
    pages["revise"] = client.get(reverse("judging:revise", kwargs={"study_id": study.pk, "token": last.token}))
    pages["finished"] = client.get(reverse("judging:finished", kwargs={"study_id": study.pk}))
    study_judging_close(study=study)
    pages["not-open"] = client.get(reverse("judging:rate", kwargs={"study_id": study.pk}))
    for name, response in pages.items():
        html = response.content.decode()
        assert expected["html"] in html, name
        assert english_left(html, data) == [], name
    for name in ("instructions", "rate-error", "rate"):
        assert expected[name] in pages[name].content.decode(), name


def test_every_annotator_page_renders_in_the_study_language_with_nothing_left_in_english(
    client, study, annotator, researcher, lang
):
    from tests.annotation.alignment.conftest import PAIRS_JSONL

    expected = SHIPPED[lang]
    study_update(study=study, changes={"language": lang})
    pairs_import_file(study=study, data=PAIRS_JSONL.encode(), filename="pairs.jsonl")
    assignments_create(study=study)
    first, second = AlignmentAssignment.objects.filter(annotator=annotator).order_by("pk")[:2]
    client.force_login(annotator)
    data = study_data(study)
    pages = {
        "home": client.get(reverse("alignment:home")),
        "guidelines": client.get(reverse("alignment:guidelines")),
        "grid": client.get(reverse("alignment:grid", kwargs={"assignment_id": first.pk})),
    }
    assignment_submit(assignment=second, sure=[[0, 0]], possible=[], revision=0, active_seconds=1)
    pages["submitted"] = client.get(reverse("alignment:grid", kwargs={"assignment_id": second.pk}))
    for name, response in pages.items():
        html = response.content.decode()
        assert response.status_code == 200 and expected["html"] in html, name
        assert english_left(html, data) == [], name
    assert expected["home-status"] in pages["home"].content.decode()  # the assignment's status label
    assert expected["grid"] in pages["grid"].content.decode()


def test_the_submit_confirmation_reaches_the_annotator_in_the_study_language(client, study, annotator, lang):
    from tests.annotation.alignment.conftest import PAIRS_JSONL

    study_update(study=study, changes={"language": lang})
    pairs_import_file(study=study, data=PAIRS_JSONL.encode(), filename="pairs.jsonl")
    assignments_create(study=study)
    first = AlignmentAssignment.objects.filter(annotator=annotator).order_by("pk").first()
    client.force_login(annotator)
    url = reverse("alignment-api:assignment_submit", kwargs={"assignment_id": first.pk})
    r = client.post(url, {"sure": [[0, 0]], "possible": [], "revision": 0}, content_type="application/json")
    assert r.status_code == 200, r.content
    html = client.get(r.json()["next_url"]).content.decode()
    assert SHIPPED[lang]["submitted"] in html
    # A refused save tells the annotator why, in the same language.
    r = client.post(url, {"sure": [], "possible": [], "revision": 1}, content_type="application/json")
    with translation.override(lang):
        assert r.status_code == 409 and r.json()["detail"] == translation.gettext("this pair is already submitted")
    assert r.json()["detail"] != "this pair is already submitted"


def test_researcher_pages_stay_in_the_site_language_after_a_judge_page_on_the_same_thread(
    client, translated_study, judge, researcher, lang
):
    client.force_login(judge)
    assert SHIPPED[lang]["judge-home"] in client.get(reverse("judging:home")).content.decode()
    assert translation.get_language() == settings.LANGUAGE_CODE  # the judge page's language did not leak
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_detail", kwargs={"study_id": translated_study.pk})).content.decode()
    assert f'<html lang="{settings.LANGUAGE_CODE}" dir="ltr">' in html and "Log out" in html
    with translation.override(lang):
        assert translation.gettext("Log out") not in html


def test_a_page_listing_several_studies_uses_their_language_only_when_they_share_one(
    client, translated_study, judge, lang
):
    from tests.factories import study_with_data

    client.force_login(judge)
    assert f'<html lang="{lang}"' in client.get(reverse("judging:home")).content.decode()
    other = study_with_data(owner=translated_study.owner, name="English study")
    study_member_add(study=other, user=judge, role=Role.JUDGE)
    html = client.get(reverse("judging:home")).content.decode()
    assert f'<html lang="{settings.LANGUAGE_CODE}"' in html and "Your rating work" in html


def test_study_texts_take_their_own_direction(client, translated_study, judge):
    client.force_login(judge)
    client.post(reverse("judging:instructions", kwargs={"study_id": translated_study.pk}))
    html = client.get(reverse("judging:rate", kwargs={"study_id": translated_study.pk})).content.decode()
    assert html.count('<p class="sentence-text" dir="auto"') == 2


def test_the_researcher_sets_the_language_on_the_study_page(client, study, researcher):
    client.force_login(researcher)
    url = reverse("annotation:study_detail", kwargs={"study_id": study.pk})
    form = {
        "action": "settings",
        "settings-name": study.name,
        "settings-participant_title": "Pares",
        "settings-description": "",
    }
    assert client.post(url, form | {"settings-language": "es"}).status_code == 302
    study.refresh_from_db()
    assert study.language == "es"
    assert client.post(url, form | {"settings-language": "xx"}).status_code == 400
    assert client.post(url, form).status_code == 302  # not sent: unchanged
    study.refresh_from_db()
    assert study.language == "es"
    assert 'value="es" selected' in client.get(url).content.decode()


def test_the_api_creates_reads_and_changes_a_study_language(api_client, study, researcher):
    api_client.force_authenticate(researcher)
    r = api_client.post(reverse("annotation-api:study_create"), {"name": "Encuesta", "language": "es"}, format="json")
    assert r.status_code == 201 and r.json()["language"] == "es"
    assert (
        api_client.post(reverse("annotation-api:study_create"), {"name": "Other"}, format="json").json()["language"]
        == "en"
    )
    url = reverse("annotation-api:study_update", kwargs={"study_id": study.pk})
    r = api_client.patch(url, {"language": "es"}, format="json")
    assert r.status_code == 200 and r.json()["language"] == "es"
    r = api_client.patch(url, {"language": "klingon"}, format="json")
    assert r.status_code == 400 and "language" in r.json()
    detail = api_client.get(reverse("annotation-api:study_detail", kwargs={"study_id": study.pk})).json()
    assert detail["language"] == "es"


def test_a_study_language_is_never_switched_on_outside_a_participant_page(study):
    from annotation.web import participant_page, study_language_activate

    study.language = "ar"
    study_language_activate(study)  # e.g. a researcher view that borrowed the judge's helper
    assert translation.get_language() == settings.LANGUAGE_CODE

    seen = []
    participant_page(lambda request: (study_language_activate(study), seen.append(translation.get_language())))(None)
    assert seen == ["ar"] and translation.get_language() == settings.LANGUAGE_CODE

"""Languages: the field-study, training, feedback, attention-check, screened-out and comparison
pages render in the study's language with nothing left in English."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import translation

from annotation.enums import Role
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.annotation.i18n_helpers import SHIPPED, english_left, study_data

pytestmark = pytest.mark.django_db


# --- the field-study, training, screening and comparison pages -----------------------------------


def _assert_translated(pages: dict, lang: str, data: set[str]) -> None:
    for name, response in pages.items():
        html = response.content.decode()
        assert SHIPPED[lang]["html"] in html, name
        assert english_left(html, data) == [], name


def test_every_field_study_page_renders_in_the_study_language_with_nothing_left_in_english(
    client, study, researcher, lang
):
    from annotation.participation import services as participation_services
    from tests.annotation.participation.conftest import prolific_params, rate

    study_update(study=study, changes={"language": lang})
    design_update(study=study, changes={"control_counts": {"identical": 0, "random": 0, "unigram": 0}, "seed": 11})
    study_judging_open(study=study)
    study.refresh_from_db()
    link = participation_services.join_link_create(
        study=study, role="judge", platform="prolific", created_by=researcher, completion_code="C1A2B3C4"
    )
    consent = "Texto de consentimiento del estudio."
    before = {"name": "level", "type": "choice", "label": "Nivel", "required": True, "choices": ["uno", "dos"]}
    after = {"name": "comment", "type": "text", "label": "Comentario"}
    participation_services.participation_settings_update(
        study=study, consent_text=consent, questions_before=[before], questions_after=[after]
    )
    data = study_data(study) | {consent, "Nivel", "uno", "dos", "Comentario", "C1A2B3C4"}
    params = prolific_params()
    join_url = reverse("participation:join", args=[link.token])
    pages = {"consent": client.get(join_url, params, follow=True)}  # the ids move to the session first
    pages["refused"] = client.get(join_url, {"PROLIFIC_PID": "x"})  # an incomplete platform link
    pages["declined"] = client.post(join_url, {**params, "action": "decline"})
    pages["welcome"] = client.post(join_url, {**params, "action": "accept"})
    pages["welcome-back"] = Client().get(join_url, params, follow=True)  # the same submission in another browser
    questions_url = reverse("participation:questions", kwargs={"study_id": study.pk, "phase": "before"})
    assert client.get(reverse("participation:continue", kwargs={"study_id": study.pk}))["Location"] == questions_url
    pages["questions"] = client.get(questions_url)
    pages["questions-error"] = client.post(questions_url, {})  # a required question left empty
    assert client.post(questions_url, {"level": "uno"}).status_code == 302
    user = User.objects.get(participant__study=study)
    rate(study, user)
    pages["finished-questions"] = client.get(reverse("judging:finished", kwargs={"study_id": study.pk}))
    assert 'id="after-questions-link"' in pages["finished-questions"].content.decode()
    after_url = reverse("participation:questions", kwargs={"study_id": study.pk, "phase": "after"})
    pages["questions-after"] = client.get(after_url)
    client.post(after_url, {"comment": "bien"})
    pages["end-code"] = client.get(reverse("judging:finished", kwargs={"study_id": study.pk}))
    assert 'id="completion-code"' in pages["end-code"].content.decode()
    _assert_translated(pages, lang, data)
    with translation.override(lang):
        assert translation.gettext("This question needs an answer.") in pages["questions-error"].content.decode()


def test_training_feedback_attention_and_screened_out_pages_render_in_the_study_language(
    client, translated_study, judge, lang
):
    from annotation.judging import screening, training

    study = translated_study
    row = {
        "original": "Oración de práctica.",
        "candidate": "Frase de práctica.",
        "adequacy": 5,
        "explanation": "Significan lo mismo.",
    }
    training.training_item_add(study=study, row=row)
    screening.screening_settings_update(
        study=study,
        changes={
            "training_criteria": ["adequacy"],
            "training_tolerance": 0,
            "training_required": 1,
            "training_retries": 1,
            "attention_count": 1,
            "attention_policy": "end",
            "attention_max_failures": 1,
        },
    )
    data = study_data(study) | set(row.values()) - {5}
    client.force_login(judge)
    client.post(reverse("judging:instructions", kwargs={"study_id": study.pk}))
    rate_url = reverse("judging:rate", kwargs={"study_id": study.pk})
    training_url = reverse("judging:training", kwargs={"study_id": study.pk})
    feedback_url = reverse("judging:training_feedback", kwargs={"study_id": study.pk})
    assert client.get(rate_url)["Location"] == training_url
    pages = {"training": client.get(training_url)}

    def answer(adequacy):
        token = re.search(r'name="token" value="([^"]*)"', client.get(training_url).content.decode()).group(1)
        return client.post(
            training_url, {"token": token, "adequacy": adequacy, "fluency": 4, "dissimilarity": 3, "overall": 4}
        )

    pages["training-error"] = client.post(
        training_url, {"token": re.search(r'name="token" value="([^"]*)"', pages["training"].content.decode()).group(1)}
    )
    assert pages["training-error"].status_code == 400
    assert answer(1)["Location"] == feedback_url
    pages["feedback-retry"] = client.get(feedback_url)
    assert answer(5)["Location"] == feedback_url
    pages["feedback-passed"] = client.get(feedback_url)
    attention_url = reverse("judging:attention", kwargs={"study_id": study.pk})
    for _ in range(100):
        r = client.get(rate_url)
        if r.status_code == 302:
            break
        token = re.search(r'name="token" value="([^"]*)"', r.content.decode()).group(1)
        serve = re.search(r'name="serve" value="([^"]*)"', r.content.decode())
        client.post(
            reverse("judging:submit", kwargs={"study_id": study.pk}),
            {
                "token": token,
                "serve": serve.group(1) if serve else "",
                "key": f"i18n-{_:04d}",
                "adequacy": 4,
                "fluency": 4,
                "dissimilarity": 3,
                "overall": 4,
            },
        )
    assert r["Location"] == attention_url
    pages["attention"] = client.get(attention_url)
    html = pages["attention"].content.decode()
    token = re.search(r'name="token" value="([^"]*)"', html).group(1)
    chosen = {int(v) for v in re.findall(r'name="value" id="value-(\d+)"', html)}
    expected = assignment_for_judge(study=study, judge=judge).attention_checks.get(token=token).expected
    wrong = min(chosen - {int(expected)})  # a discrete criterion: any other point fails the check
    client.post(attention_url, {"token": token, "value": wrong})
    pages["screened-out"] = client.get(reverse("judging:screened_out", kwargs={"study_id": study.pk}))
    assert pages["screened-out"].status_code == 200
    _assert_translated(pages, lang, data)


def test_every_comparison_page_renders_in_the_study_language_with_nothing_left_in_english(
    client, researcher, make_user, lang
):
    from tests.factories import study_with_data

    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="Comparación")
    study_update(study=study, changes={"language": lang})
    judge = make_user("cmp-judge")
    study_member_add(study=study, user=judge, role=Role.JUDGE)
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 5, "control_counts": {"identical": 0, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    client.force_login(judge)
    data = study_data(study)
    instructions_url = reverse("judging:instructions", kwargs={"study_id": study.pk})
    compare_url = reverse("judging:compare", kwargs={"study_id": study.pk})
    pages = {"instructions": client.get(instructions_url)}
    client.post(instructions_url)
    pages["compare"] = client.get(compare_url)
    html = pages["compare"].content.decode()
    fields = {n: re.search(rf'name="{n}" value="([^"]*)"', html).group(1) for n in ("token", "serve", "key")}
    submit_url = reverse("judging:compare_submit", kwargs={"study_id": study.pk})
    pages["compare-error"] = client.post(submit_url, fields)
    assert pages["compare-error"].status_code == 400
    while (r := client.get(compare_url)) and 'name="token"' in (html := r.content.decode()):
        fields = {n: re.search(rf'name="{n}" value="([^"]*)"', html).group(1) for n in ("token", "serve", "key")}
        assert client.post(submit_url, {**fields, "preference": "A"}).status_code == 302
    pages["compare-done"] = r
    assert 'id="done-h"' in html
    _assert_translated(pages, lang, data)
    with translation.override(lang):
        assert f'data-msg-missing="{translation.gettext("Answer every question first.")}"' in (
            pages["compare"].content.decode()
        )

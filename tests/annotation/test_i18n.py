"""Languages: a study's judge and annotator pages render in the study's language, the shipped
catalogs are complete and compiled, and no judge- or annotator-facing string is left unmarked."""

from __future__ import annotations

import gettext
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import translation

from annotation import services as study_services
from annotation.alignment import services as alignment_services
from annotation.alignment.models import AlignmentAssignment, AlignmentPair
from annotation.enums import Role
from annotation.judging import selectors as judging_selectors
from annotation.judging import services as judging_services
from annotation.judging.views import criteria_for_judge

pytestmark = pytest.mark.django_db

LOCALE = Path(settings.BASE_DIR) / "locale"
PO_FILES = sorted(LOCALE.glob("*/LC_MESSAGES/django.po"))
SECOND = "es"
#: Per shipped language: the page's <html> tag and a few translations each page must show.
SHIPPED = {
    "es": {"html": '<html lang="es" dir="ltr">', "instructions": "Evalúe cada par",
           "rate-error": "Dé a cada criterio un valor en su escala.",
           "rate": 'data-msg-missing="Primero dé un valor a cada criterio."', "home-status": "Sin empezar",
           "grid": 'data-msg-draft-saved="Borrador guardado"', "submitted": "enviada. Aquí tiene su siguiente par.",
           "judge-home": "Sus evaluaciones"},
    "ar": {"html": '<html lang="ar" dir="rtl">', "instructions": "قيّم كل زوج",
           "rate-error": "أعطِ كل معيار قيمة على مقياسه.",
           "rate": 'data-msg-missing="أعطِ كل معيار قيمة أولًا."', "home-status": "لم يبدأ",
           "grid": 'data-msg-draft-saved="حُفظت المسودة"', "submitted": "هذا زوجك التالي.",
           "judge-home": "عملك في التقييم"},
}

#: Words of English UI text that are not Spanish words: one left outside the data means an unmarked string.
ENGLISH_MARKERS = frozenset("""
the your you and of to is are this with pair pairs rate rated rating item items submit back next previous
sentence sentences words link links saved how keys done log out skip content study studies guidelines alignment
tasks grid click drag undo redo clear instructions change changes save start continue review paraphrase context
ended started yet not set every criterion value
""".split())


# --- the catalogs --------------------------------------------------------------------------

def _catalog(entries) -> dict:
    out = {}
    for e in entries:
        if e.obsolete or "fuzzy" in e.flags or not e.msgid:
            continue
        out[(e.msgctxt, e.msgid)] = (
            tuple(e.msgstr_plural[k] for k in sorted(e.msgstr_plural)) if e.msgid_plural else e.msgstr)
    return out


def test_the_shipped_languages_are_offered_and_have_catalogs():
    for lang in SHIPPED:
        assert lang in dict(settings.LANGUAGES)
        assert (LOCALE / lang / "LC_MESSAGES" / "django.po") in PO_FILES
    assert translation.get_language_info("ar")["bidi"] is True


@pytest.mark.parametrize("po_path", PO_FILES, ids=lambda p: p.parent.parent.name)
def test_every_string_is_translated_and_the_committed_mo_matches_the_po(po_path):
    """Fails when a .po changed without `make compilemessages` (the .mo is what Django reads)."""
    po = polib.pofile(str(po_path))
    assert po.untranslated_entries() == [] and po.fuzzy_entries() == []
    mo_path = po_path.with_suffix(".mo")
    assert mo_path.exists(), f"{mo_path} is missing: run make compilemessages"
    assert _catalog(polib.mofile(str(mo_path))) == _catalog(po), (
        f"{mo_path} is stale: run make compilemessages and commit it")


@pytest.mark.parametrize("po_path", PO_FILES, ids=lambda p: p.parent.parent.name)
def test_django_serves_the_committed_translations(po_path):
    lang = po_path.parent.parent.name
    po = polib.pofile(str(po_path))
    # The catalog's own plural rule (Arabic has six forms) says which form n takes.
    plural_form = gettext.c2py(re.search(r"plural=(.*?);?$", po.metadata["Plural-Forms"]).group(1))
    with translation.override(lang):
        for e in po.translated_entries():
            if e.msgid_plural:
                for n in (1, 2, 5, 11, 100):
                    got = translation.npgettext(e.msgctxt, e.msgid, e.msgid_plural, n) if e.msgctxt else (
                        translation.ngettext(e.msgid, e.msgid_plural, n))
                    assert got == e.msgstr_plural[plural_form(n)], (e.msgid, n)
            else:
                got = translation.pgettext(e.msgctxt, e.msgid) if e.msgctxt else translation.gettext(e.msgid)
                assert got == e.msgstr, e.msgid


@pytest.mark.parametrize("po_path", PO_FILES, ids=lambda p: p.parent.parent.name)
def test_translations_keep_every_placeholder(po_path):
    pattern = re.compile(r"%\(\w+\)s|\{\w+\}|</?\w+[^>]*>")
    for e in polib.pofile(str(po_path)).translated_entries():
        targets = list(e.msgstr_plural.values()) if e.msgid_plural else [e.msgstr]
        for t in targets:
            assert sorted(set(pattern.findall(t))) == sorted(set(pattern.findall(e.msgid))), e.msgid


#: What `make messages` skips (Makefile, I18N_IGNORE): none of it is a judge's or annotator's page.
_NOT_SCANNED = {".git", ".venv", "var", "tests", "benchmarks", "docs", "site", "static", "fixtures", "locale"}


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs Debian's gettext (xgettext, msgmerge)")
def test_the_catalogs_hold_exactly_the_strings_marked_in_the_code(tmp_path):
    """Fails when a string was marked (or unmarked) without `make messages`: runs makemessages on
    a copy of the sources, so the repository's catalogs are not touched."""
    base = Path(settings.BASE_DIR)

    def ignore(directory, names):
        top = Path(directory) == base
        return {n for n in names if (top and n in _NOT_SCANNED) or n == "__pycache__"
                or (Path(directory, n).is_file() and not n.endswith((".py", ".html", ".txt")))}

    shutil.copytree(base, tmp_path / "src", ignore=ignore)
    shutil.copytree(LOCALE, tmp_path / "src" / "locale")
    langs = [p.parent.parent.name for p in PO_FILES]
    subprocess.run([sys.executable, "manage.py", "makemessages", "--no-location", "--no-obsolete",
                    *[f"-l{lang}" for lang in langs]], cwd=tmp_path / "src", check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(tmp_path / "src")})
    for po_path in PO_FILES:
        fresh = polib.pofile(str(tmp_path / "src" / po_path.relative_to(base)))
        committed = polib.pofile(str(po_path))
        ids = lambda po: {(e.msgctxt, e.msgid) for e in po if not e.obsolete}  # noqa: E731
        assert ids(fresh) == ids(committed), f"{po_path}: run make messages, translate, make compilemessages"


# --- rendering the pages in the study's language ---------------------------------------------------

class _Text(HTMLParser):
    """Visible text and the attributes a person reads (labels, titles, script messages), minus
    <script>, <style> and the quoted English example words of the alignment guidelines (<q>, <kbd>)."""

    SKIP = {"script", "style", "q", "kbd"}
    ATTRS = {"aria-label", "title", "placeholder", "alt", "aria-valuetext"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.chunks: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in self.SKIP:
            self._skip += 1
        for name, value in attrs:
            if value and (name in self.ATTRS or name.startswith("data-msg-")):
                self.chunks.append(value)

    def handle_endtag(self, tag):
        if tag in self.SKIP:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and data.strip():
            self.chunks.append(data.strip())


def english_left(html: str, data: set[str]) -> list[str]:
    """The English UI words of ``html`` once the study's own texts (``data``) are taken out."""
    parser = _Text()
    parser.feed(html)
    found = []
    long_data = sorted((d for d in data if len(d) >= 12), key=len, reverse=True)
    for chunk in parser.chunks:
        if chunk in data:
            continue
        for d in long_data:
            chunk = chunk.replace(d, " ")
        chunk = re.sub(r"\{\w+\}", " ", chunk)  # a script message's placeholders ({name}, {words}) are code
        words = re.findall(r"[A-Za-z]+", chunk)
        found += [f"{w!r} in {chunk!r}" for w in words if w.lower() in ENGLISH_MARKERS]
    return found


def study_data(study) -> set[str]:
    """Everything the researcher wrote or imported: shown as written, never translated."""
    from annotation.models import Candidate, Original

    data = {study.participant_title, "paraeval"}
    data |= set(Original.objects.filter(study=study).values_list("text", flat=True))
    data |= set(Candidate.objects.filter(original__study=study).values_list("text", flat=True))
    for c in criteria_for_judge(judging_selectors.study_criteria(study=study)):
        data |= {c["name"], c["help"], c.get("low", ""), c.get("mid", ""), c.get("high", "")}
        data |= {p["label"] for p in c["points"]}
    for pair in AlignmentPair.objects.filter(study=study):
        data |= {pair.text1, pair.text2, *pair.tokens1, *pair.tokens2}
    for user in User.objects.all():
        data.add(user.username)
    return {d for d in data if d}


@pytest.fixture(params=sorted(SHIPPED))
def lang(request):
    return request.param


@pytest.fixture
def translated_study(study, judge, researcher, lang):
    study_services.study_update(study=study, changes={"language": lang})
    judging_services.design_update(study=study, changes={"seed": 3})
    judging_services.study_judging_open(study=study)
    study.refresh_from_db()
    return study


def test_every_judge_page_renders_in_the_study_language_with_nothing_left_in_english(
        client, translated_study, judge, lang):
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
    assignment = judging_selectors.assignment_for_judge(study=study, judge=judge)
    while (item := judging_selectors.item_next_for_judge(assignment=assignment)) is not None:
        judging_services.judgment_submit(study=study, judge=judge, token=item.token, key=f"es-key-{item.position:06d}",
                                         scores={"adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4},
                                         serve_stamp=item.serve_stamp)
    last = judging_selectors.item_previous_for_judge(study=study, judge=judge)
    pages["revise"] = client.get(reverse("judging:revise", kwargs={"study_id": study.pk, "token": last.token}))
    pages["finished"] = client.get(reverse("judging:finished", kwargs={"study_id": study.pk}))
    judging_services.study_judging_close(study=study)
    pages["not-open"] = client.get(reverse("judging:rate", kwargs={"study_id": study.pk}))
    for name, response in pages.items():
        html = response.content.decode()
        assert expected["html"] in html, name
        assert english_left(html, data) == [], name
    for name in ("instructions", "rate-error", "rate"):
        assert expected[name] in pages[name].content.decode(), name


def test_every_annotator_page_renders_in_the_study_language_with_nothing_left_in_english(
        client, study, annotator, researcher, lang):
    from tests.annotation.alignment.conftest import PAIRS_JSONL

    expected = SHIPPED[lang]
    study_services.study_update(study=study, changes={"language": lang})
    alignment_services.pairs_import_file(study=study, data=PAIRS_JSONL.encode(), filename="pairs.jsonl")
    alignment_services.assignments_create(study=study)
    first, second = AlignmentAssignment.objects.filter(annotator=annotator).order_by("pk")[:2]
    client.force_login(annotator)
    data = study_data(study)
    pages = {"home": client.get(reverse("alignment:home")), "guidelines": client.get(reverse("alignment:guidelines")),
             "grid": client.get(reverse("alignment:grid", kwargs={"assignment_id": first.pk}))}
    alignment_services.assignment_submit(assignment=second, sure=[[0, 0]], possible=[], revision=0, active_seconds=1)
    pages["submitted"] = client.get(reverse("alignment:grid", kwargs={"assignment_id": second.pk}))
    for name, response in pages.items():
        html = response.content.decode()
        assert response.status_code == 200 and expected["html"] in html, name
        assert english_left(html, data) == [], name
    assert expected["home-status"] in pages["home"].content.decode()  # the assignment's status label
    assert expected["grid"] in pages["grid"].content.decode()


def test_the_submit_confirmation_reaches_the_annotator_in_the_study_language(client, study, annotator, lang):
    from tests.annotation.alignment.conftest import PAIRS_JSONL

    study_services.study_update(study=study, changes={"language": lang})
    alignment_services.pairs_import_file(study=study, data=PAIRS_JSONL.encode(), filename="pairs.jsonl")
    alignment_services.assignments_create(study=study)
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
        client, translated_study, judge, researcher, lang):
    client.force_login(judge)
    assert SHIPPED[lang]["judge-home"] in client.get(reverse("judging:home")).content.decode()
    assert translation.get_language() == settings.LANGUAGE_CODE  # the judge page's language did not leak
    client.force_login(researcher)
    html = client.get(reverse("annotation:study_detail", kwargs={"study_id": translated_study.pk})).content.decode()
    assert f'<html lang="{settings.LANGUAGE_CODE}" dir="ltr">' in html and "Log out" in html
    with translation.override(lang):
        assert translation.gettext("Log out") not in html


def test_a_page_listing_several_studies_uses_their_language_only_when_they_share_one(
        client, translated_study, judge, lang):
    from tests.factories import study_with_data

    client.force_login(judge)
    assert f'<html lang="{lang}"' in client.get(reverse("judging:home")).content.decode()
    other = study_with_data(owner=translated_study.owner, name="English study")
    study_services.study_member_add(study=other, user=judge, role=Role.JUDGE)
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
    form = {"action": "settings", "settings-name": study.name, "settings-participant_title": "Pares",
            "settings-description": ""}
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
    assert api_client.post(reverse("annotation-api:study_create"), {"name": "Other"}, format="json").json()[
        "language"] == "en"
    url = reverse("annotation-api:study_update", kwargs={"study_id": study.pk})
    r = api_client.patch(url, {"language": "es"}, format="json")
    assert r.status_code == 200 and r.json()["language"] == "es"
    r = api_client.patch(url, {"language": "klingon"}, format="json")
    assert r.status_code == 400 and "language" in r.json()
    detail = api_client.get(reverse("annotation-api:study_detail", kwargs={"study_id": study.pk})).json()
    assert detail["language"] == "es"


def test_a_study_language_is_never_switched_on_outside_a_participant_page(study):
    from annotation.views import participant_page, study_language_activate

    study.language = "ar"
    study_language_activate(study)  # e.g. a researcher view that borrowed the judge's helper
    assert translation.get_language() == settings.LANGUAGE_CODE

    seen = []
    participant_page(lambda request: (study_language_activate(study), seen.append(translation.get_language())))(None)
    assert seen == ["ar"] and translation.get_language() == settings.LANGUAGE_CODE


# --- the field-study, training, screening and comparison pages -----------------------------------

def _assert_translated(pages: dict, lang: str, data: set[str]) -> None:
    for name, response in pages.items():
        html = response.content.decode()
        assert SHIPPED[lang]["html"] in html, name
        assert english_left(html, data) == [], name


def test_every_field_study_page_renders_in_the_study_language_with_nothing_left_in_english(
        client, study, researcher, lang):
    from annotation.participation import services as participation_services
    from tests.annotation.participation.conftest import prolific_params, rate

    study_services.study_update(study=study, changes={"language": lang})
    judging_services.design_update(study=study, changes={
        "control_counts": {"identical": 0, "random": 0, "unigram": 0}, "seed": 11})
    judging_services.study_judging_open(study=study)
    study.refresh_from_db()
    link = participation_services.join_link_create(study=study, role="judge", platform="prolific",
                                                   created_by=researcher, completion_code="C1A2B3C4")
    consent = "Texto de consentimiento del estudio."
    before = {"name": "level", "type": "choice", "label": "Nivel", "required": True, "choices": ["uno", "dos"]}
    after = {"name": "comment", "type": "text", "label": "Comentario"}
    participation_services.participation_settings_update(study=study, consent_text=consent,
                                                         questions_before=[before], questions_after=[after])
    data = study_data(study) | {consent, "Nivel", "uno", "dos", "Comentario", "C1A2B3C4"}
    params = prolific_params()
    join_url = reverse("participation:join", args=[link.token])
    pages = {"consent": client.get(join_url, params)}
    pages["refused"] = client.get(join_url, {"PROLIFIC_PID": "x"})  # an incomplete platform link
    pages["declined"] = client.post(join_url, {**params, "action": "decline"})
    pages["welcome"] = client.post(join_url, {**params, "action": "accept"})
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
        client, translated_study, judge, lang):
    from annotation.judging import screening, training

    study = translated_study
    row = {"original": "Oración de práctica.", "candidate": "Frase de práctica.", "adequacy": 5,
           "explanation": "Significan lo mismo."}
    training.training_item_add(study=study, row=row)
    screening.screening_settings_update(study=study, changes={
        "training_criteria": ["adequacy"], "training_tolerance": 0, "training_required": 1, "training_retries": 1,
        "attention_count": 1, "attention_policy": "end", "attention_max_failures": 1})
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
        return client.post(training_url, {"token": token, "adequacy": adequacy, "fluency": 4, "dissimilarity": 3,
                                          "overall": 4})

    pages["training-error"] = client.post(training_url, {"token": re.search(
        r'name="token" value="([^"]*)"', pages["training"].content.decode()).group(1)})
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
        client.post(reverse("judging:submit", kwargs={"study_id": study.pk}), {
            "token": token, "serve": serve.group(1) if serve else "", "key": f"i18n-{_:04d}",
            "adequacy": 4, "fluency": 4, "dissimilarity": 3, "overall": 4})
    assert r["Location"] == attention_url
    pages["attention"] = client.get(attention_url)
    html = pages["attention"].content.decode()
    token = re.search(r'name="token" value="([^"]*)"', html).group(1)
    chosen = {int(v) for v in re.findall(r'name="value" id="value-(\d+)"', html)}
    expected = judging_selectors.assignment_for_judge(study=study, judge=judge).attention_checks.get(
        token=token).expected
    wrong = min(chosen - {int(expected)})  # a discrete criterion: any other point fails the check
    client.post(attention_url, {"token": token, "value": wrong})
    pages["screened-out"] = client.get(reverse("judging:screened_out", kwargs={"study_id": study.pk}))
    assert pages["screened-out"].status_code == 200
    _assert_translated(pages, lang, data)


def test_every_comparison_page_renders_in_the_study_language_with_nothing_left_in_english(
        client, researcher, make_user, lang):
    from tests.factories import study_with_data

    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="Comparación")
    study_services.study_update(study=study, changes={"language": lang})
    judge = make_user("cmp-judge")
    study_services.study_member_add(study=study, user=judge, role=Role.JUDGE)
    judging_services.design_update(study=study, changes={
        "protocol": "comparison", "seed": 5, "control_counts": {"identical": 0, "random": 0, "unigram": 0}})
    judging_services.study_judging_open(study=study)
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
            pages["compare"].content.decode())

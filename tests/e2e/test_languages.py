"""Languages in Chromium: right-to-left study texts on the judge page and the alignment grid
(computed direction, clicks and keys still reach the right tokens), and a study whose pages
are in Spanish, down to the messages the page's script shows."""

from __future__ import annotations

import re

import pytest
from django.utils import translation
from playwright.sync_api import expect

from annotation.alignment.models import AlignmentAssignment, AlignmentPair
from annotation.alignment.services.assignments import assignments_create
from annotation.alignment.services.pairs import pairs_import_file
from annotation.enums import Role
from annotation.models import Candidate, Original
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.conftest import browser_login, enter_on_autofocus, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Arabic sentences (Genesis 1:1-5 in plain modern wording) and paraphrases of them.
ARABIC = [
    ("في البدء خلق الله السماوات والأرض.", "خلق الله السماوات والأرض في البداية."),
    ("وكانت الأرض خربة وخالية.", "كانت الأرض فارغة وبلا شكل."),
    ("وقال الله ليكن نور فكان نور.", "قال الله ليكن نور فصار نور."),
    ("ورأى الله النور أنه حسن.", "رأى الله أن النور حسن."),
    ("وفصل الله بين النور والظلمة.", "فرق الله بين النور والظلام."),
]


def direction(locator) -> str:
    return locator.evaluate("el => getComputedStyle(el).direction")


@pytest.fixture
def arabic_study(study, make_user):
    """The fixture study with Arabic texts, its pages in Spanish, opened for judge 'ann'."""
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    for o, (original, paraphrase) in zip(Original.objects.filter(study=study).order_by("external_id"), ARABIC):
        o.text = original
        o.save()
        Candidate.objects.filter(original=o).update(text=paraphrase)
    study_update(study=study, changes={"language": "es"})
    ann = make_user("ann")
    study_member_add(study=study, user=ann, role=Role.JUDGE)
    design_update(study=study, changes={"seed": 11})
    study_judging_open(study=study)
    return study, ann


def test_a_judge_rates_arabic_pairs_on_spanish_pages_by_keyboard(page, arabic_study):
    from annotation.judging.protocols.absolute.models import Judgment

    study, ann = arabic_study
    browser_login(page, "ann")
    expect(page.locator("html")).to_have_attribute("lang", "es")
    page.get_by_role("link", name="Empezar").click()
    expect(page.get_by_role("heading", name="Cómo evaluar")).to_be_visible()
    enter_on_autofocus(page)
    expect(page.locator("#item-h")).to_have_text("1 de 25")
    expect(page.locator(".criterion.is-current")).to_have_count(1)

    # The page chrome stays left-to-right; each study text takes its own direction.
    assert direction(page.locator("main")) == "ltr"
    texts = page.locator(".sentence-text")
    expect(texts).to_have_count(2)
    for k in range(2):
        assert re.search(r"[\u0600-\u06FF]", texts.nth(k).inner_text())
        assert direction(texts.nth(k)) == "rtl"
    screenshot(page, "judge-rtl-spanish")

    # rate.js speaks the page's language too (its messages come from the template).
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    expect(page.locator("#rate-status")).to_have_text("Primero dé un valor a cada criterio.")
    for key in "523":
        page.keyboard.press(key)
    expect(page.locator("#rate-status")).to_have_text("Todos los criterios tienen un valor: pulse Intro para enviar.")
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text("2 de 25")
    first = Judgment.objects.get(judge=ann)
    assert first.scores == {"adequacy": 4, "fluency": 5, "dissimilarity": 2, "overall": 3}

    # B goes back to the first pair, ? opens the instructions.
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    page.keyboard.press("b")
    expect(page.locator("#item-h")).to_have_text("Cambiando el ítem 1 de 25")
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    page.keyboard.press("?")
    expect(page.get_by_role("heading", name="Cómo evaluar")).to_be_visible()


def test_a_judge_rates_on_arabic_pages_that_read_right_to_left(page, arabic_study):
    from annotation.judging.protocols.absolute.models import Judgment

    study, ann = arabic_study
    study_update(study=study, changes={"language": "ar"})
    browser_login(page, "ann")
    expect(page.locator("html")).to_have_attribute("dir", "rtl")
    page.get_by_role("link", name="ابدأ").click()
    expect(page.get_by_role("heading", name="كيف تقيّم")).to_be_visible()
    enter_on_autofocus(page)
    expect(page.locator("#item-h")).to_have_text("1 من 25")
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    assert direction(page.locator("main")) == "rtl"
    for k in range(2):
        assert direction(page.locator(".sentence-text").nth(k)) == "rtl"
    # Nothing hangs off the page's start edge (an RTL page scrolls toward the left).
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "judge-rtl-arabic")
    for key in "4523":
        page.keyboard.press(key)
    expect(page.locator("#rate-status")).to_have_text("لكل معيار قيمة: اضغط Enter للإرسال.")
    page.keyboard.press("Enter")
    expect(page.locator("#item-h")).to_have_text("2 من 25")
    assert Judgment.objects.get(judge=ann).scores == {"adequacy": 4, "fluency": 5, "dissimilarity": 2, "overall": 3}
    expect(page.locator(".criterion.is-current")).to_have_count(1)
    page.keyboard.press("b")
    expect(page.locator("#item-h")).to_have_text("جارٍ تغيير البند 1 من 25")


ARABIC_PAIR = ("ذهب الولد إلى المدرسة صباحا", "الولد ذهب صباحا إلى المدرسة")


@pytest.fixture(params=["en", "ar"])
def arabic_task(request, study, annotator):
    """An Arabic pair for annotator 'anna', on English pages and on Arabic (right-to-left) ones."""
    study_update(study=study, changes={"language": request.param})
    s1, s2 = ARABIC_PAIR
    pairs_import_file(study=study, data=f"pair_id,sentence1,sentence2\nar,{s1},{s2}\n".encode(), filename="p.csv")
    assignments_create(study=study)
    return AlignmentAssignment.objects.get(annotator=annotator)


def in_language(lang: str, text: str) -> str:
    with translation.override(lang):
        return translation.gettext(text)


def cell(page, w1, w2, state, lang="en"):
    """A grid cell by its accessible name, which names the link state in the page's language."""
    return page.get_by_role("button", name=f"{w1} × {w2}, {in_language(lang, state)}", exact=True)


def test_the_alignment_grid_maps_clicks_and_keys_to_the_right_arabic_tokens(page, arabic_task):
    pair = AlignmentPair.objects.get(pk=arabic_task.pair_id)
    t1, t2 = pair.tokens1, pair.tokens2
    assert t1 == ARABIC_PAIR[0].split() and t2 == ARABIC_PAIR[1].split()
    browser_login(page, "anna")
    page.goto(f"/alignment/tasks/{arabic_task.pk}/")

    # The two sentences read right to left; the page around them follows its own language;
    # the grid keeps its geometry (ArrowRight is the next column) either way.
    lang = arabic_task.pair.study.language
    rtl_page = lang == "ar"
    expect(page.locator("html")).to_have_attribute("dir", "rtl" if rtl_page else "ltr")
    for side in ("#sentence1 .sentence-tokens", "#sentence2 .sentence-tokens"):
        assert direction(page.locator(side)) == "rtl"
    assert direction(page.locator("main")) == ("rtl" if rtl_page else "ltr")
    assert direction(page.locator("#grid-scroll")) == "ltr"
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")

    # A click links exactly the two words the cell names: "الولد" (row 1) × "الولد" (column 0).
    target = cell(page, t1[1], t2[0], "no link", lang)
    expect(target).to_be_visible()
    target.click()
    expect(cell(page, t1[1], t2[0], "sure link", lang)).to_be_visible()
    # Pointing at it highlights those same words in the running Arabic text.
    cell(page, t1[1], t2[0], "sure link", lang).hover()
    # The summary above the grid says it in the page's language too.
    expect(page.locator("#link-summary")).to_contain_text(in_language(lang, "sure link"))
    expect(page.locator('.tok[data-side="1"][data-k="1"]')).to_have_class(re.compile(r"\bhl\b"))
    expect(page.locator('.tok[data-side="2"][data-k="0"]')).to_have_class(re.compile(r"\bhl\b"))
    expect(page.locator(".tok.hl")).to_have_count(2)

    # Keys: from (0, 0), ArrowDown + ArrowRight reach (1, 1); P makes a possible link there; Space a sure one at (0, 1).
    cell(page, t1[0], t2[0], "no link", lang).focus()
    page.keyboard.press("ArrowRight")
    expect(cell(page, t1[0], t2[1], "no link", lang)).to_be_focused()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowDown")
    expect(cell(page, t1[1], t2[1], "no link", lang)).to_be_focused()
    page.keyboard.press("p")
    expect(cell(page, t1[1], t2[1], "possible link", lang)).to_be_visible()
    expect(page.locator("#save-status")).to_have_text(in_language(lang, "Saved"))
    screenshot(page, f"annotator-grid-rtl-{arabic_task.pair.study.language}")

    # What the server stored is what the cells said.
    arabic_task.refresh_from_db()
    assert {tuple(x) for x in arabic_task.sure} == {(1, 0), (0, 1)}
    assert {tuple(x) for x in arabic_task.possible} == {(1, 1)}
    page.keyboard.press("Enter")
    expect(page).to_have_url(re.compile(r"/alignment/$"))
    arabic_task.refresh_from_db()
    assert arabic_task.status == "submitted"

"""Error span annotation in real Chromium: the researcher opens an ESA study (spans pre-filled
by the aligner), a judge marks spans with the mouse and with the keyboard word cursor, accepts
and deletes suggested spans, uses the [missing] marker, scores and submits every item; the
stored spans are what the page showed (code points, across an emoji sequence and combining
marks); the report is built and shown; both exports are downloaded and hold the stored spans.
A second test walks the Arabic page: right to left, → moves to the previous word."""

from __future__ import annotations

import csv
import io
import json

import pytest
from playwright.sync_api import expect

from annotation.enums import Role
from annotation.services.membership import study_member_add
from annotation.services.studies import study_update
from tests.conftest import browser_login
from tests.factories import study_with_data

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LOAD = 30_000
#: Candidates with characters that are not one UTF-16 unit each: an emoji ZWJ family (5 code
#: points, 8 units), a combining acute accent, a mathematical letter (2 units).
UNICODE = [
    "👩\u200d👩\u200d👧 familie\u0301 said something quite different.",
    "The cafe\u0301 𝒳 spoke plainly, more or less.",
]


def _watch(pg, bad: list[str]) -> None:
    pg.on("response", lambda r: bad.append(f"{r.status} {r.url}") if r.status >= 400 else None)


def _shown_spans(pg) -> list[dict]:
    return json.loads(pg.locator("#esa-spans-input").input_value())


def _annotate_item(pg, n: int) -> None:
    """Decide the suggestions (accept on even items, delete on odd), mark one span with the mouse
    (a drag over the paraphrase's first word, major) and one with the keyboard (↓ → Shift+→,
    minor), the [missing] marker on every third item, then score and submit with Enter."""
    while pg.locator(".esa-span.is-suggested").count():
        pg.locator(".esa-span.is-suggested").first.locator(".esa-accept" if n % 2 == 0 else ".esa-delete").click()
    first = pg.locator("#esa-candidate .seg").first
    first.scroll_into_view_if_needed()
    box = first.bounding_box()
    y = box["y"] + box["height"] / 2
    pg.mouse.move(box["x"] + 1, y)
    pg.mouse.down()
    pg.mouse.move(box["x"] + box["width"] + 3, y, steps=5)  # a drag over the first word, into the space after it
    pg.mouse.up()
    expect(pg.locator("#esa-new")).to_be_visible()
    pg.locator("#esa-add-major").click()
    pg.locator("#esa-span-list").click(position={"x": 1, "y": 1})  # focus away from the buttons
    pg.keyboard.press("ArrowDown")
    pg.keyboard.press("ArrowRight")
    pg.keyboard.press("Shift+ArrowRight")
    expect(pg.locator("#esa-new")).to_be_visible()
    pg.keyboard.press("1")
    if n % 3 == 0:
        pg.locator("#esa-missing").click()
        pg.keyboard.press("2")
    pg.keyboard.press("Enter")  # no score yet: the page refuses and says so
    expect(pg.locator("#rate-status")).to_contain_text("score")
    pg.locator("#esa-score").fill(str(20 + 5 * n))


def test_a_judge_marks_scores_and_submits_every_item_and_the_researcher_gets_report_and_exports(
    page, live_server, researcher, make_user
):
    from annotation.judging.protocols.esa.models import EsaItem, EsaJudgment
    from annotation.judging.services.design import design_update
    from annotation.models import Candidate
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create

    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha", "beta"), name="ESA walk")
    for cand, text in zip(
        Candidate.objects.filter(original__study=study, system__name="alpha").order_by("pk"), UNICODE
    ):
        cand.text = text
        cand.save()
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "seed": 5,
            "esa_prefill": "aligner",
            "control_counts": {"identical": 1, "random": 0, "unigram": 0},
        },
    )
    bad: list[str] = []
    _watch(page, bad)
    browser_login(page, "rita")
    page.goto(f"/studies/{study.pk}/judging/design/")
    page.locator("#open-button").click()
    page.wait_for_load_state()
    assert EsaItem.objects.filter(assignment__study=study).count() == 6
    assert EsaItem.objects.filter(assignment__study=study).exclude(proposed=[]).exists()

    ctx = page.context.browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    _watch(pg, bad)
    browser_login(pg, "ann")
    pg.goto(f"/judge/studies/{study.pk}/esa/")
    pg.locator('form[action$="/instructions/"] button[type="submit"]').click()
    shown: dict[str, list[dict]] = {}
    texts: dict[str, dict[str, str]] = {}
    n = 0
    while True:
        expect(pg.locator("#rating-form, #done-h").first).to_be_visible(timeout=LOAD)
        if pg.locator("#done-h").count():
            break
        token = pg.locator('#rating-form input[name="token"]').input_value()
        expect(pg.locator("#rating-form[data-ready]")).to_be_attached()  # the page's script has run
        _annotate_item(pg, n)
        shown[token] = _shown_spans(pg)
        texts[token] = {
            "original": pg.locator("#esa-original").text_content(),
            "candidate": pg.locator("#esa-candidate").text_content(),
        }
        quoted = pg.locator("#esa-span-list q").all_text_contents()
        with pg.expect_navigation():
            pg.keyboard.press("Enter")
        item = EsaItem.objects.select_related("candidate__original").get(token=token)
        assert texts[token] == {"original": item.candidate.original.text, "candidate": item.candidate.text}
        # what the page quoted is what the stored offsets cut from the stored text
        j = EsaJudgment.objects.get(item=item, is_latest=True)
        cut = ["[missing]" if s["missing"] else texts[token][s["side"]][s["start"] : s["end"]] for s in j.spans]
        assert sorted(cut) == sorted(quoted)
        n += 1
    assert n == 6 and not errors, errors

    stored = {j.item.token: j for j in EsaJudgment.objects.filter(study=study, is_latest=True).select_related("item")}
    assert set(stored) == set(shown)
    for token, spans in shown.items():
        assert stored[token].spans == spans
        kinds = [(s["severity"], s["missing"]) for s in spans]
        assert ("major", False) in kinds and ("minor", False) in kinds
    assert any(s["proposed"] for j in stored.values() for s in j.spans)  # accepted suggestions are kept
    # the emoji family: the keyboard span (words 2–3) starts after 5 code points and a space
    fam = next(t for t, x in texts.items() if x["candidate"].startswith("👩"))
    minor = next(s for s in stored[fam].spans if s["severity"] == "minor" and s["side"] == "candidate")
    assert texts[fam]["candidate"][minor["start"] : minor["end"]] == "familie\u0301 said"
    ctx.close()

    report = report_create(study=study, created_by=researcher, enqueue=False)
    report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    page.goto(f"/studies/{study.pk}/report/")
    expect(page.locator("#section-esa_systems")).to_be_visible()
    expect(page.locator("#esa-weights")).to_contain_text("major = 5")
    assert "nan" not in page.locator("main").inner_text().lower()

    page.goto(f"/studies/{study.pk}/judging/design/")
    with page.expect_download() as got:
        page.get_by_role("link", name="Export the error spans (JSON Lines)").click()
    lines = [json.loads(x) for x in open(got.value.path(), encoding="utf-8").read().splitlines()]
    assert len(lines) == 6
    by_text = {(x["original"], x["candidate"]): x for x in lines}
    for token, j in stored.items():
        line = by_text[(texts[token]["original"], texts[token]["candidate"])]
        assert line["score"] == j.score
        assert [
            (s.get("side"), s.get("start"), s.get("end"), s["severity"])
            for s in line["error_spans"]
            if not s.get("missing")
        ] == [(s["side"], s["start"], s["end"], s["severity"]) for s in j.spans if not s["missing"]]
    with page.expect_download() as got:
        page.get_by_role("link", name="Export the ESA judgments (CSV)").click()
    rows = list(csv.DictReader(io.StringIO(open(got.value.path(), encoding="utf-8").read())))
    assert len(rows) == 6 and {json.dumps(json.loads(r["spans"]), sort_keys=True) for r in rows} == {
        json.dumps(j.spans, sort_keys=True) for j in stored.values()
    }
    assert bad == []


def test_english_texts_on_an_arabic_page_keep_their_own_direction(page, live_server, researcher, make_user):
    """Issue 42: the study's own text is isolated from the page's direction. On a right-to-left
    page, an English sentence runs left to right (its full stop on the right) and → moves to the
    next word, as on an English page; the span's offsets are the same as on one."""
    from annotation.judging.protocols.esa.models import EsaJudgment

    _one_item_open(page, researcher, make_user, "ESA en on ar", text="The man said something else.", language="ar")
    assert page.evaluate("document.documentElement.dir") == "rtl"
    for side in ("esa-original", "esa-candidate"):
        assert page.evaluate(f"getComputedStyle(document.getElementById('{side}')).direction") == "ltr"
    first, stop = page.evaluate(
        """() => { const el = document.getElementById('esa-candidate'); const text = el.textContent;
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT); const nodes = []; let n;
        while ((n = walker.nextNode())) nodes.push(n);
        const at = (node, i) => { const r = document.createRange(); r.setStart(node, i); r.setEnd(node, i + 1);
          return r.getBoundingClientRect().x; };
        const withStop = nodes.filter((x) => x.textContent.includes('.')).pop();
        const withFirst = nodes.find((x) => x.textContent.trim() !== '');
        return [at(withFirst, withFirst.textContent.search(/\\S/)), at(withStop, withStop.textContent.lastIndexOf('.'))]; }"""
    )
    assert stop > first  # the sentence runs left to right: its full stop on the right of its first letter
    page.keyboard.press("ArrowDown")  # the first word, on the left
    page.keyboard.press("ArrowRight")  # rightwards on screen: the next word in reading order
    expect(page.locator("#esa-new-text")).to_have_text("man")
    page.keyboard.press("Shift+ArrowRight")
    expect(page.locator("#esa-new-text")).to_have_text("man said")
    page.keyboard.press("2")
    page.locator("#esa-score").fill("40")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    spans = EsaJudgment.objects.get(judge__username="ann").spans
    assert [(s["start"], s["end"]) for s in spans if not s.get("missing")] == [(4, 12)]  # "man said"


def test_the_arabic_page_runs_right_to_left_and_its_arrows_follow_the_screen(page, live_server, researcher, make_user):
    study, cand = _one_item_open(
        page, researcher, make_user, "ESA ar", text="قال الرجلُ كلاماً مختلفاً تماماً.", language="ar"
    )
    assert page.evaluate("getComputedStyle(document.getElementById('esa-candidate')).direction") == "rtl"
    page.keyboard.press("ArrowDown")  # the first word, on the right
    page.keyboard.press("ArrowLeft")  # leftwards on screen: the next word in reading order
    expect(page.locator("#esa-new-text")).to_have_text("الرجلُ")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#esa-new-text")).to_have_text("قال")
    page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.press("2")
    page.locator("#esa-score").fill("40")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    from annotation.judging.protocols.esa.models import EsaJudgment

    j = EsaJudgment.objects.get(study=study)
    s = j.spans[0]
    assert cand.text[s["start"] : s["end"]] == "قال الرجلُ" and s["severity"] == "major" and j.score == 40
    # Backspace goes back to the item, with its spans and score, to revise it
    expect(page.locator("#done-h")).to_be_visible()
    with page.expect_navigation():
        page.keyboard.press("Backspace")
    expect(page.locator("#rating-form[data-ready]")).to_be_attached(timeout=LOAD)
    expect(page.locator("#esa-score-out")).to_have_text("40")
    expect(page.locator("#esa-span-list q")).to_have_text(["قال الرجلُ"])
    page.locator(".esa-span .esa-severity").select_option("minor")
    page.locator("#esa-span-list").click(position={"x": 1, "y": 1})
    with page.expect_navigation():
        page.keyboard.press("Enter")
    latest = EsaJudgment.objects.get(study=study, is_latest=True)
    assert latest.revision == 2 and latest.spans[0]["severity"] == "minor" and latest.score == 40


@pytest.mark.parametrize(
    "text",
    [
        "Cafe\u0301 au lait 😀 with 👩\u200d👩\u200d👧 family 🇪🇸 done.",
        "هذا نصٌّ عربيٌّ قصير مع English words.",
        "𝒳𝒴 naïve re\u0301sume\u0301 👍🏽 ok",
    ],
)
def test_the_pages_offset_functions_agree_with_the_servers(page, live_server, text):
    """The ESA page's offsets.js converts UTF-16 ↔ code points as metrics/core/spans/offsets.py does, and a
    snapped selection never splits a character (span_problem accepts it)."""
    from metrics.core.spans.offsets import codepoint_to_utf16, span_problem, utf16_length, utf16_to_codepoint

    page.goto("/accounts/login/")
    got = page.evaluate(
        """async (text) => {
        const m = await import('/static/judging/esa/offsets.js');
        const out = {toCp: [], snapped: []};
        for (let u = 0; u <= text.length; u += 1) out.toCp.push(m.utf16ToCodePoint(text, u));
        out.toU = [...Array([...text].length + 1).keys()].map((cp) => m.codePointToUtf16(text, cp));
        for (let a = 0; a < text.length; a += 3) {
            for (let b = a + 1; b <= text.length; b += 4) {
                const s = m.snapSelection(text, a, b);
                if (s) out.snapped.push(m.spanFromUtf16(text, s[0], s[1]));
            }
        }
        out.words = m.wordOffsets(text).map(([a, b]) => m.spanFromUtf16(text, a, b));
        return out;
    }""",
        text,
    )
    assert got["toU"] == [codepoint_to_utf16(text, cp) for cp in range(len(text) + 1)]
    units = utf16_length(text)
    starts = {codepoint_to_utf16(text, cp) for cp in range(len(text) + 1)}
    assert [got["toCp"][u] for u in sorted(starts)] == [utf16_to_codepoint(text, u) for u in sorted(starts)]
    assert len(got["toCp"]) == units + 1
    assert got["snapped"] and all(span_problem(text, a, b) is None for a, b in got["snapped"])
    assert all(span_problem(text, a, b) is None for a, b in got["words"])


def _one_item_open(page, researcher, make_user, name: str, *, text: str | None = None, language: str = "en"):
    """An ESA study of one item (its candidate's text ``text`` when given; its pages in
    ``language``) with ann as its judge, open, and ann on the item past the instructions.
    Returns (the study, the candidate)."""
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Candidate

    study = study_with_data(owner=researcher, n_originals=1, systems=("alpha",), name=name)
    study_update(study=study, changes={"language": language})
    cand = Candidate.objects.get(original__study=study)
    if text is not None:
        cand.text = text
        cand.save()
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    design_update(
        study=study, changes={"protocol": "esa", "control_counts": {"identical": 0, "random": 0, "unigram": 0}}
    )
    study_judging_open(study=study)
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/esa/")
    page.locator('form[action$="/instructions/"] button[type="submit"]').click()
    expect(page.locator("#rating-form[data-ready]")).to_be_attached(timeout=LOAD)
    return study, cand


def test_marking_words_that_overlap_a_mark_replaces_it(page, live_server, researcher, make_user):
    """The server refuses overlapping spans of one text (docs/protocol-esa.md), so the page never
    sends them: a new mark replaces every mark of that text it shares a character with."""
    from annotation.judging.protocols.esa.models import EsaJudgment

    study, cand = _one_item_open(page, researcher, make_user, "ESA overlap", text="Alpha beta gamma delta.")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("2")  # "Alpha beta", major
    expect(page.locator("#esa-span-list q")).to_have_text(["Alpha beta"])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("1")  # "gamma" only touches nothing: a second mark
    expect(page.locator("#esa-span-list q")).to_have_count(2)
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("1")  # "beta gamma" overlaps both: it replaces them
    expect(page.locator("#esa-span-list q")).to_have_text(["beta gamma"])
    page.locator("#esa-score").fill("40")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    (span,) = EsaJudgment.objects.get(study=study).spans
    assert cand.text[span["start"] : span["end"]] == "beta gamma" and span["severity"] == "minor"


def test_a_click_on_the_resting_thumb_gives_a_score_of_50(page, live_server, researcher, make_user):
    """The score slider rests at 50 while unset; a click or tap on the thumb there changes no value,
    yet it is the judge's answer: 50, as any other value (issue 42: it stayed unset)."""
    from annotation.judging.protocols.esa.models import EsaJudgment

    study, _cand = _one_item_open(page, researcher, make_user, "ESA fifty")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("1")  # one minor mark, so that the score is all that is missing
    expect(page.locator("#esa-score-out")).to_have_text("—")
    page.locator("#esa-score").click()  # the middle of the slider: the thumb where it rests
    expect(page.locator("#esa-score-out")).to_have_text("50")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert EsaJudgment.objects.get(study=study).score == 50


def test_missing_starts_with_no_category_and_in_the_pages_own_font(page, live_server, researcher, make_user):
    """Issue 42: [missing] took the previous mark's category without a word, and was set in a
    monospace font that breaks Arabic letters apart. Each new mark now starts with no category."""
    from annotation.judging.protocols.esa.models import EsaJudgment
    from annotation.services.studies import study_update

    study, cand = _one_item_open(page, researcher, make_user, "ESA missing", text="Alpha beta gamma.")
    page.keyboard.press("ArrowDown")  # "Alpha"
    category = page.locator("#esa-new-category")
    chosen = category.locator("option").nth(1).get_attribute("value")
    category.select_option(chosen)
    page.locator("#esa-add-minor").click()
    expect(page.locator("#esa-span-list q")).to_have_text(["Alpha"])
    page.locator("#esa-missing").click()
    expect(category).to_have_value("")  # not the last mark's category
    page.locator("#esa-add-major").click()
    page.locator("#esa-score").fill("30")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    spans = EsaJudgment.objects.get(study=study).spans
    assert {(bool(s["missing"]), s["category"]) for s in spans} == {(False, chosen), (True, None)}

    study_update(study=study, changes={"language": "ar"})
    page.goto(f"/judge/studies/{study.pk}/esa/{EsaJudgment.objects.get(study=study).item.token}/")
    expect(page.locator("#esa-missing")).to_be_visible()
    font = page.evaluate("getComputedStyle(document.getElementById('esa-missing')).fontFamily")
    body = page.evaluate("getComputedStyle(document.body).fontFamily")
    assert "monospace" not in font and font == body


def test_every_suggestion_is_accepted_or_deleted_at_once(page, live_server, researcher, make_user):
    """Issue 42: a long sentence brought 40 suggested spans and 40 clicks. "Accept every
    suggestion" keeps them all as the judge's marks, "Delete every suggestion" drops them all;
    the buttons show only while a suggestion waits, and what was done is announced."""
    from annotation.judging.protocols.esa.models import EsaJudgment
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open

    study = study_with_data(owner=researcher, n_originals=2, systems=("alpha",), name="ESA all")
    study_member_add(study=study, user=make_user("ann"), role=Role.JUDGE)
    design_update(
        study=study,
        changes={
            "protocol": "esa",
            "seed": 5,
            "esa_prefill": "aligner",
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    browser_login(page, "ann")
    page.goto(f"/judge/studies/{study.pk}/esa/")
    page.locator('form[action$="/instructions/"] button[type="submit"]').click()
    for action in ("accept", "delete"):
        expect(page.locator("#rating-form[data-ready]")).to_be_attached(timeout=LOAD)
        suggested = page.locator("#esa-span-list .is-suggested")
        expect(page.locator("#esa-all")).to_be_visible()
        n = suggested.count()
        assert n > 0
        page.locator(f"#esa-{action}-all").click()
        expect(suggested).to_have_count(0)
        expect(page.locator("#esa-all")).to_be_hidden()
        expect(page.locator("#rate-status")).to_have_text(
            "Every suggestion accepted." if action == "accept" else "Every suggestion deleted."
        )
        token = page.locator('#rating-form input[name="token"]').input_value()
        page.locator("#esa-score").fill("70")
        with page.expect_navigation():
            page.keyboard.press("Enter")
        spans = EsaJudgment.objects.get(item__token=token).spans
        if action == "accept":
            assert len(spans) == n and all(s["proposed"] for s in spans)
        else:
            assert spans == []


def _focused(page) -> str:
    """What has the focus: its id, else its class, else its tag (never the body: focus lost)."""
    return page.evaluate(
        "() => { const a = document.activeElement; return a === document.body ? 'BODY' : (a.id || a.className || a.tagName); }"
    )


def test_a_judge_marks_edits_and_deletes_spans_by_keyboard_alone_and_hears_each_change(
    page, live_server, researcher, make_user
):
    """Issue 42: keyboard only (no mouse event at all): a span marked by the word cursor, its
    severity changed in the list, [missing] and its severity from the Tab order, a span deleted
    with Enter on its Delete button; each change said in the live status line, the focus never
    on the page's body, and the score set with the arrow keys."""
    from annotation.judging.protocols.esa.models import EsaJudgment

    study, cand = _one_item_open(page, researcher, make_user, "ESA keys", text="Alpha beta gamma delta.")
    status = page.locator("#rate-status")
    expect(status).to_have_attribute("aria-live", "polite")
    page.keyboard.press("ArrowDown")  # "Alpha"
    page.keyboard.press("1")
    expect(status).to_have_text("Marked as Minor: Alpha")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")  # "gamma"
    page.keyboard.press("2")
    expect(status).to_have_text("Marked as Major: gamma")
    expect(page.locator("#esa-span-list q")).to_have_text(["Alpha", "gamma"])
    # Tab into the list: the first span's severity, changed with the arrow keys
    severity = page.locator("#esa-span-list .esa-severity").first
    for _ in range(30):
        page.keyboard.press("Tab")
        if severity.evaluate("el => el === document.activeElement"):
            break
    assert severity.evaluate("el => el === document.activeElement")
    assert page.evaluate("document.activeElement.matches(':focus-visible')")
    page.keyboard.press("ArrowDown")  # minor -> major
    expect(severity).to_have_value("major")
    # on to its Delete button, pressed with Enter: the focus moves to the next span's Delete
    delete = page.locator("#esa-span-list li").first.locator(".esa-delete")
    for _ in range(5):
        page.keyboard.press("Tab")
        if delete.evaluate("el => el === document.activeElement"):
            break
    page.keyboard.press("Enter")
    expect(status).to_have_text("Deleted: Alpha")
    expect(page.locator("#esa-span-list q")).to_have_text(["gamma"])
    assert _focused(page) == "esa-delete"
    # [missing] from the Tab order, marked with its key
    missing = page.locator("#esa-missing")
    for _ in range(40):
        page.keyboard.press("Shift+Tab")
        if missing.evaluate("el => el === document.activeElement"):
            break
    page.keyboard.press("Enter")
    page.keyboard.press("1")
    expect(status).to_have_text("Marked as Minor: [missing]")
    assert _focused(page) != "BODY"
    # the score: the slider reached by Tab, moved by the arrow keys (no mouse)
    slider = page.locator("#esa-score")
    for _ in range(40):
        page.keyboard.press("Tab")
        if slider.evaluate("el => el === document.activeElement"):
            break
    page.keyboard.press("ArrowRight")
    expect(page.locator("#esa-score-out")).not_to_have_text("—")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    spans = EsaJudgment.objects.get(study=study).spans
    assert sorted((s["missing"], s["severity"], cand.text[s["start"] : s["end"]]) for s in spans) == [
        (False, "major", "gamma"),
        (True, "minor", ""),
    ]

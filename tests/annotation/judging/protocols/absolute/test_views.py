"""Judging pages through Django's test client: the judge's flow and the researcher's pages."""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User

from annotation.enums import StudyStatus
from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.design import design_for_study
from annotation.judging.selectors.exclusions import judges_excluded
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.assignments import instructions_mark_seen
from annotation.judging.services.opening import study_judging_close
from tests.annotation.judging.conftest import new_key, rate_all_via_service, scores

pytestmark = pytest.mark.django_db


def hidden(html: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', html).group(1)


def post_rating(client, study, html, values=None, key=None):
    data = {
        "token": hidden(html, "token"),
        "serve": hidden(html, "serve"),
        "key": key or hidden(html, "key"),
        "active_seconds": "4.25",
        **(values or scores()),
    }
    return client.post(f"/judge/studies/{study.pk}/submit/", data)


@pytest.fixture
def ann_client(client, opened_study):
    client.force_login(User.objects.get(username="ann"))
    return client


def test_judge_home_lists_the_study_and_home_redirects_a_judge_there(ann_client, opened_study):
    assert ann_client.get("/").url == "/judge/"
    page = ann_client.get("/judge/").content.decode()
    # The judge sees the study's participant title, never its name (which may name systems).
    assert opened_study.participant_title in page and opened_study.name not in page
    assert "0 of 25 rated" in page and "Start" in page


def test_instructions_come_first_then_the_first_item(ann_client, opened_study):
    r = ann_client.get(f"/judge/studies/{opened_study.pk}/")
    assert r.status_code == 302 and r.url.endswith("/instructions/")
    page = ann_client.get(r.url).content.decode()
    assert "How to rate" in page and "Start rating" in page and "Lexical dissimilarity" in page
    r = ann_client.post(f"/judge/studies/{opened_study.pk}/instructions/")
    assert r.url == f"/judge/studies/{opened_study.pk}/"
    page = ann_client.get(r.url).content.decode()
    assert "1 of 25" in page and 'role="radiogroup"' in page
    # on demand afterwards: same page, "Back to rating"
    assert "Back to rating" in ann_client.get(f"/judge/studies/{opened_study.pk}/instructions/").content.decode()


def test_rating_through_the_form_moves_on_and_resumes(ann_client, opened_study):
    ann_client.post(f"/judge/studies/{opened_study.pk}/instructions/")
    page = ann_client.get(f"/judge/studies/{opened_study.pk}/").content.decode()
    r = post_rating(ann_client, opened_study, page, scores(5, 4, 3, 2))
    assert r.status_code == 302 and r.url == f"/judge/studies/{opened_study.pk}/"
    j = Judgment.objects.get()
    assert j.scores == scores(5, 4, 3, 2) and j.active_seconds == 4.25 and j.source == "page"
    page2 = ann_client.get(r.url).content.decode()
    assert "2 of 25" in page2 and 'id="previous-link"' in page2
    # a double click posts the same form twice: still one judgment
    post_rating(ann_client, opened_study, page)
    assert Judgment.objects.count() == 1


def test_a_missing_score_re_renders_the_item_with_a_message(ann_client, opened_study):
    ann_client.post(f"/judge/studies/{opened_study.pk}/instructions/")
    page = ann_client.get(f"/judge/studies/{opened_study.pk}/").content.decode()
    values = scores()
    del values["overall"]
    r = post_rating(ann_client, opened_study, page, values)
    assert r.status_code == 400
    body = r.content.decode()
    assert "Rate every criterion on its scale" in body and "overall: this criterion needs a value" in body
    assert 'id="adequacy-3" value="3" checked' in body  # what was chosen stays chosen
    assert not Judgment.objects.exists()


def test_revising_the_previous_item_through_the_page(ann_client, opened_study):
    ann_client.post(f"/judge/studies/{opened_study.pk}/instructions/")
    first = ann_client.get(f"/judge/studies/{opened_study.pk}/").content.decode()
    post_rating(ann_client, opened_study, first, scores(1, 1, 1, 1))
    second = ann_client.get(f"/judge/studies/{opened_study.pk}/").content.decode()
    prev_url = re.search(r'id="previous-link" href="([^"]+)"', second).group(1)
    revise = ann_client.get(prev_url).content.decode()
    assert "Changing item 1 of 25" in revise and re.search(r'value="1" checked', revise)
    post_rating(ann_client, opened_study, revise, scores(2, 2, 2, 2))
    assert list(Judgment.objects.order_by("revision").values_list("revision", "values__overall", "is_latest")) == [
        (1, 1, False),
        (2, 2, True),
    ]


def test_finishing_shows_the_finished_page(ann_client, opened_study):
    ann = User.objects.get(username="ann")
    instructions_mark_seen(assignment=assignment_for_judge(study=opened_study, judge=ann))
    rate_all_via_service(opened_study, ann)
    r = ann_client.get(f"/judge/studies/{opened_study.pk}/")
    assert r.url == f"/judge/studies/{opened_study.pk}/done/"
    page = ann_client.get(r.url).content.decode()
    assert "All done" in page and "25 of 25" in page and 'id="previous-link"' in page


def test_a_closed_study_tells_the_judge(ann_client, opened_study):
    study_judging_close(study=opened_study)
    page = ann_client.get(f"/judge/studies/{opened_study.pk}/").content.decode()
    assert "Rating in this study has ended" in page


# --- researcher pages ----------------------------------------------------------------------


@pytest.fixture
def rita_client(client, researcher):
    client.force_login(researcher)
    return client


def design_post_data(page: str) -> dict:
    """Every field of the design form as the browser would post it."""
    data = {}
    for name, value in re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', page):
        data[name] = value
    for name, body in re.findall(r'<textarea[^>]*name="([^"]+)"[^>]*>(.*?)</textarea>', page, re.S):
        data[name] = html.unescape(body.strip())  # as a browser posts it
    for name, body in re.findall(r'<select[^>]*name="([^"]+)"[^>]*>(.*?)</select>', page, re.S):
        data[name] = re.search(r'value="([^"]*)"[^>]*selected', body).group(1)
    data["judges_mode"] = "crossed"
    data.pop("csrfmiddlewaretoken", None)
    return data


def test_researcher_edits_the_design_and_opens_the_study(rita_client, study, add_judge):
    add_judge(study, "ann")
    page = rita_client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert "Open study for judging" in page and "Judging design" in page
    data = design_post_data(page) | {"adequacy_name": "Meaning", "seed": "31337", "expected_identical_overall": "3"}
    r = rita_client.post(f"/studies/{study.pk}/judging/design/", data)
    assert r.status_code == 302, r.content.decode()[:2000]
    design = design_for_study(study=study)
    assert design.criteria[0]["name"] == "Meaning" and design.seed == 31337
    assert design.expected_scores["identical"]["overall"] == 3
    r = rita_client.post(f"/studies/{study.pk}/judging/open/")
    assert r.url == f"/studies/{study.pk}/judging/progress/"
    study.refresh_from_db()
    assert study.status == StudyStatus.OPEN
    frozen = rita_client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert "The design is frozen" in frozen and "Reset judging" in frozen
    # a frozen design ignores posted changes to frozen fields but saves expected scores
    data = design_post_data(frozen) | {"seed": "1", "expected_random_overall": "2"}
    rita_client.post(f"/studies/{study.pk}/judging/design/", data)
    design.refresh_from_db()
    assert design.seed == 31337 and design.expected_scores["random"]["overall"] == 2


def test_progress_page_and_json(rita_client, opened_study):
    ann = User.objects.get(username="ann")
    item = item_next_for_judge(assignment=assignment_for_judge(study=opened_study, judge=ann))
    judgment_submit(
        study=opened_study, judge=ann, token=item.token, key=new_key(), scores=scores(), serve_stamp=item.serve_stamp
    )
    page = rita_client.get(f"/studies/{opened_study.pk}/judging/progress/").content.decode()
    assert "Progress per judge" in page and "control:unigram" in page
    data = rita_client.get(f"/studies/{opened_study.pk}/judging/progress.json").json()
    assert {j["judge"]: (j["done"], j["total"]) for j in data["judges"]} == {"ann": (1, 25), "bob": (0, 25)}
    assert sum(s["rated"] for s in data["systems"]) == 1 and data["done"] == 1 and data["total"] == 50


def test_qc_page_shows_flags_and_excludes_and_includes(rita_client, opened_study):
    ann = User.objects.get(username="ann")
    rate_all_via_service(opened_study, ann)  # the same scores for everything: straight-lining, tests fail
    page = rita_client.get(f"/studies/{opened_study.pk}/judging/qc/").content.decode()
    assert "Quality control per judge" in page and "fail" in page and "straight-lining" in page
    r = rita_client.post(
        f"/studies/{opened_study.pk}/judging/judges/ann/exclusion/", {"excluded": "1", "reason": "flat"}
    )
    assert r.status_code == 302
    assert judges_excluded(study=opened_study) == {"ann"}
    page = rita_client.get(f"/studies/{opened_study.pk}/judging/qc/").content.decode()
    assert "Include ann" in page and "Exclusion history" in page and "flat" in page
    rita_client.post(f"/studies/{opened_study.pk}/judging/judges/ann/exclusion/", {"excluded": "0"})
    assert judges_excluded(study=opened_study) == set()


def test_close_reopen_and_late_assignment_buttons(rita_client, opened_study, add_judge):
    add_judge(opened_study, "late")
    assert "Build their lists now" in rita_client.get(f"/studies/{opened_study.pk}/judging/progress/").content.decode()
    rita_client.post(f"/studies/{opened_study.pk}/judging/assign/")
    assert assignment_for_judge(study=opened_study, judge=User.objects.get(username="late")) is not None
    rita_client.post(f"/studies/{opened_study.pk}/judging/close/")
    opened_study.refresh_from_db()
    assert opened_study.status == StudyStatus.CLOSED
    rita_client.post(f"/studies/{opened_study.pk}/judging/reopen/")
    opened_study.refresh_from_db()
    assert opened_study.status == StudyStatus.OPEN


def test_study_tabs_link_the_judging_pages(rita_client, study):
    page = rita_client.get(f"/studies/{study.pk}/").content.decode()
    for path in ("judging/design/", "judging/progress/", "judging/qc/"):
        assert f"/studies/{study.pk}/{path}" in page

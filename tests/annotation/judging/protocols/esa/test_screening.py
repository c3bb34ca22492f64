"""Training and attention checks of ESA studies (issue 25): training items with a reference
score range and major span (form, API, file), answers checked as real ones, verdicts that
never name the reference, attention items among the real ones (page and API), the policy,
the QC rows."""

from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.judging import screening, training
from annotation.judging.errors import DesignInvalid, JudgmentInvalid
from annotation.judging.models import Assignment, AttentionCheck, TrainingAnswer
from annotation.judging.protocols.esa import screening as esa_screening
from annotation.judging.protocols.esa import services as esa
from annotation.judging.protocols.esa.models import EsaJudgment
from annotation.judging.protocols.registry import protocol_get
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from metrics.core.tabular import TabularError
from tests.annotation.judging.test_blinding import hidden
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

ITEMS = [
    {
        "original": "The cat sat on the mat.",
        "candidate": "The cat sat on the mat.",
        "score_min": "70",
        "major": "no",
        "explanation": "A copy keeps every meaning.",
    },
    {
        "original": "The dog barked at night.",
        "candidate": "Bananas are yellow.",
        "score_max": "20",
        "major": "yes",
        "explanation": "Nothing of the meaning is kept.",
    },
    {
        "original": "She reads a book.",
        "candidate": "She reads a novel.",
        "score_min": "60",
        "score_max": "100",
        "explanation": "Close enough.",
    },
]
MAJOR_ALL = [{"side": "candidate", "start": 0, "end": 7, "severity": "major"}]


@pytest.fixture
def esa_study(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=4, systems=("alpha", "beta"), name="ESA screened")
    add_judge(study, "ann")
    design_update(
        study=study,
        changes={"protocol": "esa", "seed": 5, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def trained(esa_study):
    for row in ITEMS:
        training.training_item_add(study=esa_study, row=row, from_text=True)
    screening.screening_settings_update(study=esa_study, changes={"training_required": 2, "training_retries": 1})
    return esa_study


def ann(study):
    return Assignment.objects.get(study=study, judge__username="ann")


def _client(study):
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username="ann"))
    client.post(f"/judge/studies/{study.pk}/instructions/")
    return client


def test_the_unit_says_it_has_screening_on_its_own_page():
    unit = protocol_get("esa")
    assert unit.has_screening and unit.attention_page == "judging:esa" and not unit.training_tolerances


def test_a_training_item_stores_the_score_range_and_the_major_span(trained):
    items = training.training_items(study=trained)
    assert [i.expected for i in items] == [
        {"score": [70.0, 100], "major": False},
        {"score": [0, 20.0], "major": True},
        {"score": [60.0, 100.0]},
    ]
    assert items[1].candidate == "Bananas are yellow."


def test_a_training_item_is_refused_with_errors_per_column(esa_study):
    with pytest.raises(training.TrainingInvalid) as exc:
        training.training_item_add(
            study=esa_study,
            row={"original": "O.", "candidate": "", "score_min": "120", "major": "perhaps", "fluency": "3"},
        )
    errors = exc.value.field_errors
    assert "candidate" in errors and errors["score_min"] == ["a number from 0 to 100"]
    assert "yes or no" in errors["major"][0] and "unknown column" in errors["fluency"][0]
    with pytest.raises(training.TrainingInvalid, match="score_max must not be below"):
        training.training_item_add(
            study=esa_study, row={"original": "O.", "candidate": "C.", "score_min": "80", "score_max": "20"}
        )
    with pytest.raises(training.TrainingInvalid, match="give a score range"):
        training.training_item_add(study=esa_study, row={"original": "O.", "candidate": "C."})
    assert training.training_items(study=esa_study) == []


def test_training_items_are_imported_from_a_file_all_or_nothing(esa_study):
    good = b"original,candidate,score_min,score_max,major,explanation\nO1.,C1.,50,80,no,why\nO2.,C2.,,,yes,\n"
    assert training.training_items_import(study=esa_study, data=good, filename="t.csv") == 2
    bad = b"original,candidate,score_min,major\nO1.,C1.,fifty,no\n"
    with pytest.raises(TabularError) as exc:
        training.training_items_import(study=esa_study, data=bad, filename="t.csv")
    assert "line 2" in exc.value.describe() and "score_min" in exc.value.describe()
    assert [i.expected for i in training.training_items(study=esa_study)] == [
        {"score": [50.0, 80.0], "major": False},
        {"major": True},
    ]


def _answer(study, spans, score):
    a = ann(study)
    state = training.training_state(assignment=a)
    return training.training_answer_submit(
        assignment=a, token=state.next_item.token, scores={"spans": spans, "score": score}
    )


def test_the_pass_rule_reads_the_score_range_and_the_major_span(trained):
    _answer(trained, [], 90)  # a copy: no major, score in 70–100: right
    _answer(trained, [], 10)  # unrelated: score right, but no major span: wrong
    _, state = _answer(trained, [], 65)  # in 60–100: right
    assert state.passed and state.right == 2
    answers = list(TrainingAnswer.objects.filter(assignment=ann(trained)).order_by("id"))
    assert [a.correct for a in answers] == [True, False, True]
    assert training.training_answer_feedback(answer=answers[0]) == {"score": "within", "major": "agree"}
    assert training.training_answer_feedback(answer=answers[1]) == {"score": "within", "major": "disagree"}


def test_verdicts_say_higher_or_lower_never_the_reference(trained):
    _answer(trained, MAJOR_ALL, 40)  # too low for 70–100, and a major span where none is expected
    (answer,) = TrainingAnswer.objects.filter(assignment=ann(trained))
    feedback = training.training_answer_feedback(answer=answer)
    assert feedback == {"score": "too_low", "major": "disagree"}
    assert not answer.correct and "70" not in json.dumps(feedback)


def test_only_the_checked_references_count(trained):
    screening.screening_settings_update(study=trained, changes={"training_criteria": ["score"]})
    _answer(trained, [], 90)
    _, state = _answer(trained, [], 10)  # no major span: not checked now
    assert [a.correct for a in TrainingAnswer.objects.filter(assignment=ann(trained)).order_by("id")] == [True, True]
    with pytest.raises(DesignInvalid) as exc:
        screening.screening_settings_update(study=trained, changes={"training_criteria": ["fluency"]})
    assert "unknown criterion or question" in exc.value.field_errors["training_criteria"][0]


def test_a_training_answer_is_checked_like_a_real_one(trained):
    a = ann(trained)
    token = training.training_state(assignment=a).next_item.token
    with pytest.raises(JudgmentInvalid):  # a span outside the candidate's text
        training.training_answer_submit(
            assignment=a,
            token=token,
            scores={"spans": [{"side": "candidate", "start": 0, "end": 500, "severity": "major"}], "score": 50},
        )
    with pytest.raises(JudgmentInvalid):  # no score
        training.training_answer_submit(assignment=a, token=token, scores={"spans": []})
    with pytest.raises(JudgmentInvalid):  # a severity ESA does not have
        training.training_answer_submit(
            assignment=a,
            token=token,
            scores={"spans": [{"side": "candidate", "start": 0, "end": 3, "severity": "critical"}], "score": 50},
        )
    assert not TrainingAnswer.objects.exists()


def test_failing_every_attempt_screens_the_judge_out(trained):
    for _ in range(2):
        for _ in range(3):
            _, state = _answer(trained, MAJOR_ALL, 50)
    assert state.screened_out and ann(trained).screened_out_rule == "training"


def test_the_esa_page_sends_a_judge_to_training_first_and_the_form_answers_it(trained):
    client = _client(trained)
    base = f"/judge/studies/{trained.pk}"
    r = client.get(f"{base}/esa/")
    assert r.status_code == 302 and r.url.endswith("/training/")
    page = client.get(f"{base}/training/").content.decode()
    assert "The cat sat on the mat." in page and 'id="esa-data"' in page and 'id="esa-score"' in page
    r = client.post(f"{base}/training/", {"token": hidden(page, "token"), "spans": "[]", "score": ""})
    assert r.status_code == 400 and "Set the score" in r.content.decode()
    r = client.post(
        f"{base}/training/", {"token": hidden(page, "token"), "spans": json.dumps(MAJOR_ALL), "score": "40"}
    )
    assert r.status_code == 302 and r.url.endswith("/training/feedback/")
    feedback = client.get(r.url).content.decode()
    assert "Lower than ours" in feedback and "Not the same as ours" in feedback
    assert "A copy keeps every meaning." in feedback and '<q dir="auto">The cat</q>' in feedback
    assert "70" not in feedback.split('id="feedback-table"')[1].split("</table>")[0]


def test_the_training_api_takes_and_serves_esa_training_items(esa_study, researcher):
    from django.contrib.auth.models import User

    rita, judge = APIClient(), APIClient()
    rita.force_authenticate(researcher)
    judge.force_authenticate(User.objects.get(username="ann"))
    url = f"/api/judging/studies/{esa_study.pk}/"
    r = rita.post(
        url + "training/items/",
        {
            "original": "O one.",
            "candidate": "C one.",
            "explanation": "Why.",
            "expected": {"score_min": 60, "score_max": 90, "major": False},
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["expected"] == {"score": [60.0, 90.0], "major": False}
    r = rita.post(
        url + "training/items/", {"original": "O.", "candidate": "C.", "expected": {"major": "maybe"}}, format="json"
    )
    assert r.status_code == 400
    assert judge.get(url + "esa/next/").status_code == 403  # the training first
    nxt = judge.get(url + "training/").json()["next"]
    assert nxt == {"token": nxt["token"], "original": "O one.", "candidate": "C one."}
    r = judge.post(
        url + "training/answers/",
        {
            "item": nxt["token"],
            "scores": {"spans": [{"side": "candidate", "start": 0, "end": 1, "severity": "major"}], "score": 95},
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    body = r.json()
    assert body["correct"] is False and body["feedback"] == {"score": "too_high", "major": "disagree"}
    assert "60" not in json.dumps(body["feedback"]) and body["explanation"] == "Why."


def test_the_design_page_offers_esa_training_items_and_rules_without_tolerances(trained, researcher):
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/studies/{trained.pk}/judging/design/").content.decode()
    assert 'id="training-esa-note"' in page and 'name="score_min"' in page and 'name="major"' in page
    assert 'name="training_tolerance"' not in page and "tolerance_" not in page
    assert 'id="no-screening"' not in page and 'id="training-comparison-note"' not in page


# --- attention checks ---------------------------------------------------------------------------


@pytest.fixture
def checked(esa_study):
    screening.screening_settings_update(
        study=esa_study, changes={"attention_count": 4, "attention_policy": "end", "attention_max_failures": 2}
    )
    screening.attention_plan(assignment=ann(esa_study), settings=screening.settings_for_study(study=esa_study))
    return esa_study


def _right(check):
    if check.criterion == esa_screening.COPY:
        return "[]", "90"
    return json.dumps(MAJOR_ALL), "60"


def _walk(study, answer_check):
    """Annotate every item on the page (no span, 70), and each attention item with ``answer_check(check)``."""
    client = _client(study)
    base = f"/judge/studies/{study.pk}"
    seen = []
    while True:
        r = client.get(f"{base}/esa/")
        if r.status_code == 302:
            return seen, r
        page = r.content.decode()
        if 'name="token"' not in page:
            return seen, r
        token = hidden(page, "token")
        check = AttentionCheck.objects.filter(token=token).first()
        spans, score = answer_check(check) if check else ("[]", "70")
        seen.append(("check" if check else "item", token))
        r = client.post(
            f"{base}/esa/submit/",
            {
                "token": token,
                "serve": hidden(page, "serve"),
                "key": hidden(page, "key"),
                "spans": spans,
                "score": score,
            },
        )
        assert r.status_code == 302, r.content.decode()[:500]


def test_attention_checks_are_copies_or_unrelated_sentences_drawn_the_same_again(checked):
    checks = list(AttentionCheck.objects.filter(assignment=ann(checked)))
    assert len(checks) == 4 and {c.criterion for c in checks} <= {"copy", "unrelated"}
    for c in checks:
        item = esa_screening.attention_item(check=c)
        assert (item.candidate == item.original) == (c.criterion == "copy")
        assert item.token == c.token and esa_screening.attention_item(check=c).candidate == item.candidate
        assert c.expected == (50.0 if c.criterion == "copy" else 25.0)


def test_the_pass_rule_of_each_kind():
    passed = esa_screening.attention_passed
    assert passed(kind="unrelated", bound=25, spans=MAJOR_ALL, score=80)
    assert passed(kind="unrelated", bound=25, spans=[], score=25)
    assert not passed(kind="unrelated", bound=25, spans=[], score=26)
    assert passed(kind="copy", bound=50, spans=[{"severity": "minor"}], score=50)
    assert not passed(kind="copy", bound=50, spans=MAJOR_ALL, score=100)
    assert not passed(kind="copy", bound=50, spans=[], score=49)


def test_attention_items_come_among_the_items_and_the_right_answer_passes(checked):
    seen, _ = _walk(checked, _right)
    a = ann(checked)
    kinds = [k for k, _ in seen]
    assert kinds.count("check") == 4 and kinds.count("item") == a.n_items
    positions = sorted(AttentionCheck.objects.filter(assignment=a).values_list("after_done", flat=True))
    assert [i for i, k in enumerate(kinds) if k == "check"] == [p + n for n, p in enumerate(positions)]
    assert all(c.passed for c in AttentionCheck.objects.filter(assignment=a))
    assert EsaJudgment.objects.filter(item__assignment=a).count() == a.n_items  # checks are no judgments
    assert a.screened_out_at is None


def test_failing_attention_items_screens_out_after_k_with_the_end_policy(checked):
    seen, last = _walk(checked, lambda c: ("[]", "40"))  # fails both kinds
    a = ann(checked)
    assert a.screened_out_at is not None and a.screened_out_rule == "attention"
    assert [k for k, _ in seen].count("check") == 2 and last.url.endswith("/screened-out/")


def test_with_the_warn_policy_a_failed_check_only_warns(checked):
    screening.screening_settings_update(study=checked, changes={"attention_policy": "warn"})
    _walk(checked, lambda c: ("[]", "40"))
    a = ann(checked)
    assert a.screened_out_at is None and AttentionCheck.objects.filter(assignment=a, passed=False).count() == 4


def test_an_attention_answer_is_checked_like_a_real_one_and_stores_nothing_when_bad(checked):
    a = ann(checked)
    check = AttentionCheck.objects.filter(assignment=a).first()
    with pytest.raises(JudgmentInvalid):
        screening.attention_answer(assignment=a, token=check.token, value={"spans": []})
    with pytest.raises(JudgmentInvalid):
        screening.attention_answer(
            assignment=a,
            token=check.token,
            value={"spans": [{"side": "candidate", "start": 0, "end": 9999, "severity": "major"}], "score": 10},
        )
    with pytest.raises(JudgmentInvalid):  # a forged serve stamp, as on a real item
        esa_screening.answer_submit(
            study=checked,
            judge=a.judge,
            token=check.token,
            key="key-12345678",
            spans=[],
            score=50,
            serve_stamp="forged",
        )
    check.refresh_from_db()
    assert check.answered_at is None


def test_the_esa_api_serves_attention_items_like_items(checked):
    from django.contrib.auth.models import User

    api = APIClient()
    api.force_authenticate(User.objects.get(username="ann"))
    a = ann(checked)
    first = AttentionCheck.objects.filter(assignment=a).order_by("after_done").first()
    url = f"/api/judging/studies/{checked.pk}/esa/"
    for _ in range(first.after_done):
        item = api.get(url + "next/").json()["item"]
        r = api.post(
            url + "judgments/",
            {
                "item": item["token"],
                "key": f"key-{item['token']}",
                "spans": [],
                "score": 70,
                "serve_stamp": item["serve_stamp"],
            },
            format="json",
        )
        assert r.status_code == 201
    body = api.get(url + "next/").json()
    real = esa.esa_item_next_for_judge(assignment=a)
    # The check counts as an item: it stands just before the real item that follows it, and the
    # total counts the checks (the same "n of N" twice would tell a check apart after the fact).
    n_checks = AttentionCheck.objects.filter(assignment=a).count()
    assert body["item"]["token"] == first.token and body["item"]["position"] == real.position - 1
    assert body["item"]["total"] == real.total == a.n_items + n_checks
    assert set(body["item"]) == {
        "token",
        "position",
        "total",
        "done",
        "original",
        "candidate",
        "spans",
        "score",
        "revision",
        "previous",
        "serve_stamp",
        "context_shown",
        "context_before",
        "context_after",
    }
    spans, score = _right(first)
    r = api.post(
        url + "judgments/",
        {
            "item": first.token,
            "key": "key-check-1",
            "spans": json.loads(spans),
            "score": float(score),
            "serve_stamp": body["item"]["serve_stamp"],
        },
        format="json",
    )
    assert r.status_code == 201 and set(r.json()) == {
        "item",
        "revision",
        "created",
        "spans",
        "score",
        "submitted_at",
        "done",
        "total",
    }
    first.refresh_from_db()
    assert first.passed
    assert api.get(url + "next/").json()["item"]["token"] != first.token


def test_the_qc_rows_show_each_judges_attention_checks(checked):
    _walk(checked, _right)
    (row,) = [r for r in protocol_get("esa").qc_rows(study=checked) if r["judge"] == "ann"]
    assert row["attention"] == (4, 4)


def test_a_judge_with_attention_checks_and_no_control_has_a_qc_row(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=3, systems=("alpha",), name="No controls")
    add_judge(study, "ann")
    design_update(
        study=study, changes={"protocol": "esa", "control_counts": {"identical": 0, "random": 0, "unigram": 0}}
    )
    study_judging_open(study=study)
    screening.screening_settings_update(study=study, changes={"attention_count": 1})
    _walk(study, lambda c: ("[]", "40"))
    (row,) = protocol_get("esa").qc_rows(study=study)
    assert row["judge"] == "ann" and row["n"] == 0 and row["attention"] == (1, 0) and row["passes"] is None
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/studies/{study.pk}/judging/qc/").content.decode()
    assert 'data-field="attention">0 of 1<' in page


def test_the_instructions_count_the_items_as_every_item_page_does(checked):
    """Attention checks drawn among the items are counted in every item's "n of N": the
    instructions say the same N (issue 42: 82 there against 84 on the items)."""
    a = ann(checked)
    client = _client(checked)
    instructions = client.get(f"/judge/studies/{checked.pk}/instructions/").content.decode()
    item = client.get(f"/judge/studies/{checked.pk}/esa/").content.decode()
    total = a.n_items + 4  # the four checks among the items
    assert f"You will see {total} items" in instructions
    assert f'max="{total}"' in item  # the item's progress bar: done of the same total

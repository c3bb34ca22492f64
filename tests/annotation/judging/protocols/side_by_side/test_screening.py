"""Training and attention checks of side-by-side studies (issue 24): training pairs with
reference answers (form, API, file), the pass rule and retries, attention pairs among the
real ones (page and API), the attention policy, keys that follow the screen, the QC rows."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from annotation.judging import screening, training
from annotation.judging.errors import JudgmentInvalid
from annotation.judging.models import Assignment, AttentionCheck, TrainingAnswer
from annotation.judging.protocols.registry import protocol_get
from annotation.judging.protocols.side_by_side import screening as sbs_screening
from annotation.judging.protocols.side_by_side import services as comparison
from annotation.judging.protocols.side_by_side.models import ComparisonJudgment
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from metrics.core.tabular import TabularError
from tests.annotation.judging.test_blinding import hidden
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

ITEMS = [
    {
        "original": f"Original {i}.",
        "a": f"Paraphrase A {i}.",
        "b": f"Paraphrase B {i}.",
        "preference": ref,
        "explanation": f"Because {i}.",
    }
    for i, ref in enumerate(["A", "tie", "B"], 1)
]


@pytest.fixture
def cmp_study(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=4, systems=("alpha", "beta", "gamma"), name="Cmp")
    add_judge(study, "ann")
    design_update(
        study=study,
        changes={"protocol": "comparison", "seed": 5, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def trained(cmp_study):
    for row in ITEMS:
        training.training_item_add(study=cmp_study, row=row, from_text=True)
    screening.screening_settings_update(study=cmp_study, changes={"training_required": 2, "training_retries": 1})
    return cmp_study


def ann(study):
    return Assignment.objects.get(study=study, judge__username="ann")


def test_the_unit_says_it_has_screening():
    unit = protocol_get("comparison")
    assert unit.has_screening and unit.attention_page == "judging:compare"


def test_a_training_pair_stores_both_texts_and_the_reference_answers(trained):
    items = training.training_items(study=trained)
    assert [i.candidate for i in items] == ["Paraphrase A 1.", "Paraphrase A 2.", "Paraphrase A 3."]
    assert items[0].expected == {"b": "Paraphrase B 1.", "answers": {"preference": "A"}}
    assert items[1].expected["answers"] == {"preference": "tie"}


def test_a_training_pair_is_refused_with_errors_per_column(cmp_study):
    with pytest.raises(training.TrainingInvalid) as exc:
        training.training_item_add(
            study=cmp_study, row={"original": "O.", "a": "", "b": "B.", "preference": "C", "adequacy": "A"}
        )
    errors = exc.value.field_errors
    assert "a" in errors and errors["preference"] == ["the reference answer is A, tie or B"]
    assert "unknown column" in errors["adequacy"][0]
    with pytest.raises(training.TrainingInvalid, match="at least one question"):
        training.training_item_add(study=cmp_study, row={"original": "O.", "a": "A.", "b": "B."})
    item = training.training_item_add(
        study=cmp_study, row={"original": "O.", "a": "A.", "b": "B.", "preference": " b "}
    )
    assert item.expected["answers"] == {"preference": "B"}


def test_training_pairs_are_imported_from_a_file_all_or_nothing(cmp_study):
    good = b"original,a,b,preference,explanation\nO1.,A1.,B1.,A,why\nO2.,A2.,B2.,tie,\n"
    assert training.training_items_import(study=cmp_study, data=good, filename="t.csv") == 2
    bad = b"original,a,b,preference\nO1.,A1.,B1.,maybe\n"
    with pytest.raises(TabularError) as exc:
        training.training_items_import(study=cmp_study, data=bad, filename="t.csv")
    assert "line 2" in exc.value.describe() and "preference" in exc.value.describe()
    with pytest.raises(TabularError, match="missing column"):
        training.training_items_import(study=cmp_study, data=b"original,a\nO.,A.\n", filename="t.csv")
    assert len(training.training_items(study=cmp_study)) == 2


def test_per_criterion_designs_take_a_reference_per_criterion(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=3, systems=("alpha", "beta"), name="Per criterion")
    design_update(study=study, changes={"protocol": "comparison", "comparison_per_criterion": True})
    item = training.training_item_add(
        study=study, row={"original": "O.", "a": "A.", "b": "B.", "adequacy": "A", "fluency": "tie"}
    )
    assert item.expected["answers"] == {"adequacy": "A", "fluency": "tie"}


def _answer_all(study, answers):
    a = ann(study)
    state = None
    for ans in answers:
        state = training.training_state(assignment=a)
        _, state = training.training_answer_submit(
            assignment=a, token=state.next_item.token, scores={"preference": ans}
        )
        a.refresh_from_db()
    return state


def test_the_pass_rule_counts_the_answers_equal_to_the_reference(trained):
    state = _answer_all(trained, ["A", "B", "B"])  # items 1 and 3 right: 2 of 3, 2 needed
    assert state.passed and state.right == 2
    answers = list(TrainingAnswer.objects.filter(assignment=ann(trained)).order_by("id"))
    assert [a.correct for a in answers] == [True, False, True]
    assert training.training_answer_feedback(answer=answers[1]) == {"preference": "disagree"}
    assert training.training_answer_feedback(answer=answers[0]) == {"preference": "agree"}


def test_failing_every_attempt_screens_the_judge_out(trained):
    state = _answer_all(trained, ["B", "B", "A"])
    assert not state.passed and state.can_retry
    state = _answer_all(trained, ["tie", "A", "A"])
    assert state.screened_out
    assert ann(trained).screened_out_rule == "training"


def test_a_training_answer_is_checked_like_a_real_one(trained):
    a = ann(trained)
    token = training.training_state(assignment=a).next_item.token
    with pytest.raises(JudgmentInvalid):
        training.training_answer_submit(assignment=a, token=token, scores={"preference": "maybe"})


def test_the_compare_page_sends_a_judge_to_training_first_and_keys_follow_the_screen(trained):
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username="ann"))
    base = f"/judge/studies/{trained.pk}"
    client.post(f"{base}/instructions/")
    r = client.get(f"{base}/compare/")
    assert r.status_code == 302 and r.url.endswith("/training/")
    page = client.get(f"{base}/training/").content.decode()
    assert "Paraphrase A 1." in page and "Paraphrase B 1." in page and "Original 1." in page
    assert 'value="A" data-keys="ArrowLeft 1"' in page  # A drawn on the left
    r = client.post(f"{base}/training/", {"token": hidden(page, "token"), "preference": "B"})
    assert r.status_code == 302 and r.url.endswith("/training/feedback/")
    feedback = client.get(r.url).content.decode()
    assert "Not the same as ours" in feedback and "Because 1." in feedback and "Paraphrase B 1." in feedback
    # on an Arabic page A is drawn on the right: → chooses it
    trained.language = "ar"
    trained.save(update_fields=["language"])
    page = client.get(f"{base}/training/", HTTP_ACCEPT_LANGUAGE="ar").content.decode()
    assert 'value="A" data-keys="ArrowRight 3"' in page


# --- attention checks ---------------------------------------------------------------------------


@pytest.fixture
def checked(cmp_study):
    screening.screening_settings_update(
        study=cmp_study, changes={"attention_count": 3, "attention_policy": "end", "attention_max_failures": 2}
    )
    a = ann(cmp_study)
    screening.attention_plan(assignment=a, settings=screening.settings_for_study(study=cmp_study))
    return cmp_study


def test_attention_checks_ask_for_the_copys_side_on_the_overall_question(checked):
    checks = list(AttentionCheck.objects.filter(assignment=ann(checked)))
    assert len(checks) == 3
    assert {c.criterion for c in checks} == {"preference"} and {c.expected for c in checks} <= {0.0, 2.0}
    for c in checks:
        pair = sbs_screening.attention_pair(check=c)
        copy, other = (pair.a, pair.b) if c.expected == 0.0 else (pair.b, pair.a)
        assert copy == pair.original and other != pair.original
        assert pair.token == c.token and sbs_screening.attention_pair(check=c).a == pair.a  # drawn the same again


def _walk(study, answer_check):
    """Answer every pair on the page (A), and each attention pair with ``answer_check(check)``."""
    from django.contrib.auth.models import User

    client = Client()
    client.force_login(User.objects.get(username="ann"))
    base = f"/judge/studies/{study.pk}"
    client.post(f"{base}/instructions/")
    seen = []
    while True:
        r = client.get(f"{base}/compare/")
        if r.status_code == 302:
            return seen, r
        page = r.content.decode()
        if 'name="token"' not in page:
            return seen, r
        token = hidden(page, "token")
        check = AttentionCheck.objects.filter(token=token).first()
        answer = answer_check(check) if check else "A"
        seen.append(("check" if check else "pair", token))
        client.post(
            f"{base}/compare/submit/",
            {"token": token, "serve": hidden(page, "serve"), "key": hidden(page, "key"), "preference": answer},
        )


def test_attention_pairs_come_among_the_pairs_and_the_right_answer_passes(checked):
    seen, _ = _walk(checked, lambda c: "A" if c.expected == 0.0 else "B")
    a = ann(checked)
    kinds = [k for k, _ in seen]
    assert kinds.count("check") == 3 and kinds.count("pair") == a.n_items
    positions = sorted(AttentionCheck.objects.filter(assignment=a).values_list("after_done", flat=True))
    assert [i for i, k in enumerate(kinds) if k == "check"] == [p + n for n, p in enumerate(positions)]
    assert all(c.passed for c in AttentionCheck.objects.filter(assignment=a))
    assert ComparisonJudgment.objects.filter(item__assignment=a).count() == a.n_items  # checks are no judgments
    assert a.screened_out_at is None


def test_failing_attention_pairs_screens_out_after_k_with_the_end_policy(checked):
    seen, last = _walk(checked, lambda c: "tie")
    a = ann(checked)
    assert a.screened_out_at is not None and a.screened_out_rule == "attention"
    assert [k for k, _ in seen].count("check") == 2
    assert last.url.endswith("/screened-out/")


def test_with_the_warn_policy_a_failed_check_only_warns(checked):
    screening.screening_settings_update(study=checked, changes={"attention_policy": "warn"})
    _walk(checked, lambda c: "tie")
    a = ann(checked)
    assert a.screened_out_at is None
    assert AttentionCheck.objects.filter(assignment=a, passed=False).count() == 3


def test_an_attention_pair_needs_every_question_answered(checked):
    a = ann(checked)
    check = AttentionCheck.objects.filter(assignment=a).first()
    with pytest.raises(JudgmentInvalid):
        screening.attention_answer(assignment=a, token=check.token, value={})


def test_the_pairs_api_serves_attention_pairs_like_pairs(checked):
    from django.contrib.auth.models import User

    api = APIClient()
    api.force_authenticate(User.objects.get(username="ann"))
    a = ann(checked)
    first = AttentionCheck.objects.filter(assignment=a).order_by("after_done").first()
    url = f"/api/judging/studies/{checked.pk}/pairs/next/"
    for _ in range(first.after_done):
        pair = api.get(url).json()["pair"]
        r = api.post(
            f"/api/judging/studies/{checked.pk}/comparisons/",
            {
                "pair": pair["token"],
                "key": f"key-{pair['token']}",
                "answers": {"preference": "A"},
                "serve_stamp": pair["serve_stamp"],
            },
            format="json",
        )
        assert r.status_code == 201
    body = api.get(url).json()
    assert body["pair"]["token"] == first.token and set(body["pair"]) == set(api.get(url).json()["pair"])
    right = "A" if first.expected == 0.0 else "B"
    r = api.post(
        f"/api/judging/studies/{checked.pk}/comparisons/",
        {
            "pair": first.token,
            "key": "key-check-1",
            "answers": {"preference": right},
            "serve_stamp": body["pair"]["serve_stamp"],
        },
        format="json",
    )
    assert r.status_code == 201
    first.refresh_from_db()
    assert first.passed
    assert api.get(url).json()["pair"]["token"] != first.token


def test_the_qc_rows_show_each_judges_attention_checks(checked):
    _walk(checked, lambda c: "A")  # right where the copy is A
    rows = comparison.side_by_side_qc(study=checked)
    (row,) = [r for r in rows if r["judge"] == "ann"]
    checks = AttentionCheck.objects.filter(assignment=ann(checked))
    assert row["attention"] == (3, sum(c.expected == 0.0 for c in checks))


def test_the_training_api_takes_and_serves_training_pairs(cmp_study, researcher):
    from django.contrib.auth.models import User

    rita, judge = APIClient(), APIClient()
    rita.force_authenticate(researcher)
    judge.force_authenticate(User.objects.get(username="ann"))
    url = f"/api/judging/studies/{cmp_study.pk}/"
    r = rita.post(
        url + "training/items/",
        {"original": "O.", "a": "A text.", "b": "B text.", "expected": {"preference": "A"}, "explanation": "Why."},
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["candidate"] == "A text." and r.json()["expected"] == {
        "b": "B text.",
        "answers": {"preference": "A"},
    }
    r = rita.post(
        url + "training/items/",
        {"original": "O.", "a": "A.", "b": "B.", "expected": {"preference": "C"}},
        format="json",
    )
    assert r.status_code == 400
    assert judge.get(url + "pairs/next/").status_code == 403  # the training first
    nxt = judge.get(url + "training/").json()["next"]
    assert nxt == {"token": nxt["token"], "original": "O.", "a": "A text.", "b": "B text."}
    r = judge.post(url + "training/answers/", {"item": nxt["token"], "scores": {"preference": "B"}}, format="json")
    assert r.status_code == 201
    body = r.json()
    assert body["correct"] is False and body["feedback"] == {"preference": "disagree"} and body["explanation"] == "Why."
    assert "A" not in str(body["feedback"])  # never the reference answer

"""Training round: items from the page, the API and files; the pass rule; retries; screen-out."""

from __future__ import annotations

import json

import pytest

from annotation.judging import screening, training
from annotation.judging.errors import DesignInvalid, JudgmentInvalid
from annotation.judging.models import TrainingAnswer
from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.selectors.judge import assignment_for_judge
from metrics.core.tabular import TabularError

pytestmark = pytest.mark.django_db

#: Five training items: reference adequacy 5, 4, 3, 2, 1 (and fluency 5 on the first).
ITEMS = [
    {"original": f"Original {i}.", "candidate": f"Candidate {i}.", "adequacy": 6 - i, "explanation": f"Because {i}."}
    for i in range(1, 6)
]
ITEMS[0]["fluency"] = 5


def answer(a, f=3, d=3, o=3):
    return {"adequacy": a, "fluency": f, "dissimilarity": d, "overall": o}


@pytest.fixture
def trained_study(opened_study):
    for row in ITEMS:
        training.training_item_add(study=opened_study, row=row)
    # within ±1 on adequacy for 4 of 5 items, one retry
    screening.screening_settings_update(
        study=opened_study,
        changes={
            "training_criteria": ["adequacy"],
            "training_tolerance": 1,
            "training_required": 4,
            "training_retries": 1,
        },
    )
    return opened_study


def assignment_of(study, username):
    from django.contrib.auth.models import User

    return assignment_for_judge(study=study, judge=User.objects.get(username=username))


def do_attempt(study, assignment, adequacies):
    state = None
    for a in adequacies:
        state = training.training_state(assignment=assignment)
        _, state = training.training_answer_submit(assignment=assignment, token=state.next_item.token, scores=answer(a))
        assignment.refresh_from_db()
    return state


def test_answer_correct_applies_the_tolerance_to_the_checked_criteria_only():
    five = {"type": "points", "min": 1, "max": 5, "labels": list("abcde")}
    crit = [
        {"slug": "adequacy", "scale": five},
        {"slug": "fluency", "scale": five},
        {"slug": "c", "scale": {"type": "categorical", "categories": ["x", "y"]}},
    ]
    exp = {"adequacy": 4, "fluency": 5, "c": 1}
    assert training.answer_correct(
        values={"adequacy": 3, "fluency": 1, "c": 0}, expected=exp, criteria=crit, checked=["adequacy"], tolerance=1
    )
    assert not training.answer_correct(
        values={"adequacy": 2, "fluency": 5, "c": 1}, expected=exp, criteria=crit, checked=["adequacy"], tolerance=1
    )
    # no checked criteria: every criterion with a reference; categories must be equal
    assert not training.answer_correct(
        values={"adequacy": 4, "fluency": 5, "c": 0}, expected=exp, criteria=crit, checked=[], tolerance=1
    )
    assert training.answer_correct(
        values={"adequacy": 4, "fluency": 4, "c": 1}, expected=exp, criteria=crit, checked=[], tolerance=1
    )


def test_four_of_five_within_one_passes(trained_study):
    a = assignment_of(trained_study, "ann")
    # references 5 4 3 2 1; answers 4 4 1 2 2: item 3 is off by 2, the rest within 1
    state = do_attempt(trained_study, a, [4, 4, 1, 2, 2])
    assert state.passed and state.right == 4 and state.required == 4
    assert a.training_passed_at is not None and a.screened_out_at is None
    assert screening.judge_gate(assignment=a, done=0) is None


def test_failing_every_attempt_screens_out_and_leaves_no_judgment(trained_study):
    a = assignment_of(trained_study, "ann")
    state = do_attempt(trained_study, a, [1, 1, 5, 5, 5])  # 1 right of 5
    assert not state.passed and state.can_retry and state.attempt == 1
    assert a.screened_out_at is None
    state = do_attempt(trained_study, a, [5, 1, 5, 5, 5])  # attempt 2 of 2: 1 right
    a.refresh_from_db()
    assert state.attempt == 2 and not state.can_retry
    assert a.screened_out_at is not None and a.screened_out_rule == "training"
    assert "1 of 5 items right (needed 4)" in a.screened_out_reason
    assert TrainingAnswer.objects.filter(assignment=a).count() == 10
    assert not Judgment.objects.filter(judge=a.judge).exists()
    assert screening.judge_gate(assignment=a, done=0) == ("screened_out", None)
    with pytest.raises(training.TrainingFinished):
        training.training_answer_submit(
            assignment=a, token=training.training_items(study=trained_study)[0].token, scores=answer(5)
        )


def test_a_retry_that_passes_lets_the_judge_rate(trained_study):
    a = assignment_of(trained_study, "ann")
    do_attempt(trained_study, a, [1, 1, 1, 1, 1])
    state = do_attempt(trained_study, a, [5, 4, 3, 2, 1])
    assert state.passed and state.attempt == 2
    assert screening.judge_gate(assignment=a, done=0) is None


def test_zero_retries_means_one_attempt(trained_study):
    screening.screening_settings_update(study=trained_study, changes={"training_retries": 0})
    a = assignment_of(trained_study, "bob")
    do_attempt(trained_study, a, [1, 1, 1, 1, 1])
    assert a.screened_out_at is not None


def test_an_answer_needs_every_criterion_on_its_scale_and_is_not_stored_otherwise(trained_study):
    a = assignment_of(trained_study, "ann")
    token = training.training_state(assignment=a).next_item.token
    with pytest.raises(JudgmentInvalid):
        training.training_answer_submit(assignment=a, token=token, scores={"adequacy": 9})
    assert not TrainingAnswer.objects.exists()


def test_training_items_are_locked_once_a_judge_has_answered(trained_study):
    a = assignment_of(trained_study, "ann")
    do_attempt(trained_study, a, [5])
    with pytest.raises(training.TrainingLocked):
        training.training_item_add(study=trained_study, row=ITEMS[0])


def test_item_validation_names_each_field(opened_study):
    with pytest.raises(training.TrainingInvalid) as exc:
        training.training_item_add(
            study=opened_study, row={"original": "", "candidate": "x", "adequacy": 7, "colour": 1}
        )
    assert set(exc.value.field_errors) == {"original", "adequacy", "colour"}


def test_import_csv_replaces_items_and_reads_labels_as_the_scale_does(opened_study):
    training.training_item_add(study=opened_study, row=ITEMS[0])
    data = b'original,candidate,adequacy,fluency,explanation\n"A, quoted",B,4,,Close enough.\nC,D,2,5,\n'
    assert training.training_items_import(study=opened_study, data=data, filename="t.csv") == 2
    items = training.training_items(study=opened_study)
    assert [(i.original, i.expected) for i in items] == [
        ("A, quoted", {"adequacy": 4}),
        ("C", {"adequacy": 2, "fluency": 5}),
    ]


def test_import_jsonl_is_all_or_nothing_with_line_and_column(opened_study):
    training.training_item_add(study=opened_study, row=ITEMS[0])
    lines = [
        json.dumps({"original": "A", "candidate": "B", "adequacy": 3}),
        json.dumps({"original": "A", "candidate": "B", "adequacy": "3"}),  # text in JSON: a mistake
        json.dumps({"original": "A", "candidate": "", "fluency": 9}),
    ]
    with pytest.raises(TabularError) as exc:
        training.training_items_import(study=opened_study, data="\n".join(lines).encode(), filename="t.jsonl")
    where = {(i.line, i.column) for i in exc.value.issues}
    assert {(2, "adequacy"), (3, "candidate"), (3, "fluency")} <= where
    assert "t.jsonl, line 3, column 'fluency'" in exc.value.describe()
    assert len(training.training_items(study=opened_study)) == 1  # nothing replaced


def test_import_refuses_a_file_without_the_required_columns(opened_study):
    with pytest.raises(TabularError) as exc:
        training.training_items_import(study=opened_study, data=b"original,adequacy\nA,3\n", filename="t.csv")
    assert "candidate" in exc.value.describe()


# --- training that teaches without leaking a key (issue 23 #6) ------------------------------

#: A pool of twelve items, references at both ends of the adequacy scale.
POOL = [
    {
        "original": f"Pool original {i}.",
        "candidate": f"Pool candidate {i}.",
        "adequacy": 5 if i % 2 else 1,
        "explanation": f"Reason {i}: {'same meaning' if i % 2 else 'another event'}.",
    }
    for i in range(1, 13)
]


@pytest.fixture
def pool_study(opened_study):
    for row in POOL:
        training.training_item_add(study=opened_study, row=row)
    screening.screening_settings_update(
        study=opened_study,
        changes={
            "training_criteria": ["adequacy"],
            "training_tolerance": 1,
            "training_required": 0,
            "training_retries": 1,
            "training_items_per_attempt": 4,
        },
    )
    return opened_study


def judge_api(study, username):
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient

    api = APIClient()
    api.force_authenticate(User.objects.get(username=username))
    base = f"/api/judging/studies/{study.pk}/training/"
    return api, base


def test_answers_learned_by_a_throwaway_participant_do_not_let_a_fresh_one_pass_by_replay(pool_study):
    """The attack of the issue: a throw-away participant goes through the training, keeps what
    the server tells it about each pair, and a fresh participant replays it. It used to get
    every reference value, and the fresh participant saw the very same items."""
    throwaway, base = judge_api(pool_study, "ann")
    learned: dict[tuple, dict] = {}
    seen: list[tuple] = []
    while True:
        nxt = throwaway.get(base).json()["next"]
        if nxt is None:
            break
        pair = (nxt["original"], nxt["paraphrase"])
        seen.append(pair)
        r = throwaway.post(f"{base}answers/", {"item": nxt["token"], "scores": answer(3)}, format="json")
        assert r.status_code == 201, r.content
        body = r.json()
        assert not {"reference", "expected"} & set(body)  # no reference value in the answer...
        assert set(body["feedback"].values()) <= {"within", "too_high", "too_low", "same", "different"}
        learned[pair] = body.get("reference") or body.get("expected") or (answer(3) if body["correct"] else {})
    assert len(set(seen)) == 8  # two attempts of four items: other items the second time
    fresh, _ = judge_api(pool_study, "bob")
    shown = []
    while True:
        nxt = fresh.get(base).json()["next"]
        if nxt is None:
            break
        pair = (nxt["original"], nxt["paraphrase"])
        shown.append(pair)
        replay = {**answer(3), **learned.get(pair, {})}
        fresh.post(f"{base}answers/", {"item": nxt["token"], "scores": replay}, format="json")
    bob = assignment_of(pool_study, "bob")
    assert bob.training_passed_at is None and bob.screened_out_rule == "training"
    assert set(shown[:4]) != set(seen[:4]) and len(set(shown)) == 8  # a draw of its own, new items on the retry


def test_feedback_says_within_higher_or_lower_with_the_reason_never_the_reference_value(pool_study):
    from django.contrib.auth.models import User
    from django.test import Client

    client = Client()
    client.force_login(User.objects.get(username="ann"))
    base = f"/judge/studies/{pool_study.pk}/training/"
    page = client.get(base).content.decode()
    token = page.split('name="token" value="')[1].split('"')[0]
    item = next(i for i in training.training_items(study=pool_study) if i.token == token)
    wrong = 5 if item.expected["adequacy"] == 1 else 1
    r = client.post(base, {"token": token, "adequacy": wrong, "fluency": 4, "dissimilarity": 3, "overall": 3})
    assert r.status_code == 302
    feedback = client.get(f"{base}feedback/").content.decode()
    table = feedback.split('id="feedback-table"')[1].split("</table>")[0]
    rows = {row.split("</th>")[0].rsplit(">", 1)[1]: row for row in table.split("<tr>")[2:]}
    expected_word = "Higher than ours" if wrong > item.expected["adequacy"] else "Lower than ours"
    assert expected_word in rows["Adequacy"]
    verdict_cell = rows["Adequacy"].split("</td>")[1]
    assert not any(ch.isdigit() for ch in verdict_cell)  # no reference value, no label of one
    assert "—" in rows["Fluency"].split("</td>")[1]  # no reference: nothing said
    assert item.explanation in feedback


def test_answer_feedback_gives_directions_within_the_tolerance():
    crit = [
        {"slug": "a", "scale": {"type": "points", "min": 1, "max": 5, "labels": ["1", "2", "3", "4", "5"]}},
        {"slug": "c", "scale": {"type": "categorical", "categories": ["x", "y"]}},
        {"slug": "s", "scale": {"type": "slider", "min": 0, "max": 100}},
    ]
    exp = {"a": 3, "c": 0, "s": 50}
    got = training.answer_feedback(values={"a": 5, "c": 1, "s": 50}, expected=exp, criteria=crit, tolerance=1)
    assert got == {"a": "too_high", "c": "different", "s": "within"}
    got = training.answer_feedback(values={"a": 2, "c": 0, "s": 10}, expected=exp, criteria=crit, tolerance=1)
    assert got == {"a": "within", "c": "same", "s": "too_low"}


def test_each_attempt_is_a_stable_random_draw_and_only_its_items_are_accepted(pool_study):
    a = assignment_of(pool_study, "ann")
    first = training.training_state(assignment=a).next_item
    assert training.training_state(assignment=a).next_item == first  # the same on every request
    pool = training.training_items(study=pool_study)
    drawn = training.attempt_items(assignment=a, pool=pool, attempt=1, per_attempt=4)
    outside = next(i for i in pool if i not in drawn)
    with pytest.raises(training.TrainingInvalid):
        training.training_answer_submit(assignment=a, token=outside.token, scores=answer(3))
    state = do_attempt(pool_study, a, [3, 3, 3, 3])
    assert state.n_items == 4 and state.can_retry
    assert {x.item for x in TrainingAnswer.objects.filter(assignment=a)} == set(drawn)
    assert training.attempt_items(assignment=a, pool=pool, attempt=2, per_attempt=4) != drawn
    assert training.attempt_items(assignment=a, pool=pool, attempt=1, per_attempt=0) == pool  # 0: all, in order
    with pytest.raises(DesignInvalid) as exc:  # the draws of attempts under way must not change
        screening.screening_settings_update(study=pool_study, changes={"training_items_per_attempt": 6})
    assert "training_items_per_attempt" in exc.value.field_errors
    screening.screening_settings_update(
        study=pool_study, changes={"training_items_per_attempt": 4, "training_retries": 2}
    )


def test_the_researcher_is_told_when_the_pool_is_too_small(opened_study, researcher):
    from django.test import Client

    for row in POOL[:5]:
        training.training_item_add(study=opened_study, row=row)
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/studies/{opened_study.pk}/judging/design/").content.decode()
    assert 'id="training-pool-warning"' in page and "same 5 training items in every attempt" in page
    screening.screening_settings_update(study=opened_study, changes={"training_items_per_attempt": 3})
    r = client.get(f"/api/judging/studies/{opened_study.pk}/screening/")
    assert "Give at least 6 items" in r.json()["training_pool_warning"]
    screening.screening_settings_update(study=opened_study, changes={"training_items_per_attempt": 2})
    assert client.get(f"/api/judging/studies/{opened_study.pk}/screening/").json()["training_pool_warning"] is None
    assert (
        'id="training-pool-warning"' not in client.get(f"/studies/{opened_study.pk}/judging/design/").content.decode()
    )

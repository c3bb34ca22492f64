"""Training round: items from the page, the API and files; the pass rule; retries; screen-out."""

from __future__ import annotations

import json

import pytest

from annotation.judging import screening, selectors, training
from annotation.judging.errors import JudgmentInvalid
from annotation.judging.models import Judgment, TrainingAnswer
from metrics.core.tabular import TabularError

pytestmark = pytest.mark.django_db

#: Five training items: reference adequacy 5, 4, 3, 2, 1 (and fluency 5 on the first).
ITEMS = [{"original": f"Original {i}.", "candidate": f"Candidate {i}.", "adequacy": 6 - i,
          "explanation": f"Because {i}."} for i in range(1, 6)]
ITEMS[0]["fluency"] = 5


def answer(a, f=3, d=3, o=3):
    return {"adequacy": a, "fluency": f, "dissimilarity": d, "overall": o}


@pytest.fixture
def trained_study(opened_study):
    for row in ITEMS:
        training.training_item_add(study=opened_study, row=row)
    # within ±1 on adequacy for 4 of 5 items, one retry
    screening.screening_settings_update(study=opened_study, changes={
        "training_criteria": ["adequacy"], "training_tolerance": 1, "training_required": 4, "training_retries": 1})
    return opened_study


def assignment_of(study, username):
    from django.contrib.auth.models import User

    return selectors.assignment_for_judge(study=study, judge=User.objects.get(username=username))


def do_attempt(study, assignment, adequacies):
    state = None
    for a in adequacies:
        state = training.training_state(assignment=assignment)
        _, state = training.training_answer_submit(assignment=assignment, token=state.next_item.token,
                                                   scores=answer(a))
        assignment.refresh_from_db()
    return state


def test_answer_correct_applies_the_tolerance_to_the_checked_criteria_only():
    five = {"type": "points", "min": 1, "max": 5, "labels": list("abcde")}
    crit = [{"slug": "adequacy", "scale": five}, {"slug": "fluency", "scale": five},
            {"slug": "c", "scale": {"type": "categorical", "categories": ["x", "y"]}}]
    exp = {"adequacy": 4, "fluency": 5, "c": 1}
    assert training.answer_correct(values={"adequacy": 3, "fluency": 1, "c": 0}, expected=exp, criteria=crit,
                                   checked=["adequacy"], tolerance=1)
    assert not training.answer_correct(values={"adequacy": 2, "fluency": 5, "c": 1}, expected=exp, criteria=crit,
                                       checked=["adequacy"], tolerance=1)
    # no checked criteria: every criterion with a reference; categories must be equal
    assert not training.answer_correct(values={"adequacy": 4, "fluency": 5, "c": 0}, expected=exp, criteria=crit,
                                       checked=[], tolerance=1)
    assert training.answer_correct(values={"adequacy": 4, "fluency": 4, "c": 1}, expected=exp, criteria=crit,
                                   checked=[], tolerance=1)


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
        training.training_answer_submit(assignment=a, token=training.training_items(study=trained_study)[0].token,
                                        scores=answer(5))


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
        training.training_item_add(study=opened_study, row={"original": "", "candidate": "x", "adequacy": 7,
                                                            "colour": 1})
    assert set(exc.value.field_errors) == {"original", "adequacy", "colour"}


def test_import_csv_replaces_items_and_reads_labels_as_the_scale_does(opened_study):
    training.training_item_add(study=opened_study, row=ITEMS[0])
    data = (b"original,candidate,adequacy,fluency,explanation\n"
            b"\"A, quoted\",B,4,,Close enough.\n"
            b"C,D,2,5,\n")
    assert training.training_items_import(study=opened_study, data=data, filename="t.csv") == 2
    items = training.training_items(study=opened_study)
    assert [(i.original, i.expected) for i in items] == [("A, quoted", {"adequacy": 4}),
                                                        ("C", {"adequacy": 2, "fluency": 5})]


def test_import_jsonl_is_all_or_nothing_with_line_and_column(opened_study):
    training.training_item_add(study=opened_study, row=ITEMS[0])
    lines = [json.dumps({"original": "A", "candidate": "B", "adequacy": 3}),
             json.dumps({"original": "A", "candidate": "B", "adequacy": "3"}),  # text in JSON: a mistake
             json.dumps({"original": "A", "candidate": "", "fluency": 9})]
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

"""Training items and attention checks of the side-by-side protocol (issue 24).

A training item is an original, two candidates and the reference answer (A, tie or B)
per question, stored in the shared :class:`~annotation.judging.models.TrainingItem`
without a field of its own: A in ``candidate``, B and the answers in ``expected``
(``{"b": text, "answers": {question: "A" | "tie" | "B"}}``). It is shown as written (A
first) and answered like a real pair; an answer is right when every checked question
that has a reference answer has that answer, and the feedback says per question whether
the answer is the reference's (``agree``) or not (``disagree``), never which one it is.

An attention check is a pair drawn on the judge's own page among the real ones: one
side a copy of an original of the judge's pairs, the other an unrelated sentence
(another of those originals), and the requested answer is the copy's side, on the
overall question (the ``overall`` criterion when asked per criterion; else the first
question). It is an :class:`~annotation.judging.models.AttentionCheck` row: the
question in ``criterion``, the requested side in ``expected`` (:data:`ANSWER_CODES`);
which original and sentence it shows is drawn again, the same each time, from the
judge's seed and the check's token, so nothing more is stored.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Mapping
from typing import Unpack

from django.utils.translation import gettext

from annotation.models import Original
from metrics.core.assignment import derive_seed

from ...enums import COMPARISON_ANSWERS, COMPARISON_PREFERENCE
from ...errors import JudgmentInvalid
from ...models import AttentionAnswer, AttentionCheck, JudgingDesign, TrainingItem
from ...selectors.judge import attention_entry_fields, attention_unrelated_text
from ...services.submission import (
    Envelope,
    SubmitResult,
    entry_answer_submit,
    entry_or_check_for_judge,
)
from ...training import training_texts_clean
from .models import ComparisonItem, ComparisonJudgment
from .services import JudgePair, answers_clean, expected_question, pair_for_judge, questions, side_by_side_submit

#: An answer as an attention check stores it (its ``expected`` and ``answer`` are numbers).
ANSWER_CODES = {"A": 0.0, "tie": 1.0, "B": 2.0}
TEXT_COLUMNS = ("original", "a", "b", "explanation")
#: The feedback's verdict per question: the judge's answer is the reference's or not (never which one it is).
SAME, DIFFERENT = "agree", "disagree"


def _answer_read(value: object) -> str | None:
    """ "A", "tie" or "B" from a cell ("a", "Tie", " b "); None when it is none of them."""
    if not isinstance(value, str):
        return None
    v = value.strip()
    return next((a for a in COMPARISON_ANSWERS if a.lower() == v.lower()), None)


def training_item_clean(*, design: JudgingDesign | None, row: Mapping[str, object]) -> tuple[dict, dict]:
    """(clean :class:`TrainingItem` fields, errors by column) for one item given as a flat
    mapping: ``original``, ``a``, ``b``, ``explanation`` and one column per question slug
    (A, tie or B; empty: no reference on that question). At least one reference is needed."""
    slugs = [q["slug"] for q in questions(design)] if design is not None else []
    if "a" not in row and "candidate" in row:  # the API's field for the (first) paraphrase
        row = {("a" if k == "candidate" else k): v for k, v in row.items()}
    texts, errors = training_texts_clean(row=row, columns=TEXT_COLUMNS)
    answers: dict[str, str] = {}
    for slug in slugs:
        v = row.get(slug)
        if v is None or (isinstance(v, str) and not v.strip()):
            continue
        answer = _answer_read(v)
        if answer is None:
            errors.setdefault(slug, []).append("the reference answer is A, tie or B")
        else:
            answers[slug] = answer
    for col in sorted(set(row) - set(TEXT_COLUMNS) - set(slugs)):
        errors.setdefault(col, []).append(f"unknown column; the questions are {', '.join(slugs)}")
    if slugs and not answers and not any(s in errors for s in slugs):
        errors.setdefault(slugs[0], []).append("give the reference answer (A, tie or B) of at least one question")
    clean = {
        "original": texts.get("original", ""),
        "candidate": texts.get("a", ""),
        "explanation": texts.get("explanation", ""),
        "expected": {"b": texts.get("b", ""), "answers": answers},
    }
    return clean, errors


def training_references(item_or_expected) -> dict[str, str]:
    expected = item_or_expected.expected if isinstance(item_or_expected, TrainingItem) else item_or_expected
    return dict((expected or {}).get("answers") or {})


def training_answer_clean(*, design: JudgingDesign | None, answers: Mapping[str, object], from_text: bool) -> dict:
    """Every question answered with A, tie or B, as on a real pair (:class:`JudgmentInvalid`);
    a form's other fields are left out."""
    assert design is not None  # a side-by-side study has a design: its protocol is stored there
    slugs = {q["slug"] for q in questions(design)}
    if from_text:
        answers = {k: v for k, v in answers.items() if k in slugs and v not in (None, "")}
    return answers_clean(design=design, answers=answers)


def training_verdicts(*, values: Mapping, expected: Mapping) -> dict[str, str]:
    return {
        slug: SAME if values.get(slug) == ref else DIFFERENT
        for slug, ref in training_references(expected).items()
        if slug in values
    }


def training_correct(*, checked: list[str], values: Mapping, expected: Mapping) -> bool:
    verdicts = training_verdicts(values=values, expected=expected)
    return all(v == SAME for slug, v in verdicts.items() if not checked or slug in checked)


def training_item_for_judge(item: TrainingItem) -> dict:
    return {
        "token": item.token,
        "original": item.original,
        "a": item.candidate,
        "b": (item.expected or {}).get("b", ""),
    }


# --- attention checks -----------------------------------------------------------------------


def attention_question(design: JudgingDesign | None) -> str:
    """The question an attention pair is checked on: the overall one (see module doc)."""
    if design is None:
        return COMPARISON_PREFERENCE
    return expected_question(design) or questions(design)[0]["slug"]


def attention_draw(*, design: JudgingDesign | None, rng: random.Random) -> tuple[str, float]:
    """A new check: its question and the side (A or B) where the copy of the original will be."""
    return attention_question(design), ANSWER_CODES[rng.choice(("A", "B"))]


def attention_score(*, design: JudgingDesign | None, check: AttentionCheck, value: object) -> tuple[float, bool]:
    """The answer to a check, given as the answers to every question (page, pairs API) or as
    one answer (the attention API): (stored code, whether it is the copy's side)."""
    if isinstance(value, Mapping):
        assert design is not None  # a side-by-side study has a design: its protocol is stored there
        answer = answers_clean(design=design, answers=value).get(check.criterion)
    else:
        answer = _answer_read(value)
    if answer is None:
        raise JudgmentInvalid(
            gettext("Answer every question with A, tie or B."),
            field_errors={check.criterion: [gettext("answer A, tie or B")]},
        )
    return ANSWER_CODES[answer], ANSWER_CODES[answer] == check.expected


def attention_pair(*, check: AttentionCheck) -> JudgePair:
    """The check as the judge receives it: a :class:`JudgePair` like the next real pair (its
    place, progress, way back, serve stamp and context), its token the check's."""
    assignment = check.assignment
    rng = random.Random(derive_seed(assignment.seed, "attention-pair", check.token))
    ids = sorted(set(ComparisonItem.objects.filter(assignment=assignment).values_list("left__original_id", flat=True)))
    original = Original.objects.get(pk=rng.choice(ids))
    unrelated = attention_unrelated_text(rng, [i for i in ids if i != original.pk])
    a, b = (original.text, unrelated) if check.expected == ANSWER_CODES["A"] else (unrelated, original.text)
    return JudgePair(
        **attention_entry_fields(
            check=check,
            done=ComparisonItem.objects.filter(assignment=assignment, done_at__isnull=False).count(),
            item_model=ComparisonItem,
            original=original,
            shown=JudgingDesign.objects.filter(study_id=assignment.study_id, show_context=True).exists(),
        ),
        original=original.text,
        a=a,
        b=b,
        answers=None,
    )


def answer_submit(*, answers: Mapping[str, object], **envelope: Unpack[Envelope]) -> SubmitResult:
    """Answer a pair of the judge's page, a real one or an attention pair (page and pairs
    API): one path for both, so that the refusals, their order and texts, the replays and the
    revisions cannot tell them apart (issue 38 items 11-14). The checks run in
    :func:`~.services.side_by_side_submit`'s order (the key's form, the answers, the active
    time), then the shared core: the pair's
    (:func:`~annotation.judging.services.submission.submission_store`) or the check's
    (:func:`~annotation.judging.services.submission.attention_store`, which also scores it
    with the study's policy)."""
    return entry_answer_submit(
        item_submit=functools.partial(side_by_side_submit, answers=answers),
        check_values=lambda check: answers_clean(
            design=JudgingDesign.objects.get(study=envelope["study"]), answers=answers
        ),
        check_score=lambda check, v: (
            ANSWER_CODES[str(v[check.criterion])],
            ANSWER_CODES[str(v[check.criterion])] == check.expected,
        ),
        item_model=ComparisonItem,
        judgment_model=ComparisonJudgment,
        **envelope,
    )


def pair_or_attention_for_judge(*, study, judge, token: str) -> JudgePair:
    """A pair of the judge's own assignment by its token (revise page, pair API), attention
    pairs included: a token the judge was given is answered the same way whatever it stands
    for (a 404 for a check alone would tell it apart). An answered check shows its answer."""
    return entry_or_check_for_judge(
        study, judge, token, entry_for_judge=pair_for_judge, check_entry=attention_pair, check_answered=_answered
    )


def _answered(pair: JudgePair, latest: AttentionAnswer) -> JudgePair:
    """An answered attention pair as the judge sent it last, read back as a pair's latest judgment."""
    return dataclasses.replace(pair, revision=latest.revision, answers=dict(latest.values))

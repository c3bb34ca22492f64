"""The small schema of a study's questions to participants, and the checking of answers.

A question is ``{"name": "native_language", "type": "language", "label": "Your native language",
"required": true}``; ``type`` is one of :data:`QUESTION_TYPES`; ``choice`` and ``scale``
questions also have ``"choices": ["1 — beginner", …]`` (a scale is shown as a row of points).
"""

from __future__ import annotations

import re

from django.utils.translation import gettext as _

QUESTION_TYPES = ("text", "language", "choice", "scale")
MAX_QUESTIONS = 20
MAX_TEXT = 2000
MAX_SHORT = 100
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")


def questions_errors(questions: object) -> list[str]:
    """What is wrong with a list of questions (empty: nothing)."""
    if not isinstance(questions, list):
        return ["questions must be a list"]
    if len(questions) > MAX_QUESTIONS:
        return [f"at most {MAX_QUESTIONS} questions"]
    errors, seen = [], set()
    for i, q in enumerate(questions, 1):
        where = f"question {i}"
        if not isinstance(q, dict):
            errors.append(f"{where}: must be an object with name, type and label")
            continue
        unknown = set(q) - {"name", "type", "label", "required", "choices"}
        if unknown:
            errors.append(f"{where}: unknown keys {', '.join(sorted(unknown))}")
        name = q.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            errors.append(f"{where}: name must be lower-case letters, digits and _ (starting with a letter)")
        elif name in seen:
            errors.append(f"{where}: the name '{name}' is used twice")
        else:
            seen.add(name)
        if q.get("type") not in QUESTION_TYPES:
            errors.append(f"{where}: type must be one of {', '.join(QUESTION_TYPES)}")
        if not isinstance(q.get("label"), str) or not q.get("label", "").strip() or len(q["label"]) > 300:
            errors.append(f"{where}: a label of 1–300 characters is needed")
        if not isinstance(q.get("required", False), bool):
            errors.append(f"{where}: required is true or false")
        choices = q.get("choices")
        if q.get("type") in ("choice", "scale"):
            if (
                not isinstance(choices, list)
                or not 2 <= len(choices) <= 20
                or not all(isinstance(c, str) and c.strip() and len(c) <= 100 for c in choices)
                or len(set(choices)) != len(choices)
            ):
                errors.append(f"{where}: a {q.get('type')} question needs 2–20 different choices (texts)")
        elif choices is not None:
            errors.append(f"{where}: only choice and scale questions have choices")
    return errors


def answers_clean(questions: list[dict], data: dict) -> tuple[dict, dict[str, str]]:
    """(clean answers by question name, errors by question name) for posted ``data``.

    Unanswered optional questions are stored as "" so the export has every column.
    """
    answers, errors = {}, {}
    for q in questions:
        raw = data.get(q["name"], "")
        value = raw.strip() if isinstance(raw, str) else ""
        if not value:
            if q.get("required"):
                errors[q["name"]] = _("This question needs an answer.")
            answers[q["name"]] = ""
            continue
        if q["type"] in ("choice", "scale") and value not in q["choices"]:
            errors[q["name"]] = _("Choose one of the answers given.")
        elif len(value) > (MAX_SHORT if q["type"] == "language" else MAX_TEXT):
            errors[q["name"]] = _("This answer is too long.")
        answers[q["name"]] = value
    return answers, errors

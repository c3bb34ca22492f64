"""The versioned prompt template, its rendering into chat messages and the answer parser.

A template is plain text with two headed parts, ``[system]`` and ``[user]``, and
``$name`` placeholders (Python's :class:`string.Template`, so braces in a
researcher's wording need no escaping):

``$instructions`` the rubric's instructions; ``$criterion_name``, ``$criterion_help``,
``$scale`` (one line a value: ``1 = Unacceptable`` …, or the slider's anchors),
``$answer_format`` (``a whole number from 1 to 5``); ``$original`` and ``$candidate``,
the pair. An unknown placeholder is an error when the metric is created, not at
the first item.

The default (:data:`DEFAULT_TEMPLATE`, :data:`TEMPLATE_VERSION`) is shown by
``manage.py llm_judge_template`` and in docs/metrics-llm.md; a run may pass its own
text as the ``template`` parameter. Either way the signature records the SHA-256
of the template text (:func:`template_hash`), so two numbers from different
prompts never look alike.
"""

from __future__ import annotations

import hashlib
import re
from string import Template

from .rubric import Criterion, Rubric

__all__ = [
    "TEMPLATE_VERSION",
    "DEFAULT_TEMPLATE",
    "PLACEHOLDERS",
    "template_hash",
    "template_check",
    "render_messages",
    "parse_answer",
]

#: Bumped whenever :data:`DEFAULT_TEMPLATE` changes (recorded in signatures).
TEMPLATE_VERSION = "1"

DEFAULT_TEMPLATE = """[system]
You are a careful judge in a study of paraphrases. You rate one pair of sentences at a time, on one criterion, \
on the scale you are given, and you answer with the rating alone.
[user]
$instructions

Criterion: $criterion_name. $criterion_help

Scale:
$scale

Original: $original
Paraphrase: $candidate

Answer with $answer_format and nothing else.
"""

PLACEHOLDERS = (
    "instructions",
    "criterion_name",
    "criterion_help",
    "scale",
    "answer_format",
    "original",
    "candidate",
)

_PART = re.compile(r"^\[(system|user)\]\s*$", re.MULTILINE)


def template_hash(template: str) -> str:
    """First 12 hex digits of the SHA-256 of the template text (UTF-8)."""
    return hashlib.sha256(template.encode("utf-8")).hexdigest()[:12]


def _parts(template: str) -> list[tuple[str, str]]:
    heads = list(_PART.finditer(template))
    if not heads:
        return [("user", template.strip())]
    return [
        (m.group(1), template[m.end() : heads[k + 1].start() if k + 1 < len(heads) else len(template)].strip())
        for k, m in enumerate(heads)
    ]


def template_check(template: str) -> None:
    """Raise ``ValueError`` for a template without ``$original``/``$candidate``, an unknown
    placeholder, or a part with no text."""
    names: set[str] = set()
    for _role, text in _parts(template):
        if not text:
            raise ValueError("a [system] or [user] part of the template is empty")
        for m in Template.pattern.finditer(text):
            if m.group("invalid") is not None:
                raise ValueError(f"the template has a stray '$' at position {m.start()} (write $$ for a dollar sign)")
            name = m.group("named") or m.group("braced")
            if name:
                names.add(name)
    unknown = names - set(PLACEHOLDERS)
    if unknown:
        raise ValueError(
            f"unknown placeholder(s) in the template: {', '.join(sorted(unknown))}; known: {', '.join(PLACEHOLDERS)}"
        )
    missing = {"original", "candidate"} - names
    if missing:
        raise ValueError(f"the template must show the pair: add {', '.join('$' + n for n in sorted(missing))}")


def render_messages(template: str, rubric: Rubric, criterion: Criterion, original: str, candidate: str) -> list[dict]:
    """The chat messages (``[{"role", "content"}, ...]``) for one item on one criterion."""
    values = {
        "instructions": rubric.instructions,
        "criterion_name": criterion.name,
        "criterion_help": criterion.help,
        "scale": criterion.scale_text(),
        "answer_format": criterion.answer_format(),
        "original": original,
        "candidate": candidate,
    }
    return [{"role": role, "content": Template(text).substitute(values)} for role, text in _parts(template)]


_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")


def parse_answer(text: str, criterion: Criterion) -> float | None:
    """The rating in an answer, on ``criterion``'s scale, or None when there is none.

    Accepted: the first number in the answer when it lies on the scale ("4",
    "Rating: 4", "4 - Good"), else a label or category name the answer starts
    with ("Good", "Perfect."). Anything else — a number off the scale, prose, an
    empty answer — is unparseable: the caller counts it, never guesses.
    """
    if not text:
        return None
    m = _NUMBER.search(text)
    if m is not None:
        return criterion.clean(float(m.group(0)))
    head = text.strip().strip("\"'*.:").casefold()
    values = criterion.values()
    if values is not None:
        for value, label in sorted(zip(values, criterion.labels()), key=lambda vl: -len(vl[1])):
            if head.startswith(label.strip().casefold()):
                return float(value)
    return None

"""Training items and attention checks of the ranking protocol (issue 25).

**A training item** is an original, k candidates (k = the design's ``ranking_k``; 2 to 6
when no design is set yet) and a reference order of them, stored in the shared
:class:`~annotation.judging.models.TrainingItem` without a field of its own: the first
candidate in ``candidate``, the others and the reference in ``expected``
(``{"others": [text, ...], "reference": [1, [2, 3], 4]}``). The reference names the
candidates by their number in the item (1..k), best first, tied ones as a list, as the
ranking API's orders do. On the design page and in a file the reference is written
``2 > 1 = 3 > 4`` (``>``: better than, ``=``: tied) or, in JSONL and the API, as that list.

The item is shown with its candidates in the order written (place p = candidate p) and
answered like a real set. **An answer is right** when it keeps every strict preference of
the reference: for every two candidates the reference puts in different groups, the judge
puts the better one in a better group. A tie in the reference leaves the judge free
(either order, or a tie); a tie by the judge where the reference orders two candidates is
a disagreement. **The feedback** gives each candidate a verdict: ``agree`` when every
strict preference of the reference that involves it is kept, else ``disagree``, and the
researcher's explanation; never the reference order itself.

**An attention check** is a set drawn on the judge's ranking page among the real sets,
in the same HTML and JSON as a real set (a token like an item's, the next position, the
same serve stamp): one of the judge's genuine sets is taken again (seeded by the judge's seed and
the check's token, so the same each time and nothing more is stored), one of its
candidates is replaced by a copy of its original and another by an unrelated sentence
(another original of the judge's sets, or a fixed sentence when they have one original).
**It passes** when the copy is in the judge's first group and the unrelated sentence in
the last (tied first or tied last counts, as for the ranking controls of
:mod:`metrics.core.ranking.controls`: a very good paraphrase may fairly tie with a
copy), and the two are not in the same group. It is an
:class:`~annotation.judging.models.AttentionCheck` row with ``criterion`` "ranking",
``expected`` 1 (the copy's group) and ``answer`` the group the judge put the copy in.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
from collections.abc import Mapping
from typing import Unpack

from django.utils.translation import gettext

from annotation.models import Candidate, Study
from metrics.core.assignment import derive_seed

from ...errors import JudgmentInvalid
from ...models import AttentionAnswer, AttentionCheck, JudgingDesign, TrainingItem
from ...selectors.judge import attention_entry_fields, attention_unrelated_text
from ...services.submission import (
    Envelope,
    SubmitResult,
    entry_answer_submit,
    entry_or_check_for_judge,
)
from ...training import MAX_EXPLANATION_CHARS, MAX_TEXT_CHARS
from ..base import items_answered
from .models import RankingItem, RankingJudgment
from .services import (
    JudgeRanking,
    order_clean,
    order_from_ranks,
    places_of,
    ranking_for_judge,
    ranking_submit,
)

#: The one "question" of a ranking: the order (the pass rule's ``training_criteria`` may name it).
QUESTION = "ranking"
K_MIN, K_MAX = 2, 6

CANDIDATE_COLUMNS = tuple(f"p{i}" for i in range(1, K_MAX + 1))
#: The feedback's verdict per candidate: its place agrees with the reference's preferences or not.
SAME, DIFFERENT = "agree", "disagree"


def _k_of(design: JudgingDesign | None) -> int | None:
    return design.ranking_k if design is not None else None


# --- orders ----------------------------------------------------------------------------------


def order_read(value: object, *, k: int) -> list[int | list[int]]:
    """An order of places 1..k, best first with ties as lists, from a list (``[2, [1, 3], 4]``)
    or a text (``2 > 1 = 3 > 4``). ValueError naming the problem; every place exactly once."""
    if isinstance(value, str):
        groups: list = []
        for part in value.split(">"):
            names = [n.strip() for n in part.split("=")]
            if not all(re.fullmatch(r"\d+", n) for n in names):
                raise ValueError("write the order as numbers with > (better) and = (tied): 2 > 1 = 3")
            groups.append([int(n) for n in names] if len(names) > 1 else int(names[0]))
        value = groups
    if not isinstance(value, list) or not value:
        raise ValueError("the order lists the candidates' numbers, best first")
    seen: list[int] = []
    clean: list[int | list[int]] = []
    for element in value:
        places = element if isinstance(element, list) else [element]
        if not places or not all(isinstance(p, int) and not isinstance(p, bool) and 1 <= p <= k for p in places):
            raise ValueError(f"the candidates are numbered 1 to {k}")
        seen.extend(places)
        clean.append(list(places) if len(places) > 1 else places[0])
    if sorted(seen) != list(range(1, k + 1)):
        raise ValueError(f"name each candidate 1 to {k} exactly once")
    return clean


def group_of(order: list) -> dict[int, int]:
    """Place → its group's number (1 = best) in ``order``."""
    return {p: g for g, element in enumerate(order, 1) for p in (element if isinstance(element, list) else [element])}


def ranks_of(order: list) -> dict[int, int]:
    """Place → its rank as the page shows it (1 = best; tied places share the best rank of their group)."""
    ranks: dict[int, int] = {}
    placed = 0
    for element in order:
        places = element if isinstance(element, list) else [element]
        ranks.update(dict.fromkeys(places, placed + 1))
        placed += len(places)
    return ranks


def _strict_pairs(reference: list) -> list[tuple[int, int]]:
    """(better, worse) for every two places the reference puts in different groups."""
    g = group_of(reference)
    return [(a, b) for a in g for b in g if g[a] < g[b]]


# --- training items --------------------------------------------------------------------------


def training_item_clean(*, design: JudgingDesign | None, row: Mapping[str, object]) -> tuple[dict, dict]:
    """(clean :class:`TrainingItem` fields, errors by column) for one item as a flat mapping:
    ``original``, ``p1``..``pk`` (or ``candidates``, a list; the API's ``candidate`` is ``p1``),
    ``reference`` and ``explanation``."""
    row = dict(row)
    if "candidate" in row and "p1" not in row:
        row["p1"] = row.pop("candidate")
    errors: dict[str, list[str]] = {}
    texts: list[str] = []
    listed = row.pop("candidates", None)
    if listed is not None:
        if not isinstance(listed, list) or any(f"p{i}" in row for i in range(2, K_MAX + 1)):
            errors["candidates"] = ["a list of the candidates' texts (and no p2.. columns beside it)"]
        else:
            row.update({f"p{i}": t for i, t in enumerate(listed, 1 + ("p1" in row))})
    for col in ("original", *CANDIDATE_COLUMNS, "explanation"):
        v = row.get(col, "")
        v = "" if v is None else v
        if not isinstance(v, str):
            errors.setdefault(col, []).append("must be text")
            continue
        limit = MAX_EXPLANATION_CHARS if col == "explanation" else MAX_TEXT_CHARS
        if len(v) > limit:
            errors.setdefault(col, []).append(f"at most {limit} characters")
        if col in CANDIDATE_COLUMNS and v.strip():
            texts.append(v.strip())
        elif col in CANDIDATE_COLUMNS:
            texts.append("")
    original = row.get("original")
    if not isinstance(original, str):
        original = ""
    if not (original or "").strip():
        errors.setdefault("original", []).append("this column needs a text")
    while texts and not texts[-1]:
        texts.pop()
    k_design = _k_of(design)
    if "" in texts:
        errors.setdefault(f"p{texts.index('') + 1}", []).append("the candidates are p1, p2, … without a gap")
    elif k_design is not None and len(texts) != k_design:
        errors.setdefault("p1", []).append(f"this study ranks {k_design} candidates at once: give p1 to p{k_design}")
    elif not K_MIN <= len(texts) <= K_MAX:
        errors.setdefault("p1", []).append(f"give {K_MIN} to {K_MAX} candidates (p1, p2, …)")
    reference: list = []
    raw = row.get("reference")
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        errors.setdefault("reference", []).append("give the reference order, e.g. 2 > 1 = 3")
    elif not errors.keys() & {f"p{i}" for i in range(1, K_MAX + 1)}:
        try:
            reference = order_read(raw, k=len(texts))
        except ValueError as exc:
            errors.setdefault("reference", []).append(str(exc))
        else:
            if len(reference) < 2:
                errors.setdefault("reference", []).append("a reference that ties every candidate checks nothing")
    known = {"original", "reference", "explanation", *CANDIDATE_COLUMNS}
    for col in sorted(set(row) - known):
        errors.setdefault(col, []).append("unknown column; the columns are original, p1…p6, reference, explanation")
    explanation = row.get("explanation")
    clean = {
        "original": (original or "").strip(),
        "candidate": texts[0] if texts else "",
        "explanation": explanation.strip() if isinstance(explanation, str) else "",
        "expected": {"others": texts[1:], "reference": reference},
    }
    return clean, errors


def training_texts(item: TrainingItem) -> list[str]:
    return [item.candidate, *((item.expected or {}).get("others") or [])]


def reference_text(expected: Mapping) -> str:
    """The reference as the design page writes it: ``2 > 1 = 3``."""
    return " > ".join(
        " = ".join(map(str, e)) if isinstance(e, list) else str(e) for e in (expected or {}).get("reference") or []
    )


def answer_clean(*, k: int, answers: Mapping[str, object], from_text: bool) -> dict:
    """A judge's order of a set of ``k`` (the page's ranks ``rank_1``.. or the API's ``order``)
    as ``{"order": [...]}``; :class:`JudgmentInvalid` as on a real set."""
    if from_text or "order" not in answers:
        return {"order": order_from_ranks({str(p): answers.get(f"rank_{p}") for p in range(1, k + 1)}, k=k)}
    try:
        return {"order": order_read(answers["order"], k=k)}
    except ValueError as exc:
        raise JudgmentInvalid(
            gettext("order must list the places 1 to %(k)d, best first (ties as lists).") % {"k": k},
            field_errors={"order": [str(exc)]},
        ) from None


def training_answer_clean(*, design: JudgingDesign | None, answers: Mapping[str, object], from_text: bool) -> dict:
    return answer_clean(k=_k_of(design) or K_MAX, answers=answers, from_text=from_text)


def training_verdicts(*, values: Mapping, expected: Mapping) -> dict[str, str]:
    """Place (as text) → ``agree``/``disagree`` (see the module doc): never the reference."""
    reference = (expected or {}).get("reference") or []
    mine = group_of(values.get("order") or [])
    verdicts = {str(p): SAME for p in group_of(reference)}
    for better, worse in _strict_pairs(reference):
        if not (better in mine and worse in mine and mine[better] < mine[worse]):
            verdicts[str(better)] = verdicts[str(worse)] = DIFFERENT
    return verdicts


def training_correct(*, values: Mapping, expected: Mapping) -> bool:
    verdicts = training_verdicts(values=values, expected=expected)
    return bool(verdicts) and all(v == SAME for v in verdicts.values())


def training_item_for_judge(item: TrainingItem) -> dict:
    """The item as the judge receives it: its token, the original and the candidates by place."""
    return {
        "token": item.token,
        "original": item.original,
        "candidates": [{"place": p, "text": t} for p, t in enumerate(training_texts(item), 1)],
    }


# --- attention checks ----------------------------------------------------------------------


def attention_draw(*, rng: random.Random) -> tuple[str, float]:
    """A new check: the question and the group the copy of the original is expected in (the first)."""
    return QUESTION, 1.0


def attention_layout(*, check: AttentionCheck) -> tuple[RankingItem, list[str], int, int]:
    """(the set it is built on, the k texts in screen order, the copy's place, the unrelated
    sentence's place), drawn again the same each time from the judge's seed and the token."""
    assignment = check.assignment
    rng = random.Random(derive_seed(assignment.seed, "attention-ranking", check.token))
    items = list(RankingItem.objects.filter(assignment=assignment).select_related("original").order_by("position"))
    # A genuine set where there is one: a control set may already hold a copy of its original.
    item = rng.choice([i for i in items if not i.is_control] or items)
    texts_by_id = dict(Candidate.objects.filter(pk__in=item.candidates).values_list("id", "text"))
    texts = [texts_by_id[c] for c in item.candidates]
    copy_place, unrelated_place = rng.sample(range(1, len(texts) + 1), 2)
    others = sorted({i.original_id for i in items} - {item.original_id})
    unrelated = attention_unrelated_text(rng, others)
    texts[copy_place - 1] = item.original.text
    texts[unrelated_place - 1] = unrelated
    return item, texts, copy_place, unrelated_place


def attention_entry(*, check: AttentionCheck) -> JudgeRanking:
    """The check as the judge receives it: a :class:`JudgeRanking` like the next real set (its
    position, progress, way back, serve stamp and context), its token the check's."""
    assignment = check.assignment
    item, texts, _copy, _unrelated = attention_layout(check=check)
    design = JudgingDesign.objects.get(study_id=assignment.study_id)
    return JudgeRanking(
        **attention_entry_fields(
            check=check,
            done=items_answered(item_model=RankingItem, assignment=assignment),
            item_model=RankingItem,
            original=item.original,
            shown=design.show_context,
        ),
        original=item.original.text,
        candidates=tuple(texts),
        order=None,
        ranks={},
        scores={},
        asks_scores=design.ranking_scores,
    )


def attention_score(*, check: AttentionCheck, value: object) -> tuple[float, bool]:
    """The answer to a check, as a real set's: ``{"order": ..., "scores": ...}`` (API) or the
    page's ``rank_N`` and ``score_N``, checked exactly as a real set's order and scores are
    (:func:`~.services.order_clean`: the same refusals, so a check answers like a set); the
    scores are not kept. (the copy's group, whether it passes: see the module doc)."""
    _item, texts, copy_place, unrelated_place = attention_layout(check=check)
    k = len(texts)
    design = JudgingDesign.objects.get(study_id=check.assignment.study_id)
    given = value if isinstance(value, Mapping) else {}
    if "order" in given:
        order, scores = given["order"], given.get("scores")
    else:
        order = order_from_ranks({str(p): given.get(f"rank_{p}") for p in range(1, k + 1)}, k=k)
        scores = {str(p): given.get(f"score_{p}") for p in range(1, k + 1)} if design.ranking_scores else None
    # The places stand in for candidate ids: the groups come back as places.
    groups, _scores = order_clean(
        item=RankingItem(candidates=list(range(1, k + 1))), design=design, order=order, scores=scores
    )
    return _check_passed(check, copy_place=copy_place, unrelated_place=unrelated_place, groups=groups)


def _check_passed(check: AttentionCheck, *, copy_place: int, unrelated_place: int, groups: list) -> tuple[float, bool]:
    """(the copy's group, passed): the copy in the first group, the unrelated sentence in the
    last, not together (the module doc)."""
    group = group_of(groups)
    return float(group[copy_place]), group[copy_place] == 1 and group[unrelated_place] == len(groups) and len(
        groups
    ) > 1


def answer_submit(*, order: object, scores: object = None, **envelope: Unpack[Envelope]) -> SubmitResult:
    """Answer a set of the judge's page, a real one or an attention set (page and ranking
    API): one path for both, so that the refusals, their order and texts, the replays and the
    revisions cannot tell them apart (issue 38 item 12). The checks run in
    :func:`~.services.ranking_submit`'s order (the key's form, the set, the order and scores,
    the active time), then the shared core: the set's
    (:func:`~annotation.judging.services.submission.submission_store`) or the check's
    (:func:`~annotation.judging.services.submission.attention_store`: the same key, screened
    out, study open and serve stamp checks, and the check scored with the study's policy)."""
    layout: dict[str, int] = {}

    def check_values(check: AttentionCheck) -> dict:
        design = JudgingDesign.objects.get(study=envelope["study"])
        _item, texts, layout["copy"], layout["unrelated"] = attention_layout(check=check)
        # The places stand in for candidate ids: the groups and scores come back by place.
        groups, clean = order_clean(
            item=RankingItem(candidates=list(range(1, len(texts) + 1))), design=design, order=order, scores=scores
        )
        return {"groups": groups, "scores": clean}

    return entry_answer_submit(
        item_submit=functools.partial(ranking_submit, order=order, scores=scores),
        check_values=check_values,
        check_score=lambda check, v: _check_passed(
            check,
            copy_place=layout["copy"],
            unrelated_place=layout["unrelated"],
            groups=v["groups"],  # type: ignore[arg-type]  # order_clean gave the groups as a list
        ),
        item_model=RankingItem,
        judgment_model=RankingJudgment,
        fields_of=dict,
        **envelope,
    )


def entry_for_judge(*, study: Study, judge, token: str) -> JudgeRanking:
    """A set of the judge's own assignment by its token (revise page, set API), attention sets
    included: a token the judge was given is answered the same way whatever it stands for (a
    404 for a check alone would tell it apart)."""
    return entry_or_check_for_judge(
        study, judge, token, entry_for_judge=ranking_for_judge, check_entry=attention_entry, check_answered=_answered
    )


def _answered(entry: JudgeRanking, latest: AttentionAnswer) -> JudgeRanking:
    """An answered attention set as the judge sent it last, read back as a set's latest ranking
    (places stand for candidate ids)."""
    values = latest.values
    order, ranks, scores = places_of(
        RankingItem(candidates=list(range(1, len(entry.candidates) + 1))),
        RankingJudgment(groups=values.get("groups") or [], scores=values.get("scores") or {}),
    )
    return dataclasses.replace(entry, order=order, ranks=ranks, scores=scores, revision=latest.revision)

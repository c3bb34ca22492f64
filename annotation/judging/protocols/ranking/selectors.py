"""k-way ranking, read for the researcher: the latest rankings as records of system names (for the
report and the imports' round trip), progress, the exports (the rankings file format and CSV) and the
QC table. The writes and what a judge is served are in :mod:`.services`."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping

import pandas as pd
from scipy.stats import binomtest

from annotation.judging.selectors.exclusions import judges_excluded
from annotation.models import Candidate, Study, System
from metrics.core.ranking.controls import ranking_control_checks
from metrics.core.ranking.orders import Ranking, midranks
from metrics.core.ranking.scores import ScoredCandidate

from ...enums import CONTROL_KIND_OF_SYSTEM_KIND, CONTROL_SYSTEM_PREFIX
from ...models import JudgingDesign
from ...selectors.export_rows import RECORD_COLUMNS, judgment_record_cells
from ..base import ExportAnswer
from .models import RankingItem, RankingJudgment


def _latest(study: Study):
    return (
        RankingJudgment.objects.filter(study=study, is_latest=True)
        .select_related("judge", "item__original", "item__assignment")
        .order_by("judge__username", "item__assignment_id", "item__position")
    )


def _candidate_rows(study: Study) -> dict[int, tuple[str, str, str]]:
    """Candidate pk → (system name, system kind, text)."""
    return {
        pk: (name, kind, text)
        for pk, name, kind, text in Candidate.objects.filter(original__study=study).values_list(
            "id", "system__name", "system__kind", "text"
        )
    }


def _named(groups: list, names: Mapping[int, str]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(names[c] for c in (g if isinstance(g, list) else [g])) for g in groups)


def ranking_records(*, study: Study) -> list[Ranking]:
    """Every latest ranking as a :class:`~metrics.core.ranking.orders.Ranking` of system names
    (controls included, under their ``control:`` names)."""
    cands = _candidate_rows(study)
    names = {pk: row[0] for pk, row in cands.items()}
    return [
        Ranking(judge=j.judge.username, original=j.item.original.external_id, groups=_named(j.groups, names))
        for j in _latest(study)
    ]


def ranking_scores(*, study: Study) -> list[ScoredCandidate]:
    """The 0–100 scores of the latest rankings that carry them (a design with ``ranking_scores``):
    one per judge and candidate, with its system's name, its original and its mid-rank in the
    judge's order (1 = best); controls marked."""
    cands = _candidate_rows(study)
    out = []
    for j in _latest(study):
        if not j.scores:
            continue
        ranks = midranks([[str(c) for c in (g if isinstance(g, list) else [g])] for g in j.groups])
        for cid, score in sorted(j.scores.items()):
            name, kind, _text = cands[int(cid)]
            out.append(
                ScoredCandidate(
                    judge=j.judge.username,
                    ranking=str(j.pk),
                    original=j.item.original.external_id,
                    system=name,
                    score=float(score),
                    rank=float(ranks[str(int(cid))]),
                    is_control=kind in CONTROL_KIND_OF_SYSTEM_KIND,
                )
            )
    return out


def control_kinds(*, study: Study) -> dict[str, str]:
    """Control system name → control kind (``identical``, ``random``, ``unigram``)."""
    return {
        name: CONTROL_KIND_OF_SYSTEM_KIND[kind]
        for name, kind in System.objects.filter(study=study, kind__in=list(CONTROL_KIND_OF_SYSTEM_KIND)).values_list(
            "name", "kind"
        )
    }


def ranking_export_lines(*, study: Study) -> Iterator[dict]:
    """The rankings as the file format :func:`annotation.judging.protocols.ranking.parsers.parse_rankings_file`
    reads: one dict per latest ranking (judge, original_id, ranking of system names best first
    with ties nested, scores by system name when asked, seconds). Controls are left out (the
    format reserves their names; their places are in the CSV and on the QC page), and so is a
    ranking left with fewer than two systems without them. ``set`` numbers the lines of one
    judge and original from 1 in the order of the judge's assignment, so that several sets of
    one original (more than k candidates) come back apart when the file is imported."""
    cands = _candidate_rows(study)
    names = {pk: row[0] for pk, row in cands.items()}
    sets: Counter[tuple[int, int]] = Counter()
    for j in _latest(study):
        groups = [[s for s in g if not s.startswith(CONTROL_SYSTEM_PREFIX)] for g in _named(j.groups, names)]
        groups = [g for g in groups if g]
        if sum(len(g) for g in groups) < 2:
            continue
        sets[(j.judge_id, j.item.original_id)] += 1
        line: dict = {
            "judge": j.judge.username,
            "original_id": j.item.original.external_id,
            "set": sets[(j.judge_id, j.item.original_id)],
            "ranking": [g if len(g) > 1 else g[0] for g in groups],
        }
        scores = {
            names[int(c)]: v for c, v in (j.scores or {}).items() if not names[int(c)].startswith(CONTROL_SYSTEM_PREFIX)
        }
        if scores:
            line["scores"] = scores
        if j.seconds is not None:
            line["seconds"] = round(j.seconds, 3)
        yield line


EXPORT_HEADER = [
    "judge",
    "position",
    "original_id",
    "system",
    "screen_place",
    "group",
    "rank",
    "score",
    "text",
    "is_control",
    *RECORD_COLUMNS,
]


def ranking_export_rows(*, study: Study) -> Iterator[list]:
    """The researcher's CSV: one row per ranked candidate of each latest ranking: its system, the
    place it was shown at, its group (1 = best), its mid-rank and score."""
    yield EXPORT_HEADER
    cands = _candidate_rows(study)
    for j in _latest(study):
        groups = [g if isinstance(g, list) else [g] for g in j.groups]
        mid = midranks([[str(c) for c in g] for g in groups])
        for number, group in enumerate(groups, 1):
            for c in group:
                name, kind, text = cands[c]
                yield [
                    j.judge.username,
                    j.item.position,
                    j.item.original.external_id,
                    name,
                    j.item.candidates.index(c) + 1,
                    number,
                    mid[str(c)],
                    (j.scores or {}).get(str(c), ""),
                    text,
                    j.item.is_control,
                    *judgment_record_cells(j),
                ]


def ranking_qc(*, study: Study) -> list[dict]:
    """Per judge with ranked controls: the controls checked, how many where they belong (a copy
    of the original in the first group, an unrelated sentence in the last:
    :func:`metrics.core.ranking.controls.ranking_control_checks`), the share, the one-sided
    binomial p-value against chance (1/k: a candidate put first, or last, at random), ``passes``
    when p < the design's QC level, and ``excluded``."""
    design = JudgingDesign.objects.get(study=study)
    checks = ranking_control_checks(ranking_records(study=study), control_kinds(study=study))
    excluded = judges_excluded(study=study)
    per: dict[str, list[bool]] = defaultdict(list)
    for c in checks:
        per[c.judge].append(c.passed)
    rows = []
    for judge, v in sorted(per.items()):
        p = float(binomtest(sum(v), len(v), 1 / design.ranking_k, alternative="greater").pvalue)
        rows.append(
            {
                "judge": judge,
                "n": len(v),
                "correct": sum(v),
                "accuracy": sum(v) / len(v),
                "pvalue": p,
                "passes": p < design.qc_alpha,
                "excluded": judge in excluded,
            }
        )
    return rows


def ranking_item_key(original_id: int, candidates) -> tuple[int, tuple[int, ...]]:
    """A set as every judge of it shares it: its original and its candidates in id order (each
    judge sees them in their own screen order)."""
    return (original_id, tuple(sorted(candidates)))


def ranking_per_set(*, study: Study, done: bool) -> dict[tuple[int, tuple[int, ...]], int]:
    """Set (:func:`ranking_item_key`) → how many judges hold it (``done``: have ranked it)."""
    items = RankingItem.objects.filter(assignment__study=study)
    if done:
        items = items.filter(done_at__isnull=False)
    out: Counter[tuple[int, tuple[int, ...]]] = Counter()
    for original_id, candidates in items.values_list("original_id", "candidates").iterator(chunk_size=5000):
        out[ranking_item_key(original_id, candidates)] += 1
    return dict(out)


def ranking_rated_per_system(*, study: Study) -> dict[str, int]:
    """System name → latest rankings its candidates were ranked in."""
    names = {pk: row[0] for pk, row in _candidate_rows(study).items()}
    out: Counter[str] = Counter()
    for candidates in RankingItem.objects.filter(assignment__study=study, done_at__isnull=False).values_list(
        "candidates", flat=True
    ):
        out.update(names[c] for c in candidates)
    return dict(out)


def ranking_export_questions(*, study: Study) -> list[str]:
    """The answers of a ranked candidate in the tidy and wide CSVs: its rank, and its score when asked."""
    return ["rank", "score"] if JudgingDesign.objects.get(study=study).ranking_scores else ["rank"]


def ranking_export_answers(*, study: Study) -> Iterator[ExportAnswer]:
    """Every ranked candidate of every latest ranking (screened-out judges left out) as the tidy
    and wide CSVs write it: its rank in the set (1 = best; tied candidates share their mid-rank)
    and its score when the design asks for scores. The item is the candidate within its set
    (``<candidate id>@<the set's candidate ids>``): one candidate may be ranked in two sets of
    its original, and every judge of a set shares the name."""
    cands = _candidate_rows(study)
    asks_scores = JudgingDesign.objects.get(study=study).ranking_scores
    for j in _latest(study).exclude(item__assignment__screened_out_at__isnull=False):
        groups = [g if isinstance(g, list) else [g] for g in j.groups]
        mid = midranks([[str(c) for c in g] for g in groups])
        members = "+".join(str(c) for c in sorted(j.item.candidates))
        for c in sorted(j.item.candidates):
            name, kind, text = cands[c]
            rank = mid[str(c)]
            values: dict = {"rank": int(rank) if float(rank).is_integer() else rank}
            if asks_scores:
                values["score"] = (j.scores or {}).get(str(c), "")
            yield ExportAnswer(
                judge=j.judge.username,
                item=f"{c}@{members}",
                original_id=j.item.original.external_id,
                system=name,
                control_kind=(CONTROL_KIND_OF_SYSTEM_KIND.get(kind) or "")
                if name.startswith(CONTROL_SYSTEM_PREFIX)
                else "",
                original=j.item.original.text,
                candidate=text,
                values=values,
                seconds=j.seconds,
                active_seconds=j.active_seconds,
                submitted_at=j.submitted_at,
                revision=j.revision,
            )


def ranking_pilot_frame(*, study: Study):
    """The latest rankings' 0–100 scores (judges excluded on the QC page left out) as the
    planner's pilot: the tidy judgments frame with the criterion ``score``, one row per scored
    candidate of a set (the item: the candidate within its set)."""
    cands = _candidate_rows(study)
    excluded = judges_excluded(study=study)
    rows = []
    for j in _latest(study):
        if j.judge.username in excluded:
            continue
        members = "+".join(str(c) for c in sorted(j.item.candidates))
        for c, value in (j.scores or {}).items():
            name = cands[int(c)][0]
            rows.append(
                (
                    j.judge.username,
                    f"{c}@{members}",
                    j.item.original.external_id,
                    name,
                    name.startswith(CONTROL_SYSTEM_PREFIX),
                    "score",
                    float(value),
                )
            )
    return pd.DataFrame.from_records(
        rows, columns=["judge", "item", "original", "system", "is_control", "criterion", "score"]
    )

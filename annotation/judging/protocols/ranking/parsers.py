"""Parse k-way ranking files (JSON Lines) without touching the DB.

One judge's ranking of the candidates of one original per line, best first, ties as
nested lists (:mod:`metrics.core.ranking.orders`)::

    {"judge": "j1", "original_id": "12", "ranking": ["human1", ["machine1", "machine2"], "machine3"],
     "scores": {"human1": 90, "machine1": 60, "machine2": 60, "machine3": 20}, "seconds": 41.5}

``scores`` (0–100 per ranked system, optional, as contrastive ESA's per-candidate scores)
and ``seconds`` are optional. ``set`` (an integer from 1, optional, 1 when absent) tells apart
the several sets one judge ranked of the same original (an original with more than k
candidates is ranked in several sets, :mod:`metrics.core.ranking.sets`): a judge ranks each
(original, set) once in a file. All or nothing: every problem is listed with its line and
column; the size is checked before anything is decoded.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from annotation.importing.fields import check_system_name, finite_number, short_repr, valid_judge_name
from annotation.importing.judgments import MAX_JUDGE_CHARS
from annotation.importing.reading import (
    MAX_FILE_BYTES,
    MAX_ISSUES,
    MAX_NAME_CHARS,
    ImportIssue,
    StudyImportError,
    jsonl_objects,
    upload_text,
)
from metrics.core.ranking.orders import groups_from_json

from ...enums import MAX_ITEM_SECONDS

__all__ = ["MAX_K", "ParsedRankings", "RankingRow", "parse_rankings_file"]

MAX_K = 20  # candidates in one ranking: studies use 3–6; more is a malformed file
ROW_KEYS = {"judge", "original_id", "set", "ranking", "scores", "seconds"}
MAX_SETS = 1000  # sets of one original for one judge: ⌈n / k⌉ plus one a control


@dataclass(frozen=True)
class RankingRow:
    line: int
    judge: str
    original_id: str
    groups: tuple[tuple[str, ...], ...]
    scores: dict[str, float]
    seconds: float | None = None
    set_number: int = 1


@dataclass
class ParsedRankings:
    filename: str
    rows: list[RankingRow] = field(default_factory=list)


def parse_rankings_file(
    data: bytes,
    *,
    filename: str,
    max_bytes: int = MAX_FILE_BYTES,
    k: int | None = None,
    systems: Mapping[str, set[str]] | None = None,
) -> ParsedRankings:
    """Parse a ranking file (the module docstring); all or nothing.

    ``k`` the study's number of candidates per ranking (any 2–``MAX_K`` when None);
    ``systems`` maps each original_id of the study to the systems of its candidates: every
    ranking must then rank exactly the candidates of a known original. Raises
    :class:`StudyImportError` listing every problem with its line and column.
    """
    text = upload_text(data, filename, max_bytes)
    issues: list[ImportIssue] = []
    parsed = ParsedRankings(filename)
    seen: dict[tuple[str, str, int], int] = {}  # (judge, original id, set) -> line
    for line, obj in jsonl_objects(text, issues):
        if len(issues) >= MAX_ISSUES:
            break
        before = len(issues)

        def bad(message: str, column: str | None = None, line: int = line) -> None:
            issues.append(ImportIssue(message, line=line, column=column))

        unknown = sorted(set(obj) - ROW_KEYS)
        if unknown:
            bad(f"unknown key(s) {', '.join(unknown)}; a line has {', '.join(sorted(ROW_KEYS))}")
        judge = obj.get("judge")
        if not valid_judge_name(judge, MAX_JUDGE_CHARS):
            bad(f"a judge name is 1–{MAX_JUDGE_CHARS} letters, digits or @ . + - _", "judge")
        original_id: Any = obj.get("original_id")
        if isinstance(original_id, int) and not isinstance(original_id, bool):
            original_id = str(original_id)
        if not isinstance(original_id, str) or not original_id.strip() or len(original_id) > MAX_NAME_CHARS:
            bad(f"an original_id is a string of 1–{MAX_NAME_CHARS} characters", "original_id")
            original_id = ""
        original_id = original_id.strip()
        groups: tuple[tuple[str, ...], ...] = ()
        raw = obj.get("ranking")
        if isinstance(raw, list) and len(raw) > MAX_K:
            bad(f"{len(raw)} places; a ranking has at most {MAX_K}", "ranking")
        else:
            try:
                groups = groups_from_json(raw)
            except ValueError as exc:
                bad(str(exc), "ranking")
        ranked = [s for g in groups for s in g]
        for name in ranked:
            check_system_name(name, line, issues)
        if groups and k is not None and len(ranked) != k:
            bad(f"ranks {len(ranked)} candidates; this study ranks {k} at once", "ranking")
        if groups and systems is not None and original_id:
            expected = systems.get(original_id)
            if expected is None:
                bad(f"the study has no original {original_id!r}", "original_id")
            elif set(ranked) != set(expected):
                extra, absent = sorted(set(ranked) - set(expected)), sorted(set(expected) - set(ranked))
                bad(
                    "ranks "
                    + "; ".join(
                        p
                        for p in (
                            f"systems the original has no candidate of: {', '.join(extra)}" if extra else "",
                            f"not the candidates of {', '.join(absent)}" if absent else "",
                        )
                        if p
                    ),
                    "ranking",
                )
        scores: dict[str, float] = {}
        raw_scores = obj.get("scores")
        if raw_scores is not None:
            if not isinstance(raw_scores, dict):
                bad("scores is an object from system to a 0–100 score", "scores")
            else:
                for name, value in raw_scores.items():
                    number = finite_number(value, 0, 100)
                    if name not in ranked:
                        bad(f"a score for {short_repr(name)}, which this line does not rank", f"scores.{name[:40]}")
                    elif number is None:
                        bad(f"a score is a number from 0 to 100, not {short_repr(value)}", f"scores.{name[:40]}")
                    else:
                        scores[name] = number
        seconds = obj.get("seconds")
        if seconds is not None:
            seconds = finite_number(seconds, 0, MAX_ITEM_SECONDS)
            if seconds is None:
                bad(f"must be a number of seconds from 0 to {MAX_ITEM_SECONDS} (one day)", "seconds")
        set_number = obj.get("set", 1)
        if isinstance(set_number, bool) or not isinstance(set_number, int) or not 1 <= set_number <= MAX_SETS:
            bad(f"a set is a whole number from 1 to {MAX_SETS}, not {short_repr(set_number)}", "set")
        if len(issues) > before:
            continue
        key = (judge, original_id, set_number)
        if key in seen:
            bad(
                f"judge {judge!r} already ranked set {set_number} of original {original_id!r} on line {seen[key]} "
                '(several sets of one original are told apart by "set")',
                "set",
            )
            continue
        seen[key] = line
        parsed.rows.append(RankingRow(line, judge, original_id, groups, scores, seconds, set_number))
    if issues:
        raise StudyImportError(filename, issues)
    if not parsed.rows:
        raise StudyImportError(filename, [ImportIssue("holds no rankings")])
    return parsed

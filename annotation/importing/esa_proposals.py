"""Parse a file of proposed ESA spans (JSON Lines) without touching the DB.

The spans an ESA study shows pre-filled when its design pre-fills from an imported file
(``esa_prefill = "imported"``): one candidate per line, keyed as the ESA export keys it
(``original_id``, ``system``), its proposals in ``error_spans`` as in a span file
(:mod:`.esa_spans`: ``start``/``end`` in code points, end exclusive, or ``offsets:
"utf16"``; ``side``, ``severity``, ``category``, the ``[missing]`` marker)::

    {"original_id": "12", "system": "human1",
     "error_spans": [{"side": "candidate", "start": 8, "end": 14, "severity": "minor", "category": "addition"}]}

A line of the ESA export may be given as it is (its ``judge``, ``score``, ``seconds`` and
``proposed_spans`` are then not used: its ``error_spans`` become the proposals), so one
study's or one tool's annotations can be proposed to the judges of another study. One
line per candidate. All or nothing: every problem is listed with its line and column; the
size is checked before anything is decoded; offsets are checked against the study's texts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from metrics.core.spans.model import ErrorSpan

from ._shared import short_repr
from .esa_spans import MAX_FILE_BYTES, OFFSET_UNITS, Line, spans_read, text_read
from .reading import MAX_ISSUES, MAX_NAME_CHARS, ImportIssue, StudyImportError, decode_utf8, jsonl_objects

__all__ = ["EsaProposalRow", "ParsedEsaProposals", "parse_esa_proposals_file"]

ROW_KEYS = {"original_id", "system", "error_spans", "offsets", "original", "candidate"}
#: Keys of an ESA export line that a proposal file may carry and that are not used.
UNUSED_KEYS = {"judge", "score", "seconds", "proposed_spans"}


@dataclass(frozen=True)
class EsaProposalRow:
    """The proposals for one candidate, offsets in code points of the study's texts."""

    line: int
    original_id: str
    system: str
    spans: tuple[ErrorSpan, ...]


@dataclass
class ParsedEsaProposals:
    filename: str
    rows: list[EsaProposalRow] = field(default_factory=list)


def _name(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS:
        return ""
    return value.strip()


def parse_esa_proposals_file(
    data: bytes,
    *,
    filename: str,
    texts: Mapping[tuple[str, str], tuple[str, str]],
    categories: Sequence[str] | None = None,
    max_bytes: int = MAX_FILE_BYTES,
) -> ParsedEsaProposals:
    """Parse a proposal file (the module docstring); all or nothing.

    ``texts`` maps (original_id, system) of each candidate of the study to its (original,
    candidate) texts: every line must name one, and every span must lie on whole characters
    of them; ``categories`` the categories a span may carry (any when None). Raises
    :class:`StudyImportError` listing every problem with its line and column.
    """
    if len(data) > max_bytes:
        raise StudyImportError(filename, [ImportIssue(f"the file is {len(data):,} bytes; the limit is {max_bytes:,}")])
    text = decode_utf8(data, filename)
    issues: list[ImportIssue] = []
    parsed = ParsedEsaProposals(filename)
    seen: dict[tuple[str, str], int] = {}
    for lineno, obj in jsonl_objects(text, issues):
        if len(issues) >= MAX_ISSUES:
            break
        ln = Line(lineno, issues)
        unknown = sorted(set(obj) - ROW_KEYS - UNUSED_KEYS)
        if unknown:
            ln.bad(f"unknown key(s) {', '.join(unknown)}; a line has {', '.join(sorted(ROW_KEYS))}")
            continue
        unit = obj.get("offsets", "default")
        if unit != "default" and unit not in OFFSET_UNITS:
            ln.bad(f"offsets is {' or '.join(OFFSET_UNITS)}, not {short_repr(unit)}", "offsets")
            continue
        original_id, system = _name(obj.get("original_id")), _name(obj.get("system"))
        if not original_id:
            ln.bad(f"an original_id is a string of 1–{MAX_NAME_CHARS} characters", "original_id")
        if not system:
            ln.bad(f"a system is a string of 1–{MAX_NAME_CHARS} characters", "system")
        if "error_spans" not in obj:
            ln.bad("is missing (an empty list proposes nothing)", "error_spans")
        if not ln.ok:
            continue
        known = texts.get((original_id, system))
        if known is None:
            ln.bad(f"the study has no candidate of system {system!r} for original {original_id!r}", "original_id")
            continue
        for name, given, stored in (
            ("original", text_read(obj.get("original"), "original", ln), known[0]),
            ("candidate", text_read(obj.get("candidate"), "candidate", ln), known[1]),
        ):
            if given is not None and given != stored:
                ln.bad(f"this {name} text differs from the study's", name)
        if not ln.ok:
            continue
        spans = spans_read(
            obj["error_spans"], "error_spans", {"original": known[0], "candidate": known[1]}, unit, categories, ln
        )
        if not ln.ok:
            continue
        key = (original_id, system)
        if key in seen:
            ln.bad(
                f"original {original_id!r} of system {system!r} already has proposals on line {seen[key]}",
                "original_id",
            )
            continue
        seen[key] = lineno
        parsed.rows.append(EsaProposalRow(lineno, original_id, system, spans))
    if issues:
        raise StudyImportError(filename, issues)
    if not parsed.rows:
        raise StudyImportError(filename, [ImportIssue("holds no proposals")])
    return parsed

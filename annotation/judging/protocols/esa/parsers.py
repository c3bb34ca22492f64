"""Parse the ESA protocol's import files (JSON Lines) without touching the DB: span files of
judgments made elsewhere (:func:`parse_esa_spans_file`) and files of proposed spans
(:func:`parse_esa_proposals_file`), which share the span shapes read here.

**Span files.** Two line shapes, which may be mixed in one file (docs/protocols-esa-ranking.md):

* **paraeval's**: one judge's annotation of one candidate per line::

    {"judge": "j1", "original_id": "12", "system": "human1", "score": 70,
     "error_spans": [{"side": "candidate", "start": 8, "end": 14, "severity": "minor"},
                     {"side": "original", "start": 0, "end": 3, "severity": "major", "category": "omission"},
                     {"missing": true, "severity": "minor"}]}

  ``start``/``end`` are code points, end exclusive; optional ``proposed_spans`` (what was
  pre-filled), ``seconds``, ``original``/``candidate`` (the texts, to check offsets against)
  and ``offsets``: ``"codepoint"`` or ``"utf16"`` (JavaScript string indices); without it,
  ``start``/``end`` are code points and ``start_i``/``end_i`` UTF-16 units (below).
* **Pearmut's output** (a line with ``user_id``, ``item`` and ``annotation``): every
  ``annotation[k][model]`` becomes a row for ``item[k]["item_id"]`` and that model, with
  the texts from ``src`` and ``tgt[model]`` and the pre-filled ``item[k]["error_spans"][model]``.

Spans may also be written as Appraise and Pearmut write them: ``start_i``/``end_i`` with an
**inclusive** end, in UTF-16 code units (both pages split the text with JavaScript's
``split("")``), ``"missing"`` (Appraise) or the index just past the text (Pearmut) for the
``[missing]`` marker, and ``error_type`` for the category.

**Control lines are skipped.** A line (or a Pearmut model) whose system starts with
``control:`` is one of paraeval's control candidates, as paraeval's own export writes them:
paraeval builds a study's controls itself (at opening, from its seed), so such a line is
recognised, counted in :attr:`ParsedEsaSpans.controls_skipped` and not read further, so that
an export imports again as it is.

All or nothing: every problem is listed with its line and a column that names the field
(``error_spans[2].end``); the size is checked before anything is decoded. UTF-16 offsets
are converted to code points with the texts (from the line or from ``texts``, which the
importing service fills from the study); a span that splits a character, an emoji or a
combining mark is refused (:func:`metrics.core.spans.offsets.span_problem`).

**Proposal files.** The spans an ESA study shows pre-filled when its design pre-fills
from an imported file (``esa_prefill = "imported"``): one candidate per line, keyed as the ESA export keys it
(``original_id``, ``system``), its proposals in ``error_spans`` as in a span file
(above: ``start``/``end`` in code points, end exclusive, or ``offsets:
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

from annotation.importing.fields import check_system_name, finite_number, short_repr, valid_judge_name
from annotation.importing.judgments import MAX_JUDGE_CHARS
from annotation.importing.reading import (
    MAX_FIELD_CHARS,
    MAX_FILE_BYTES,
    MAX_ISSUES,
    MAX_NAME_CHARS,
    RESERVED_SYSTEM_PREFIX,
    ImportIssue,
    StudyImportError,
    jsonl_objects,
    upload_text,
)
from metrics.core.spans.model import SEVERITIES, ErrorSpan
from metrics.core.spans.offsets import span_problem, utf16_length, utf16_to_codepoint

from ...enums import MAX_ITEM_SECONDS

__all__ = [
    "MAX_SPANS",
    "EsaProposalRow",
    "EsaSpanRow",
    "ParsedEsaProposals",
    "ParsedEsaSpans",
    "parse_esa_proposals_file",
    "parse_esa_spans_file",
]

MAX_SPANS = 200  # per annotation: far beyond any real judge, small enough to bound the work
MAX_CATEGORY_CHARS = 100
ROW_KEYS = {
    "judge",
    "original_id",
    "system",
    "score",
    "error_spans",
    "proposed_spans",
    "seconds",
    "offsets",
    "original",
    "candidate",
}
SPAN_KEYS = {"side", "start", "end", "start_i", "end_i", "severity", "category", "error_type", "missing"}
OFFSET_UNITS = ("codepoint", "utf16")


@dataclass(frozen=True)
class EsaSpanRow:
    """One judge's annotation of one candidate, offsets in code points of the texts."""

    line: int
    judge: str
    original_id: str
    system: str
    score: float | None
    spans: tuple[ErrorSpan, ...]
    proposed: tuple[ErrorSpan, ...] = ()
    seconds: float | None = None
    original_text: str | None = None
    candidate_text: str | None = None


@dataclass
class ParsedEsaSpans:
    filename: str
    rows: list[EsaSpanRow] = field(default_factory=list)
    controls_skipped: int = 0  # annotations of paraeval's control candidates (the module docstring)


def is_control_system(name: object) -> bool:
    """Whether a line's system names one of paraeval's control candidates (``control:…``)."""
    return isinstance(name, str) and name.strip().lower().startswith(RESERVED_SYSTEM_PREFIX)


class Line:
    """The issues of one line, with the column path prefix of the part being read."""

    def __init__(self, line: int, issues: list[ImportIssue]):
        self.line = line
        self.issues = issues
        self.ok = True

    def bad(self, message: str, column: str | None = None) -> None:
        self.ok = False
        self.issues.append(ImportIssue(message, line=self.line, column=column))


def _offset(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def spans_read(
    raw: Any, where: str, texts: dict[str, str | None], unit: str, categories: Sequence[str] | None, ln: Line
) -> tuple[ErrorSpan, ...]:
    if not isinstance(raw, list):
        ln.bad("must be a list of spans", where)
        return ()
    if len(raw) > MAX_SPANS:
        ln.bad(f"{len(raw)} spans; an annotation may have at most {MAX_SPANS}", where)
        return ()
    out: list[ErrorSpan] = []
    for k, obj in enumerate(raw):
        col = f"{where}[{k}]"
        if not isinstance(obj, dict):
            ln.bad("a span is an object with start, end and severity", col)
            continue
        unknown = sorted(set(obj) - SPAN_KEYS)
        if unknown:
            ln.bad(f"unknown key(s) {', '.join(unknown)}; a span has {', '.join(sorted(SPAN_KEYS))}", col)
            continue
        span = _span(obj, col, texts, unit, categories, ln)
        if span is not None:
            out.append(span)
    placed = sorted((s for s in out if not s.missing), key=lambda s: (s.side, s.start))
    for a, b in zip(placed, placed[1:]):
        if a.side == b.side and b.start < a.end:
            ln.bad(
                f"spans [{a.start}, {a.end}) and [{b.start}, {b.end}) of the {a.side} overlap; "
                "mark one span or two that do not overlap",
                where,
            )
    if sum(s.missing for s in out) > 1:
        ln.bad("the [missing] marker is marked more than once", where)
    return tuple(out)


def _span(
    obj: dict, col: str, texts: dict[str, str | None], unit: str, categories: Sequence[str] | None, ln: Line
) -> ErrorSpan | None:
    severity = obj.get("severity")
    if not isinstance(severity, str) or severity.strip().lower() not in SEVERITIES:
        ln.bad(f"severity must be {' or '.join(SEVERITIES)}, not {short_repr(severity)}", f"{col}.severity")
        return None
    severity = severity.strip().lower()
    category = obj.get("category", obj.get("error_type"))
    if category is not None:
        if not isinstance(category, str) or len(category) > MAX_CATEGORY_CHARS:
            ln.bad(f"a category is a string of at most {MAX_CATEGORY_CHARS} characters", f"{col}.category")
            return None
        category = category.strip() or None
        if category and categories is not None and category not in categories:
            ln.bad(
                f"unknown category {short_repr(category)}; the study's are {', '.join(categories)}", f"{col}.category"
            )
            return None
    side = obj.get("side", "candidate")
    if side not in ("candidate", "original"):
        ln.bad(f"side must be candidate or original, not {short_repr(side)}", f"{col}.side")
        return None
    inclusive = "start_i" in obj or "end_i" in obj
    if inclusive and ("start" in obj or "end" in obj):
        ln.bad("give start/end (end exclusive) or start_i/end_i (end inclusive), not both", col)
        return None
    s_key, e_key = ("start_i", "end_i") if inclusive else ("start", "end")
    if unit == "default":  # Appraise and Pearmut write start_i/end_i in JavaScript's UTF-16 units
        unit = "utf16" if inclusive else "codepoint"
    start, end = obj.get(s_key), obj.get(e_key)
    text = texts.get(side)
    missing = obj.get("missing") is True or start == "missing" or end == "missing"
    if not missing and inclusive and side == "candidate" and text is not None and unit == "utf16":
        missing = start == end == utf16_length(text)  # Pearmut's [missing] token follows the text
    if missing:
        if side != "candidate" or not (obj.get("missing") is True or start == end):
            ln.bad("the [missing] marker is a span of its own on the candidate side", col)
            return None
        return ErrorSpan.missing_marker(severity, category)
    if "missing" in obj and obj["missing"] is not False:
        ln.bad("missing is true or false", f"{col}.missing")
        return None
    start_n, end_n = _offset(start), _offset(end)
    if start_n is None or end_n is None:
        ln.bad(f"{s_key} and {e_key} must be whole numbers ≥ 0, got {short_repr(start)} and {short_repr(end)}", col)
        return None
    if inclusive:
        end_n += 1
    if unit == "utf16":
        if text is None:
            ln.bad(
                f'UTF-16 offsets need the text of the {side} to be converted: add "{side}" to the line '
                "or import into the study",
                col,
            )
            return None
        try:
            start_n, end_n = utf16_to_codepoint(text, start_n), utf16_to_codepoint(text, end_n)
        except ValueError as exc:
            ln.bad(str(exc), col)
            return None
    if text is not None:
        problem = span_problem(text, start_n, end_n)
        if problem:
            ln.bad(problem, col)
            return None
    elif end_n <= start_n:
        ln.bad(f"the span [{start_n}, {end_n}) is empty", col)
        return None
    return ErrorSpan(side, start_n, end_n, severity, category)


def text_read(value: Any, col: str, ln: Line) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > MAX_FIELD_CHARS:
        ln.bad(f"a text of 1–{MAX_FIELD_CHARS:,} characters", col)
        return None
    return value


def _row(
    obj: dict,
    ln: Line,
    *,
    judge: Any,
    original_id: Any,
    system: Any,
    prefix: str,
    judge_col: str,
    texts: Mapping[tuple[str, str], tuple[str, str]] | None,
    categories: Sequence[str] | None,
    line_texts: tuple[Any, Any],
    proposed_raw: Any,
    unit: str,
    seconds: Any,
) -> EsaSpanRow | None:
    start_issues = len(ln.issues)
    if not valid_judge_name(judge, MAX_JUDGE_CHARS):
        ln.bad(f"a judge name is 1–{MAX_JUDGE_CHARS} letters, digits or @ . + - _", judge_col)
    if isinstance(original_id, int) and not isinstance(original_id, bool):
        original_id = str(original_id)
    if not isinstance(original_id, str) or not original_id.strip() or len(original_id) > MAX_NAME_CHARS:
        ln.bad(
            f"an original_id is a string of 1–{MAX_NAME_CHARS} characters",
            "original_id" if judge_col == "judge" else f"{prefix.split('.')[0].replace('annotation', 'item')}.item_id",
        )
        original_id = ""
    original_id = original_id.strip()
    if not isinstance(system, str) or not system.strip():
        ln.bad("a system name is a non-empty string", f"{prefix}system" if prefix else "system")
        system = ""
    system = system.strip()
    if system and not check_system_name(system, ln.line, ln.issues):
        ln.ok = False
        system = ""  # no further checks against the study's candidates
    original = text_read(line_texts[0], "original", ln)
    candidate = text_read(line_texts[1], "candidate", ln)
    if texts is not None and original_id and system:
        known = texts.get((original_id, system))
        if known is None:
            ln.bad(f"the study has no candidate of system {system!r} for original {original_id!r}", "original_id")
        else:
            for name, given, stored in (("original", original, known[0]), ("candidate", candidate, known[1])):
                if given is not None and given != stored:
                    ln.bad(f"this {name} text differs from the study's", name)
            original, candidate = known
    score = obj.get("score")
    if score is not None:
        score = finite_number(score, 0, 100)
        if score is None:
            ln.bad(
                f"the score is a number from 0 to 100 (or null), not {short_repr(obj.get('score'))}", f"{prefix}score"
            )
    secs = None
    if seconds is not None:
        secs = finite_number(seconds, 0, MAX_ITEM_SECONDS)
        if secs is None:
            ln.bad(f"must be a number of seconds from 0 to {MAX_ITEM_SECONDS} (one day)", "seconds")
    if len(ln.issues) > start_issues:
        return None
    side_texts = {"original": original, "candidate": candidate}
    spans = spans_read(obj.get("error_spans"), f"{prefix}error_spans", side_texts, unit, categories, ln)
    proposed = (
        () if proposed_raw is None else spans_read(proposed_raw, "proposed_spans", side_texts, unit, categories, ln)
    )
    if len(ln.issues) > start_issues:
        return None
    return EsaSpanRow(ln.line, judge, original_id, system, score, spans, proposed, secs, original, candidate)


def _pearmut_rows(obj: dict, ln: Line, texts, categories, unit: str, parsed: ParsedEsaSpans) -> list[EsaSpanRow]:
    items, annotations = obj.get("item"), obj.get("annotation")
    if not isinstance(items, list) or not isinstance(annotations, list) or len(items) != len(annotations):
        ln.bad("a Pearmut line has item and annotation lists of the same length", "annotation")
        return []
    rows = []
    for k, (item, ann) in enumerate(zip(items, annotations)):
        if not isinstance(item, dict) or not isinstance(ann, dict) or not isinstance(item.get("tgt"), dict):
            ln.bad("each item is an object with tgt, each annotation an object by model", f"item[{k}]")
            continue
        raw_prefilled = item.get("error_spans")
        prefilled: dict = raw_prefilled if isinstance(raw_prefilled, dict) else {}
        for model, response in ann.items():
            if is_control_system(model):
                parsed.controls_skipped += 1
                continue
            if not isinstance(response, dict):
                ln.bad(
                    "an annotation of a model is an object with score and error_spans", f"annotation[{k}].{model[:40]}"
                )
                continue
            row = _row(
                response,
                ln,
                judge=obj.get("user_id"),
                original_id=item.get("item_id"),
                system=model,
                prefix=f"annotation[{k}].{model[:40]}.",
                judge_col="user_id",
                texts=texts,
                categories=categories,
                line_texts=(item.get("src"), item["tgt"].get(model)),
                proposed_raw=prefilled.get(model),
                unit=unit,
                seconds=None,
            )
            if row is not None:
                rows.append(row)
    return rows


def parse_esa_spans_file(
    data: bytes,
    *,
    filename: str,
    max_bytes: int = MAX_FILE_BYTES,
    texts: Mapping[tuple[str, str], tuple[str, str]] | None = None,
    categories: Sequence[str] | None = None,
) -> ParsedEsaSpans:
    """Parse an ESA span file (the module docstring); all or nothing.

    ``texts`` maps (original_id, system) to the study's (original, candidate) texts: offsets
    are then checked against them and every line must name a candidate of the study;
    ``categories`` the study's span categories (any category when None). Raises
    :class:`StudyImportError` listing every problem (at most ``MAX_ISSUES``) with its line
    and column. Nothing here touches the database.
    """
    text = upload_text(data, filename, max_bytes)
    issues: list[ImportIssue] = []
    parsed = ParsedEsaSpans(filename)
    seen: dict[tuple[str, str, str], int] = {}
    for lineno, obj in jsonl_objects(text, issues):
        if len(issues) >= MAX_ISSUES:
            break
        ln = Line(lineno, issues)
        unit = obj.get("offsets", "default")
        if unit != "default" and unit not in OFFSET_UNITS:
            ln.bad(f"offsets is {' or '.join(OFFSET_UNITS)}, not {short_repr(unit)}", "offsets")
            continue
        if {"user_id", "item", "annotation"} <= obj.keys():
            rows = _pearmut_rows(obj, ln, texts, categories, unit, parsed)
        elif is_control_system(obj.get("system")):
            parsed.controls_skipped += 1
            continue
        else:
            unknown = sorted(set(obj) - ROW_KEYS)
            if unknown:
                ln.bad(
                    f"unknown key(s) {', '.join(unknown)}; a line has {', '.join(sorted(ROW_KEYS))} "
                    "(or is a Pearmut output line)"
                )
                continue
            if "error_spans" not in obj:
                ln.bad("is missing (an empty list when the judge marked nothing)", "error_spans")
                continue
            row = _row(
                obj,
                ln,
                judge=obj.get("judge"),
                original_id=obj.get("original_id"),
                system=obj.get("system"),
                prefix="",
                judge_col="judge",
                texts=texts,
                categories=categories,
                line_texts=(obj.get("original"), obj.get("candidate")),
                proposed_raw=obj.get("proposed_spans"),
                unit=unit,
                seconds=obj.get("seconds"),
            )
            rows = [row] if row is not None else []
        for row in rows:
            key = (row.judge, row.original_id, row.system)
            if key in seen:
                ln.bad(
                    f"judge {row.judge!r} already annotated original {row.original_id!r} of system "
                    f"{row.system!r} on line {seen[key]}"
                )
                continue
            seen[key] = lineno
            parsed.rows.append(row)
    if issues:
        raise StudyImportError(filename, issues)
    if not parsed.rows:
        only = " (only annotations of paraeval's controls, which are skipped)" if parsed.controls_skipped else ""
        raise StudyImportError(filename, [ImportIssue(f"holds no annotations{only}")])
    return parsed


# --------------------------------------------------------------------------- proposal files

PROPOSAL_ROW_KEYS = {"original_id", "system", "error_spans", "offsets", "original", "candidate"}
#: Keys of an ESA export line that a proposal file may carry and that are not used.
PROPOSAL_UNUSED_KEYS = {"judge", "score", "seconds", "proposed_spans"}


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
    text = upload_text(data, filename, max_bytes)
    issues: list[ImportIssue] = []
    parsed = ParsedEsaProposals(filename)
    seen: dict[tuple[str, str], int] = {}
    for lineno, obj in jsonl_objects(text, issues):
        if len(issues) >= MAX_ISSUES:
            break
        ln = Line(lineno, issues)
        unknown = sorted(set(obj) - PROPOSAL_ROW_KEYS - PROPOSAL_UNUSED_KEYS)
        if unknown:
            ln.bad(f"unknown key(s) {', '.join(unknown)}; a line has {', '.join(sorted(PROPOSAL_ROW_KEYS))}")
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

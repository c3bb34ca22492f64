"""Parse judgments files without touching the DB.

Long format, one row per (judge, item, criterion): judgments collected elsewhere (a
previous paraeval study, MTurk, ParaBank) brought into a study whose design describes
the criteria and scales. Parsed here without the database (values against the scales,
names, numbers); the judging service then matches originals and candidates and writes
everything in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.judging.enums import MAX_ITEM_SECONDS

from .fields import check_system_name, iter_rows
from .reading import MAX_FIELD_CHARS, MAX_ISSUES, ImportIssue, StudyImportError, decode_utf8, detect_format

JUDGMENT_REQUIRED = ("judge", "original_id", "criterion", "value")
JUDGMENT_WHICH = ("system", "systems", "candidate")  # at least one
JUDGMENT_OPTIONAL = ("seconds", "judgment")
JUDGMENT_KNOWN = JUDGMENT_REQUIRED + JUDGMENT_WHICH + JUDGMENT_OPTIONAL
#: The columns of paraeval's own tidy export (annotation.judging.selectors.export_rows) that the
#: import reads beside the long format's, so that an export imports again as it is: ``score``
#: is the value, ``is_control`` rows are skipped and counted (each study builds its own
#: controls), and the rest describe the judgment the import writes anew.
TIDY_EXPORT_READ = ("score", "is_control")
TIDY_EXPORT_IGNORED = (
    "study",
    "item",
    "control_kind",
    "active_seconds",
    "submitted_at",
    "revision",
    "judge_excluded",
    "z",
)
MAX_JUDGE_CHARS = 100


@dataclass(frozen=True)
class JudgmentRow:
    line: int
    judge: str
    original_id: str
    systems: tuple[str, ...]  # empty: match the candidate by its text
    candidate: str  # empty: match by system
    criterion: str
    value: int | float | None  # None: no criterion or value given (and in rows_to_match)
    seconds: float | None
    judgment: str = ""  # rows sharing it (with the judge and candidate) form one judgment


@dataclass
class ParsedJudgments:
    filename: str
    format: str
    rows: list[JudgmentRow] = field(default_factory=list)
    #: Rows whose judgment is wrong (criterion, value, seconds) but whose candidate is named well:
    #: the import still matches them against the study, so every problem is listed at once.
    rows_to_match: list[JudgmentRow] = field(default_factory=list)
    #: Control rows of a tidy export, skipped (their candidates are the exporting study's own).
    controls_skipped: int = 0


def parse_judgments_file(
    data: bytes,
    *,
    filename: str,
    criteria: list[dict],
    fmt: str | None = None,
    max_bytes: int | None = None,
) -> ParsedJudgments:
    """Parse a long-format judgments file against a design's ``criteria``; all or nothing.

    Columns: ``judge``, ``original_id``, ``criterion`` (a slug of the design), ``value``
    (on that criterion's scale: :func:`annotation.judging.scales.value_clean`, category
    names allowed), and ``system`` (one name), ``systems`` (names separated by spaces:
    one candidate judged for several systems, as ParaBank's ``sys_id``) and/or
    ``candidate`` (the text; alone it matches the original's candidates with that text);
    optional ``seconds``, and ``judgment``: an id shared by the rows of one judgment
    (without it, a judge's rows for a candidate form one judgment until a criterion
    repeats). Raises :class:`StudyImportError` listing every problem with its line and
    column. Nothing here touches the database.
    """
    from annotation.judging import scales  # the scales module is plain Python

    if max_bytes is not None and len(data) > max_bytes:
        raise StudyImportError(filename, [ImportIssue(f"the file is {len(data):,} bytes; the limit is {max_bytes:,}")])
    fmt = detect_format(filename, fmt)
    text = decode_utf8(data, filename)
    issues: list[ImportIssue] = []
    scale_of = {c["slug"]: c["scale"] for c in criteria}
    rows_iter = iter_rows(text, fmt, filename, issues)
    columns = next(rows_iter)
    # paraeval's tidy export: its score is the value; its own columns are known
    tidy = "value" not in columns and "score" in columns
    known = JUDGMENT_KNOWN + (TIDY_EXPORT_READ + TIDY_EXPORT_IGNORED if tidy else ())
    missing = [c for c in JUDGMENT_REQUIRED if c not in columns and not (tidy and c == "value")]
    if missing:
        issues.append(
            ImportIssue(
                f"missing column(s): {', '.join(missing)} (a judgments file needs "
                f"{', '.join(JUDGMENT_REQUIRED)} and one of {', '.join(JUDGMENT_WHICH)})",
                line=1,
            )
        )
    if not any(c in columns for c in JUDGMENT_WHICH):
        issues.append(
            ImportIssue(f"a judgments file needs a column naming the candidate: {', '.join(JUDGMENT_WHICH)}", line=1)
        )
    unknown = [c for c in columns if c and c not in known]
    if unknown:
        issues.append(
            ImportIssue(f"unknown column(s): {', '.join(unknown)}; the columns are {', '.join(JUDGMENT_KNOWN)}", line=1)
        )
    if issues:
        raise StudyImportError(filename, issues)
    parsed = ParsedJudgments(filename=filename, format=fmt)
    for line, row in rows_iter:
        if len(issues) >= MAX_ISSUES:
            break
        cells = {k: (v or "").strip() for k, v in row.items()}
        if tidy:
            if cells.get("is_control", "").lower() in ("true", "1", "yes"):
                parsed.controls_skipped += 1
                continue
            cells["value"] = cells.get("score", "")
        ok = True
        n_before = len(issues)
        for col in JUDGMENT_REQUIRED:
            if not cells.get(col):
                issues.append(ImportIssue("is empty", line=line, column="score" if tidy and col == "value" else col))
                ok = False
        judge = cells.get("judge", "")
        if judge and (len(judge) > MAX_JUDGE_CHARS or not all(ch.isalnum() or ch in "@.+-_" for ch in judge)):
            issues.append(
                ImportIssue(
                    f"a judge name is 1–{MAX_JUDGE_CHARS} letters, digits or @ . + - _", line=line, column="judge"
                )
            )
            ok = False
        systems = tuple(cells.get("systems", "").split()) or ((cells["system"],) if cells.get("system") else ())
        if cells.get("system") and cells.get("systems"):
            issues.append(ImportIssue("give either system or systems, not both", line=line, column="systems"))
            ok = False
        for name in systems:
            ok = check_system_name(name, line, issues) and ok
        candidate = row.get("candidate", "") or ""
        candidate = candidate.strip()
        if not systems and not candidate:
            issues.append(
                ImportIssue(
                    "name the candidate: a system (or systems) or its text",
                    line=line,
                    column="system" if "system" in columns else "candidate",
                )
            )
            ok = False
        if len(candidate) > MAX_FIELD_CHARS:
            issues.append(ImportIssue(f"longer than {MAX_FIELD_CHARS:,} characters", line=line, column="candidate"))
            ok = False
        names_ok = ok  # judge, original and candidate are well formed: the row can be matched
        crit = cells.get("criterion", "")
        value = None
        if crit and crit not in scale_of:
            issues.append(
                ImportIssue(
                    f"unknown criterion {crit!r}; the study's criteria are {', '.join(scale_of)}",
                    line=line,
                    column="criterion",
                )
            )
            ok = False
        elif crit and cells.get("value"):
            try:
                value = scales.value_clean(scale_of[crit], cells["value"], from_text=True)
            except ValueError as exc:
                issues.append(ImportIssue(f"{exc} (criterion {crit})", line=line, column="score" if tidy else "value"))
                ok = False
        seconds = None
        if cells.get("seconds"):
            try:
                seconds = float(cells["seconds"])
            except ValueError:
                seconds = -1.0
            if not 0 <= seconds <= MAX_ITEM_SECONDS:  # NaN and infinities fail too
                issues.append(
                    ImportIssue(
                        f"must be a number of seconds from 0 to {MAX_ITEM_SECONDS} (one day)",
                        line=line,
                        column="seconds",
                    )
                )
                ok = False
        if ok:
            parsed.rows.append(
                JudgmentRow(
                    line,
                    judge,
                    cells["original_id"],
                    systems,
                    candidate,
                    crit,
                    value,
                    seconds,
                    cells.get("judgment", ""),
                )
            )
        elif names_ok and len(issues) > n_before:
            parsed.rows_to_match.append(
                JudgmentRow(
                    line, judge, cells["original_id"], systems, candidate, crit, None, None, cells.get("judgment", "")
                )
            )
    if issues:
        error = StudyImportError(filename, issues)
        error.parsed = parsed  # type: ignore[attr-defined]  # for judgments_import_file's matching pass
        raise error
    if not parsed.rows:
        if parsed.controls_skipped:
            raise StudyImportError(
                filename,
                [
                    ImportIssue(
                        f"holds only control rows ({parsed.controls_skipped}); each study builds its own controls"
                    )
                ],
            )
        raise StudyImportError(filename, [ImportIssue("holds no judgments")])
    return parsed

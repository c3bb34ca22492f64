# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Parse study files (CSV, TSV, JSONL; long or wide layout) without touching the DB.

Parsing is separate from writing so that the same checks run behind all three
doors (CLI, upload form, API) and so that nothing is written unless the whole
file is valid. Every problem is reported with the file name, the line (1-based,
the header being line 1 for CSV/TSV) and the column.

Layouts
-------
*long*: one row per candidate, columns ``original_id, original, system, candidate``.
*wide*: one row per original, columns ``original_id, original`` and one column per
system holding that system's candidate.
Both take the optional columns ``reference``, ``group`` and ``document``. A file
with ``system`` and ``candidate`` columns is long; any other file is wide.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePath

from metrics.core import tabular
from metrics.core.text import has_nul

REQUIRED = ("original_id", "original")
LONG_ONLY = ("system", "candidate")
OPTIONAL = ("reference", "group", "document")
KNOWN = REQUIRED + LONG_ONLY + OPTIONAL
#: Imported systems may not use this prefix: paraeval names its controls with it.
RESERVED_SYSTEM_PREFIX = "control:"
MAX_ISSUES = 50
MAX_FIELD_CHARS = 100_000
MAX_NAME_CHARS = 200
FORMATS = ("csv", "tsv", "jsonl")


#: One problem in an import file (message, line, column): the shared reader's issue type.
ImportIssue = tabular.TabularIssue


class StudyImportError(Exception):
    """The file cannot be imported; ``issues`` says every place that is wrong."""

    def __init__(self, filename: str, issues: list[ImportIssue]):
        self.filename = filename
        self.issues = issues
        super().__init__(self.describe())

    def describe(self, limit: int = 20) -> str:
        lines = [i.render(self.filename) for i in self.issues[:limit]]
        if len(self.issues) > limit:
            lines.append(f"… and {len(self.issues) - limit} more problems")
        return "\n".join(lines)


@dataclass
class OriginalData:
    external_id: str
    text: str
    reference: str
    group: str
    document: str
    line: int
    position: int


@dataclass
class CandidateData:
    original_id: str
    system: str
    text: str
    line: int


@dataclass
class ParsedStudyData:
    filename: str
    format: str
    layout: str
    row_count: int
    originals: dict[str, OriginalData] = field(default_factory=dict)
    candidates: list[CandidateData] = field(default_factory=list)
    systems: list[str] = field(default_factory=list)


def detect_format(filename: str, explicit: str | None = None) -> str:
    """``explicit`` if given, else the file extension (``.csv``, ``.tsv``/``.tab``, ``.jsonl``/``.ndjson``).

    Compression suffixes are not supported: upload the plain file.
    """
    if explicit:
        fmt = explicit.lower().lstrip(".")
        if fmt not in FORMATS:
            raise StudyImportError(filename, [ImportIssue(f"unknown format '{explicit}'; use one of {', '.join(FORMATS)}")])
        return fmt
    suffix = PurePath(filename).suffix.lower()
    mapping = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".txt": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
    if suffix not in mapping:
        raise StudyImportError(
            filename,
            [ImportIssue(f"cannot tell the format from the extension '{suffix or '(none)'}'; name the file .csv, .tsv or .jsonl, or pass the format")],
        )
    return mapping[suffix]


def decode_utf8(data: bytes, filename: str) -> str:
    """Decode strictly as UTF-8 (a BOM is allowed), naming the line of the first bad byte."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise StudyImportError(
            filename,
            [ImportIssue(f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at character {col}); save the file as UTF-8", line=line)],
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise StudyImportError(filename, [ImportIssue("contains a NUL character; is this a binary file?", line=line)])
    return text


def csv_records(text: str, delimiter: str, filename: str):
    """Yield (line_of_record_start, header_or_row_list).

    The shared reader of :mod:`metrics.core.tabular`: CSV with RFC 4180 quoting, TSV
    raw (no quoting: a TSV text may start with ``"``), the same errors everywhere.
    """
    try:
        yield from tabular.csv_records(text, "csv" if delimiter == "," else "tsv", filename)
    except tabular.TabularError as exc:
        raise StudyImportError(filename, [ImportIssue(i.message, i.line, i.column) for i in exc.issues]) from None


def jsonl_objects(text: str, issues: list[ImportIssue]):
    """Yield (line, object) for each non-blank line of a JSON Lines text that holds a
    JSON object; every other line becomes an issue naming it (bad JSON, nesting too
    deep, not an object, a NUL character). Shared by every JSONL importer; lines end
    at "\n" only (:func:`metrics.core.tabular.jsonl_objects`)."""
    found: list[tabular.TabularIssue] = []
    for lineno, obj in tabular.jsonl_objects(text, found):
        while found:
            i = found.pop(0)
            issues.append(ImportIssue(i.message, i.line, i.column))
        if has_nul(obj):
            issues.append(ImportIssue("contains a NUL character", line=lineno))
            continue
        yield lineno, obj
    issues.extend(ImportIssue(i.message, i.line, i.column) for i in found)


def _iter_rows(text: str, fmt: str, filename: str, issues: list[ImportIssue]):
    """Yield (line, dict column->value); first yields the list of columns."""
    if fmt == "jsonl":
        columns: list[str] = []
        rows = []
        for lineno, obj in jsonl_objects(text, issues):
            row = {}
            for key, value in obj.items():
                if value is None:
                    value = ""
                if isinstance(value, bool) or not isinstance(value, (str, int, float)):
                    issues.append(ImportIssue("must be a string", line=lineno, column=str(key)))
                    value = ""
                row[str(key).strip()] = str(value)
                if str(key).strip() not in columns:
                    columns.append(str(key).strip())
            rows.append((lineno, row))
        yield columns
        yield from rows
        return

    delimiter = "," if fmt == "csv" else "\t"
    records = csv_records(text, delimiter, filename)
    try:
        header_line, header = next(records)
    except StopIteration:
        yield []
        return
    header = [h.strip() for h in header]
    for idx, name in enumerate(header):
        if not name:
            issues.append(ImportIssue(f"header cell {idx + 1} is empty; every column needs a name", line=header_line))
    seen = set()
    for name in header:
        if name and name in seen:
            issues.append(ImportIssue("appears twice in the header", line=header_line, column=name))
        seen.add(name)
    yield header
    for line, row in records:
        if len(row) != len(header):
            issues.append(ImportIssue(f"has {len(row)} fields but the header has {len(header)}", line=line))
            continue
        yield line, dict(zip(header, row))


def parse_study_file(
    data: bytes,
    *,
    filename: str,
    fmt: str | None = None,
    max_bytes: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> ParsedStudyData:
    """Parse and validate a whole file; raise :class:`StudyImportError` listing every problem.

    ``progress`` is called with the number of rows read so far (every 1,000 rows).
    Nothing here touches the database.
    """
    if max_bytes is not None and len(data) > max_bytes:
        raise StudyImportError(
            filename, [ImportIssue(f"the file is {len(data):,} bytes; the limit is {max_bytes:,} (PARAEVAL_IMPORT_MAX_BYTES)")]
        )
    fmt = detect_format(filename, fmt)
    text = decode_utf8(data, filename)
    if not text.strip():
        raise StudyImportError(filename, [ImportIssue("the file is empty")])
    csv.field_size_limit(max(MAX_FIELD_CHARS * 4, 1_000_000))

    issues: list[ImportIssue] = []
    rows = _iter_rows(text, fmt, filename, issues)
    columns = next(rows)
    header_line = 1  # in JSONL there is no header: column problems point at line 1
    colset = set(columns)
    missing = [c for c in REQUIRED if c not in colset]
    long_layout = "system" in colset or "candidate" in colset
    if long_layout:
        missing += [c for c in LONG_ONLY if c not in colset]
        unknown = [c for c in columns if c and c not in KNOWN]
        for c in unknown:
            issues.append(ImportIssue(
                f"unknown column in the long layout (expected {', '.join(KNOWN)})", line=header_line, column=c))
        systems_in_header: list[str] = []
    else:
        systems_in_header = [c for c in columns if c and c not in KNOWN]
        if not systems_in_header and columns:
            issues.append(ImportIssue(
                "no system columns: use the long layout (original_id, original, system, candidate) "
                "or the wide layout (original_id, original, <system>, <system>, …)", line=header_line))
    for c in missing:
        issues.append(ImportIssue("required column is missing", line=header_line, column=c))
    if issues:
        raise StudyImportError(filename, issues)
    for name in systems_in_header:
        _check_system_name(name, header_line, issues)

    parsed = ParsedStudyData(filename=filename, format=fmt, layout="long" if long_layout else "wide", row_count=0)
    seen_pairs: dict[tuple[str, str], int] = {}
    systems_seen: dict[str, None] = {s: None for s in systems_in_header}
    for n, (line, row) in enumerate(rows, start=1):
        parsed.row_count = n
        if progress and n % 1000 == 0:
            progress(n)
        if len(issues) >= MAX_ISSUES:
            break
        oid = row.get("original_id", "").strip()
        otext = row.get("original", "").strip()
        if not oid:
            issues.append(ImportIssue("empty original_id", line=line, column="original_id"))
            continue
        if len(oid) > MAX_NAME_CHARS:
            issues.append(ImportIssue(f"longer than {MAX_NAME_CHARS} characters", line=line, column="original_id"))
            continue
        if not otext:
            issues.append(ImportIssue("empty text", line=line, column="original"))
        _check_length(row, line, issues)
        extra = {k: row.get(k, "").strip() for k in OPTIONAL}
        if fmt == "jsonl" and long_layout:
            for key in row:
                if key not in KNOWN:
                    issues.append(ImportIssue(f"unknown field in the long layout (expected {', '.join(KNOWN)})", line=line, column=key))
        prev = parsed.originals.get(oid)
        if prev is None:
            parsed.originals[oid] = OriginalData(oid, otext, extra["reference"], extra["group"], extra["document"], line, len(parsed.originals))
        else:
            for col, new, old in (("original", otext, prev.text), ("reference", extra["reference"], prev.reference),
                                  ("group", extra["group"], prev.group), ("document", extra["document"], prev.document)):
                if new != old:
                    issues.append(ImportIssue(
                        f"original_id '{oid}' has a different {col} here than on line {prev.line}", line=line, column=col))
            if not long_layout:
                issues.append(ImportIssue(f"original_id '{oid}' already appeared on line {prev.line}", line=line, column="original_id"))
                continue
        if long_layout:
            pairs = [(row.get("system", "").strip(), row.get("candidate", "").strip(), "candidate")]
            if not pairs[0][0]:
                issues.append(ImportIssue("empty system name", line=line, column="system"))
                continue
            if pairs[0][0] not in systems_seen:
                if _check_system_name(pairs[0][0], line, issues):
                    systems_seen[pairs[0][0]] = None
        else:
            if fmt == "jsonl":
                for key in row:
                    if key not in KNOWN and key not in systems_seen:
                        if _check_system_name(key, line, issues):
                            systems_seen[key] = None
            pairs = [(s, row.get(s, "").strip(), s) for s in systems_seen]
        for system, ctext, col in pairs:
            if not ctext:
                issues.append(ImportIssue(f"empty text for system '{system}'", line=line, column=col))
                continue
            key = (oid, system)
            if key in seen_pairs:
                issues.append(ImportIssue(
                    f"duplicate candidate: original '{oid}' and system '{system}' already appeared on line {seen_pairs[key]}",
                    line=line, column=col))
                continue
            seen_pairs[key] = line
            parsed.candidates.append(CandidateData(oid, system, ctext, line))
    if parsed.row_count == 0 and not issues:
        issues.append(ImportIssue("no data rows after the header"))
    if issues:
        raise StudyImportError(filename, issues)
    parsed.systems = list(systems_seen)
    return parsed


def _check_system_name(name: str, line: int, issues: list[ImportIssue]) -> bool:
    if name.lower().startswith(RESERVED_SYSTEM_PREFIX):
        issues.append(ImportIssue(f"system names starting with '{RESERVED_SYSTEM_PREFIX}' are reserved for paraeval's controls", line=line, column=name))
        return False
    if len(name) > MAX_NAME_CHARS:
        issues.append(ImportIssue(f"system name longer than {MAX_NAME_CHARS} characters", line=line, column=name[:40]))
        return False
    return True


def _check_length(row: dict[str, str], line: int, issues: list[ImportIssue]) -> None:
    for col, value in row.items():
        if len(value) > MAX_FIELD_CHARS:
            issues.append(ImportIssue(f"{len(value):,} characters; a text may have at most {MAX_FIELD_CHARS:,}", line=line, column=col))


# --- judgments ------------------------------------------------------------------------------
#
# Long format, one row per (judge, item, criterion): judgments collected elsewhere (a
# previous paraeval study, MTurk, ParaBank) brought into a study whose design describes
# the criteria and scales. Parsed here without the database (values against the scales,
# names, numbers); the judging service then matches originals and candidates and writes
# everything in one transaction.

JUDGMENT_REQUIRED = ("judge", "original_id", "criterion", "value")
JUDGMENT_WHICH = ("system", "systems", "candidate")  # at least one
JUDGMENT_OPTIONAL = ("seconds", "judgment")
JUDGMENT_KNOWN = JUDGMENT_REQUIRED + JUDGMENT_WHICH + JUDGMENT_OPTIONAL
MAX_JUDGE_CHARS = 100


@dataclass(frozen=True)
class JudgmentRow:
    line: int
    judge: str
    original_id: str
    systems: tuple[str, ...]  # empty: match the candidate by its text
    candidate: str  # empty: match by system
    criterion: str
    value: int | float
    seconds: float | None
    judgment: str = ""  # rows sharing it (with the judge and candidate) form one judgment


@dataclass
class ParsedJudgments:
    filename: str
    format: str
    rows: list[JudgmentRow] = field(default_factory=list)


def parse_judgments_file(
    data: bytes, *, filename: str, criteria: list[dict], fmt: str | None = None, max_bytes: int | None = None,
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
    rows_iter = _iter_rows(text, fmt, filename, issues)
    columns = next(rows_iter)
    missing = [c for c in JUDGMENT_REQUIRED if c not in columns]
    if missing:
        issues.append(ImportIssue(f"missing column(s): {', '.join(missing)} (a judgments file needs "
                                  f"{', '.join(JUDGMENT_REQUIRED)} and one of {', '.join(JUDGMENT_WHICH)})", line=1))
    if not any(c in columns for c in JUDGMENT_WHICH):
        issues.append(ImportIssue(f"a judgments file needs a column naming the candidate: "
                                  f"{', '.join(JUDGMENT_WHICH)}", line=1))
    unknown = [c for c in columns if c and c not in JUDGMENT_KNOWN]
    if unknown:
        issues.append(ImportIssue(f"unknown column(s): {', '.join(unknown)}; the columns are "
                                  f"{', '.join(JUDGMENT_KNOWN)}", line=1))
    if issues:
        raise StudyImportError(filename, issues)
    parsed = ParsedJudgments(filename=filename, format=fmt)
    for line, row in rows_iter:
        if len(issues) >= MAX_ISSUES:
            break
        cells = {k: (v or "").strip() for k, v in row.items()}
        ok = True
        for col in JUDGMENT_REQUIRED:
            if not cells.get(col):
                issues.append(ImportIssue("is empty", line=line, column=col))
                ok = False
        judge = cells.get("judge", "")
        if judge and (len(judge) > MAX_JUDGE_CHARS or not all(ch.isalnum() or ch in "@.+-_" for ch in judge)):
            issues.append(ImportIssue(f"a judge name is 1–{MAX_JUDGE_CHARS} letters, digits or @ . + - _",
                                      line=line, column="judge"))
            ok = False
        systems = tuple(cells.get("systems", "").split()) or ((cells["system"],) if cells.get("system") else ())
        if cells.get("system") and cells.get("systems"):
            issues.append(ImportIssue("give either system or systems, not both", line=line, column="systems"))
            ok = False
        for name in systems:
            ok = _check_system_name(name, line, issues) and ok
        candidate = row.get("candidate", "") or ""
        candidate = candidate.strip()
        if not systems and not candidate:
            issues.append(ImportIssue("name the candidate: a system (or systems) or its text", line=line,
                                      column="system" if "system" in columns else "candidate"))
            ok = False
        if len(candidate) > MAX_FIELD_CHARS:
            issues.append(ImportIssue(f"longer than {MAX_FIELD_CHARS:,} characters", line=line, column="candidate"))
            ok = False
        crit = cells.get("criterion", "")
        value = None
        if crit and crit not in scale_of:
            issues.append(ImportIssue(f"unknown criterion {crit!r}; the study's criteria are "
                                      f"{', '.join(scale_of)}", line=line, column="criterion"))
            ok = False
        elif crit and cells.get("value"):
            try:
                value = scales.value_clean(scale_of[crit], cells["value"], from_text=True)
            except ValueError as exc:
                issues.append(ImportIssue(f"{exc} (criterion {crit})", line=line, column="value"))
                ok = False
        seconds = None
        if cells.get("seconds"):
            try:
                seconds = float(cells["seconds"])
            except ValueError:
                seconds = -1.0
            if not (seconds >= 0 and seconds < float("inf")):
                issues.append(ImportIssue("must be a non-negative number of seconds", line=line, column="seconds"))
                ok = False
        if ok:
            parsed.rows.append(JudgmentRow(line, judge, cells["original_id"], systems, candidate, crit, value, seconds,
                                           cells.get("judgment", "")))
    if issues:
        raise StudyImportError(filename, issues)
    if not parsed.rows:
        raise StudyImportError(filename, [ImportIssue("holds no judgments")])
    return parsed


# --- ParaBank's crowd evaluation -------------------------------------------------------------

#: ParaBank's two judgments (Hu et al., AAAI 2019) as a paraeval design: semantic
#: similarity to the original on a 0–100 slider, and a 3-way grammaticality choice
#: (0 nonsensical, 1 meaningful but ungrammatical, 2 meaningful and grammatical).
PARABANK_CRITERIA = [
    {"slug": "similarity", "name": "Similarity",
     "help": "How close is the meaning of the paraphrase to the original's?",
     "scale": {"type": "slider", "min": 0, "max": 100,
               "anchors": {"low": "Completely different meaning", "mid": "Half the meaning",
                           "high": "Identical meaning"}}},
    {"slug": "grammaticality", "name": "Grammaticality", "help": "Is the paraphrase meaningful and grammatical?",
     "scale": {"type": "points", "min": 0, "max": 2,
               "labels": ["Nonsensical", "Meaningful but ungrammatical", "Meaningful and grammatical"]}},
]


def _tsv(rows) -> bytes:
    """Rows as TSV (no quoting; ParaBank's texts hold no tabs or newlines — checked)."""
    out = []
    for row in rows:
        for cell in row:
            if "\t" in cell or "\n" in cell or "\r" in cell:
                raise ValueError(f"a ParaBank cell holds a tab or a newline: {cell[:60]!r}")
        out.append("\t".join(row))
    return ("\n".join(out) + "\n").encode()


def parabank_files(directory) -> tuple[bytes, bytes]:
    """ParaBank's published evaluation (``ref.tsv``, ``candidates.tsv.xz``) as two paraeval
    files: a long study file (original_id, original, group, system, candidate: one
    candidate per original × system of ``sys_id``) and a long judgments file (judge,
    original_id, systems, criterion, value), in the file's order so that a worker's
    repeated judgment of a candidate becomes a later revision; the ``judgment`` column
    (the source line) keeps each source row's two values together. Empty
    ``human_score`` cells (403, all with grammaticality 0) give only the grammaticality row.
    """
    import lzma
    from pathlib import Path

    directory = Path(directory)
    ref_text = (directory / "ref.tsv").read_text(encoding="utf-8")
    with lzma.open(directory / "candidates.tsv.xz", "rt", encoding="utf-8", newline="") as fh:
        cand_text = fh.read()
    refs = list(csv.DictReader(io.StringIO(ref_text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    cands = list(csv.DictReader(io.StringIO(cand_text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE))
    ref_sent = {r["ref_id"]: r["ref_sent"] for r in refs}
    ref_len = {r["ref_id"]: r["ref_len"] for r in refs}
    study_rows = [("original_id", "original", "group", "system", "candidate")]
    seen: set[tuple[str, str]] = set()
    judgment_rows = [("judge", "original_id", "systems", "criterion", "value", "judgment")]
    for line, c in enumerate(cands, start=2):
        rid = c["ref_id"]
        for system in c["sys_id"].split():
            if (rid, system) not in seen:
                seen.add((rid, system))
                study_rows.append((rid, ref_sent[rid], f"len{ref_len[rid]}", system, c["candidate"]))
        if c["human_score"].strip():
            judgment_rows.append((c["worker_id_anon"], rid, c["sys_id"], "similarity", c["human_score"].strip(),
                                  str(line)))
        judgment_rows.append((c["worker_id_anon"], rid, c["sys_id"], "grammaticality", c["gm"].strip(), str(line)))
    return _tsv(study_rows), _tsv(judgment_rows)

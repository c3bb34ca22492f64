"""Parse alignment-task files (pairs or groups) without touching the database.

Every problem is collected with its line (1-based; the header is line 1 of a
CSV/TSV file) and column, and nothing is returned unless the whole file is
valid, so that the service can write all of it or nothing.

Formats
-------
CSV / TSV, one pair a row. Columns: ``sentence1``, ``sentence2`` (required);
``pair_id`` (default: the row's number), ``group_id`` (pairs with the same
group id form a group and must share sentence 1; default: each pair is its own
group). With ``pretokenized`` the sentences are split on whitespace as they
are; otherwise they are tokenized by :func:`metrics.core.text.tokenize`.

JSONL, one object a line, either a *pair*::

    {"pair_id": "p1", "group_id": "g1", "sentence1": "...", "sentence2": "...",
     "tokens1": [...], "tokens2": [...]}          # tokens optional

or a *group* (a key sentence against several others; ParaMetric's 1–2 … 1–11)::

    {"group_id": "g1", "key": "...", "others": ["...", "..."], "key_tokens": [...], "others_tokens": [[...], ...]}

whose pairs get the ids ``<group_id>:2``, ``<group_id>:3``, … (the key being
sentence 1). Given tokens are used as they are (and must not contain spaces).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotation.importing.reading import (
    ImportIssue,
    StudyImportError,
    csv_records,
    decode_utf8,
    detect_format,
    jsonl_objects,
)
from metrics.core.text import tokenize

from .models import MAX_TOKENS

MAX_ISSUES = 50
MAX_ID_CHARS = 200
PAIR_COLUMNS = ("pair_id", "group_id", "sentence1", "sentence2")
PAIR_KEYS = PAIR_COLUMNS + ("tokens1", "tokens2")
GROUP_KEYS = ("group_id", "key", "others", "key_tokens", "others_tokens")


@dataclass(frozen=True)
class PairData:
    external_id: str
    group_id: str
    text1: str
    text2: str
    tokens1: list[str]
    tokens2: list[str]
    line: int


@dataclass
class ParsedPairs:
    filename: str
    format: str
    pairs: list[PairData] = field(default_factory=list)

    @property
    def group_ids(self) -> list[str]:
        """Group ids in order of first appearance."""
        return list(dict.fromkeys(p.group_id for p in self.pairs))


def _tokens(
    text: str, given, *, pretokenized: bool, line: int, column: str, issues: list[ImportIssue]
) -> list[str] | None:
    if given is not None:
        if not isinstance(given, list) or not all(
            isinstance(t, str) and t and not any(c.isspace() for c in t) for t in given
        ):
            issues.append(ImportIssue("must be a list of non-empty tokens without spaces", line=line, column=column))
            return None
        tokens = list(given)
    else:
        tokens = text.split() if pretokenized else tokenize(text)
    if not tokens:
        issues.append(ImportIssue("has no tokens", line=line, column=column))
        return None
    if len(tokens) > MAX_TOKENS:
        issues.append(
            ImportIssue(f"has {len(tokens)} tokens; the grid takes at most {MAX_TOKENS}", line=line, column=column)
        )
        return None
    return tokens


def _text(value, line: int, column: str, issues: list[ImportIssue]) -> str:
    if value is None:
        value = ""
    if not isinstance(value, str):
        issues.append(ImportIssue("must be a string", line=line, column=column))
        return ""
    value = value.strip()
    if not value:
        issues.append(ImportIssue("is empty", line=line, column=column))
    return value


def _delimited_rows(text: str, delimiter: str, filename: str, issues: list[ImportIssue]):
    header = None
    for line, row in csv_records(text, delimiter, filename):
        if header is None:
            header = [h.strip() for h in row]
            for name in header:
                if name not in PAIR_COLUMNS:
                    issues.append(
                        ImportIssue(
                            f"unknown column (expected {', '.join(PAIR_COLUMNS)})", line=line, column=name or "(empty)"
                        )
                    )
            if len(set(header)) != len(header):
                issues.append(ImportIssue("a column appears twice in the header", line=line))
            for required in ("sentence1", "sentence2"):
                if required not in header:
                    issues.append(ImportIssue("required column is missing", line=line, column=required))
            if issues:
                return
            continue
        if len(row) != len(header):
            issues.append(ImportIssue(f"has {len(row)} fields but the header has {len(header)}", line=line))
            continue
        yield line, dict(zip(header, row))


def parse_pairs_file(data: bytes, *, filename: str, fmt: str | None = None, pretokenized: bool = False) -> ParsedPairs:
    """Parse a whole pairs/groups file; raise :class:`StudyImportError` listing every problem."""
    fmt = detect_format(filename, fmt)
    text = decode_utf8(data, filename)
    if not text.strip():
        raise StudyImportError(filename, [ImportIssue("the file is empty")])
    issues: list[ImportIssue] = []
    parsed = ParsedPairs(filename=filename, format=fmt)
    if fmt == "jsonl":
        records = _jsonl_records(text, issues, pretokenized=pretokenized)
    else:
        records = _delimited_records(text, "," if fmt == "csv" else "\t", filename, issues, pretokenized=pretokenized)
    seen_pairs: dict[str, int] = {}
    group_key: dict[str, tuple[list[str], int]] = {}
    for pair in records:
        if len(issues) >= MAX_ISSUES:
            break
        if pair is None:
            continue
        if pair.external_id in seen_pairs:
            issues.append(
                ImportIssue(
                    f"pair id '{pair.external_id}' already appeared on line {seen_pairs[pair.external_id]}",
                    line=pair.line,
                    column="pair_id",
                )
            )
            continue
        seen_pairs[pair.external_id] = pair.line
        key = group_key.setdefault(pair.group_id, (pair.tokens1, pair.line))
        if key[0] != pair.tokens1:
            issues.append(
                ImportIssue(
                    f"group '{pair.group_id}' has a different sentence 1 here than on line {key[1]}; "
                    "every pair of a group shares its key sentence",
                    line=pair.line,
                    column="sentence1",
                )
            )
            continue
        parsed.pairs.append(pair)
    if not parsed.pairs and not issues:
        issues.append(ImportIssue("no pairs in the file"))
    if issues:
        raise StudyImportError(filename, issues)
    return parsed


def _check_id(value: str, line: int, column: str, issues: list[ImportIssue]) -> bool:
    if len(value) > MAX_ID_CHARS:
        issues.append(ImportIssue(f"longer than {MAX_ID_CHARS} characters", line=line, column=column))
        return False
    return True


def _delimited_records(text, delimiter, filename, issues, *, pretokenized):
    n = 0
    for line, row in _delimited_rows(text, delimiter, filename, issues):
        n += 1
        before = len(issues)
        pid = (row.get("pair_id") or "").strip() or str(n)
        gid = (row.get("group_id") or "").strip() or pid
        text1 = _text(row.get("sentence1"), line, "sentence1", issues)
        text2 = _text(row.get("sentence2"), line, "sentence2", issues)
        _check_id(pid, line, "pair_id", issues)
        _check_id(gid, line, "group_id", issues)
        t1 = (
            _tokens(text1, None, pretokenized=pretokenized, line=line, column="sentence1", issues=issues)
            if text1
            else None
        )
        t2 = (
            _tokens(text2, None, pretokenized=pretokenized, line=line, column="sentence2", issues=issues)
            if text2
            else None
        )
        if len(issues) > before:
            yield None
        else:
            assert t1 is not None and t2 is not None  # no new issue: both sentences have tokens
            yield PairData(pid, gid, text1, text2, t1, t2, line)


def _jsonl_records(text, issues, *, pretokenized):
    n = 0
    for line, obj in jsonl_objects(text, issues):
        before = len(issues)
        if "key" in obj or "others" in obj:
            for name in obj:
                if name not in GROUP_KEYS:
                    issues.append(
                        ImportIssue(
                            f"unknown field in a group (expected {', '.join(GROUP_KEYS)})", line=line, column=name
                        )
                    )
            gid = obj.get("group_id")
            if not isinstance(gid, (str, int)) or isinstance(gid, bool) or not str(gid).strip():
                issues.append(ImportIssue("a group needs a group_id", line=line, column="group_id"))
                continue
            gid = str(gid).strip()
            _check_id(gid, line, "group_id", issues)
            key = _text(obj.get("key"), line, "key", issues)
            others = obj.get("others")
            if not isinstance(others, list) or not others:
                issues.append(ImportIssue("must be a non-empty list of sentences", line=line, column="others"))
                continue
            others_tokens = obj.get("others_tokens")
            if others_tokens is not None and (not isinstance(others_tokens, list) or len(others_tokens) != len(others)):
                issues.append(
                    ImportIssue(
                        "must be a list with one token list per sentence of 'others'", line=line, column="others_tokens"
                    )
                )
                continue
            t1 = (
                _tokens(key, obj.get("key_tokens"), pretokenized=pretokenized, line=line, column="key", issues=issues)
                if key
                else None
            )
            pairs = []
            for k, other in enumerate(others):
                column = f"others[{k}]"
                text2 = _text(other, line, column, issues)
                given = others_tokens[k] if others_tokens is not None else None
                t2 = (
                    _tokens(text2, given, pretokenized=pretokenized, line=line, column=column, issues=issues)
                    if text2
                    else None
                )
                if t1 is not None and t2 is not None:  # else an issue is listed and the group is dropped
                    pairs.append(PairData(f"{gid}:{k + 2}", gid, key, text2, t1, t2, line))
            if len(issues) == before:
                yield from pairs
            continue
        n += 1
        for name in obj:
            if name not in PAIR_KEYS:
                issues.append(
                    ImportIssue(
                        f"unknown field (expected {', '.join(PAIR_KEYS)}, or a group with key and others)",
                        line=line,
                        column=name,
                    )
                )
        ids: dict[str, str | None] = {}
        for name, default in (("pair_id", str(n)), ("group_id", None)):
            value = obj.get(name)
            if value is None or (isinstance(value, str) and not value.strip()):
                ids[name] = default
            elif isinstance(value, bool) or not isinstance(value, (str, int)):
                issues.append(ImportIssue("must be a string", line=line, column=name))
            else:
                ids[name] = given_id = str(value).strip()
                _check_id(given_id, line, name, issues)
        text1 = _text(obj.get("sentence1"), line, "sentence1", issues)
        text2 = _text(obj.get("sentence2"), line, "sentence2", issues)
        t1 = (
            _tokens(
                text1,
                obj.get("tokens1"),
                pretokenized=pretokenized,
                line=line,
                column="tokens1" if "tokens1" in obj else "sentence1",
                issues=issues,
            )
            if text1
            else None
        )
        t2 = (
            _tokens(
                text2,
                obj.get("tokens2"),
                pretokenized=pretokenized,
                line=line,
                column="tokens2" if "tokens2" in obj else "sentence2",
                issues=issues,
            )
            if text2
            else None
        )
        if len(issues) == before:
            pid = ids["pair_id"]
            assert pid is not None and t1 is not None and t2 is not None  # no new issue: all given and well formed
            yield PairData(pid, ids.get("group_id") or pid, text1, text2, t1, t2, line)

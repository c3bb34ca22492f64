"""Structured formats: JSON / JSON Lines objects and CSV rows (``pair,i,j,kind``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Sequence

from .model import (
    UINT_RE,
    Alignment,
    FormatError,
    check_in_grid,
    from_obj,
    numbered_lines,
    pair_tokens_or_none,
    resolve_count,
)

# --------------------------------------------------------------------------- JSON


def read_json(source: str | Iterable[str], *, jsonl: bool | None = None) -> list[Alignment]:
    """Read the ``json`` (a list, or one object) or ``jsonl`` format.

    ``jsonl=None`` decides by the text: a document that parses as one JSON value
    is ``json``, otherwise it is read line by line. Errors name the line (and
    column for syntax errors) and the pair's 0-based index.
    """
    text = (
        source if isinstance(source, str) else "".join(line if line.endswith("\n") else line + "\n" for line in source)
    )
    if jsonl is None:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            jsonl = True
        except RecursionError:
            raise FormatError("JSON nested too deeply", 1) from None
        else:
            jsonl = False
    if not jsonl:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg}", exc.lineno, exc.colno) from None
        except RecursionError:
            raise FormatError("JSON nested too deeply", 1) from None
        if isinstance(doc, dict):
            return [from_obj(doc, "pair 0", None)]
        if not isinstance(doc, list):
            raise FormatError("expected a JSON list of alignment objects", 1)
        return [from_obj(obj, f"pair {k}", None) for k, obj in enumerate(doc)]
    out: list[Alignment] = []
    for n, line in numbered_lines(text):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg}", n, exc.colno) from None
        except RecursionError:
            raise FormatError("JSON nested too deeply", n) from None
        out.append(from_obj(obj, f"pair {len(out)}", n))
    return out


def write_json(alignments: Iterable[Alignment], *, indent: int | None = None) -> str:
    """The ``json`` format: a list of objects."""
    return json.dumps([a.to_dict() for a in alignments], ensure_ascii=False, indent=indent) + "\n"


def write_jsonl(alignments: Iterable[Alignment]) -> str:
    """The ``jsonl`` format: one object a line."""
    return "".join(json.dumps(a.to_dict(), ensure_ascii=False) + "\n" for a in alignments)


# --------------------------------------------------------------------------- CSV


def read_csv(
    source: str | Iterable[str],
    *,
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
    n_pairs: int | None = None,
) -> list[Alignment]:
    """Read ``pair,i,j,kind`` rows (header required; 0-based; kind sure|possible)."""
    pair_tokens = pair_tokens_or_none(pairs)
    text = (
        source if isinstance(source, str) else "".join(line if line.endswith("\n") else line + "\n" for line in source)
    )
    reader = csv.reader(io.StringIO(text))
    found: dict[int, tuple[set, set]] = {}
    header_seen = False
    for row in reader:
        n = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        cells = [c.strip() for c in row]
        if not header_seen:
            if [c.lower() for c in cells] != ["pair", "i", "j", "kind"]:
                raise FormatError(f"expected the header 'pair,i,j,kind', found {','.join(row)!r}", n)
            header_seen = True
            continue
        if len(cells) != 4:
            raise FormatError(f"expected 4 cells (pair,i,j,kind), found {len(cells)}", n)
        values = []
        for col, (name, cell) in enumerate(zip(("pair", "i", "j"), cells[:3]), 1):
            if not UINT_RE.fullmatch(cell):
                raise FormatError(f"{name} {cell!r} is not a non-negative integer", n, col)
            values.append(int(cell))
        kind = cells[3].lower()
        if kind not in ("sure", "possible"):
            raise FormatError(f"kind {cells[3]!r} must be 'sure' or 'possible'", n, 4)
        pair, i, j = values
        limit = len(pair_tokens) if pair_tokens is not None else n_pairs
        if limit is not None and pair >= limit:
            raise FormatError(f"pair {pair} is beyond the {limit} sentence pairs (pairs are 0-based)", n, 1)
        if pair_tokens is not None:
            check_in_grid(i, j, pair_tokens[pair], n, 2, f"pair {pair}", f"{i},{j}")
        s, p = found.setdefault(pair, (set(), set()))
        (s if kind == "sure" else p).add((i, j))
    if not header_seen:
        raise FormatError("missing the header 'pair,i,j,kind'", 1)
    count = resolve_count(n_pairs, pair_tokens, max(found, default=-1) + 1, "pair count")
    out = []
    for k in range(count):
        s, p = found.get(k, (set(), set()))
        t1, t2 = pair_tokens[k] if pair_tokens is not None else (None, None)
        out.append(Alignment(t1, t2, frozenset(s), frozenset(p)))
    return out


def write_csv(alignments: Iterable[Alignment]) -> str:
    """``pair,i,j,kind`` rows with a header, links sorted within each pair."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["pair", "i", "j", "kind"])
    for k, a in enumerate(alignments):
        for link in a.link_list():
            w.writerow([k, link.i, link.j, "sure" if link.sure else "possible"])
    return buf.getvalue()

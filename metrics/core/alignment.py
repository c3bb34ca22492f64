"""Word alignments between two tokenized sentences, and the files they travel in.

An :class:`Alignment` is the value the alignment grid edits, the aligner
produces and ParaMetric scores (Callison-Burch, Cohn & Lapata 2008, §3–§4).
A link ``(i, j)`` joins token ``i`` of sentence 1 and token ``j`` of sentence 2,
0-based, and is either *sure* or *possible* (Och & Ney 2003, §5).

Storage convention: ``sure`` and ``possible`` are stored **disjointly** — a
link is in exactly one of them. Och & Ney's set P ("possible") includes S, so
wherever a formula says P we use ``sure | possible`` (:attr:`Alignment.links`).
Building an alignment with a link in both sets keeps it as sure (a sure link is
also possible by definition, so nothing is lost).

Formats (all readers are all-or-nothing: the first problem raises
:class:`FormatError` naming the line, and the column or the link, and nothing is
returned):

``pharaoh``
    One sentence pair per line, links separated by spaces: ``i-j`` sure, ``ipj``
    possible, 0-based (the format of Moses, fast_align and eflomal). An empty
    line is a pair without links, so the line count is the pair count.
``naacl``
    The HLT-NAACL 2003 / ACL 2005 shared-task format (Mihalcea & Pedersen 2003):
    one link per line, ``sent i j [S|P] [confidence]``, everything 1-based. A
    missing S|P field means S. Position 0 is a link to NULL (an unaligned word)
    and adds no cell to the grid, so it is accepted and skipped; the confidence
    column is validated as a number and ignored (an :class:`Alignment` has no
    confidences). Sentences without links do not appear, so the number of pairs
    comes from ``n_pairs``/``pairs`` or else the largest sentence id.
``json`` / ``jsonl``
    One object per pair, ``{"tokens1": [...], "tokens2": [...], "sure":
    [[i, j], ...], "possible": [[i, j], ...]}``; ``json`` is a list of such
    objects (a single object is accepted as one pair), ``jsonl`` one object a
    line. ``tokens1``/``tokens2`` may be omitted or ``null`` when unknown.
``csv``
    Header ``pair,i,j,kind``; one link a row; ``pair`` is the 0-based pair index,
    ``i``/``j`` 0-based, ``kind`` ``sure`` or ``possible``. Like NAACL, the pair
    count comes from ``n_pairs``/``pairs`` or the largest pair index.

Wherever the tokens are known (JSON, or ``pairs=`` given to a reader), every
link is checked against the token counts.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

__all__ = [
    "FORMATS",
    "Alignment",
    "FormatError",
    "Link",
    "dumps",
    "load_groups",
    "loads",
    "read_csv",
    "read_json",
    "read_naacl",
    "read_pharaoh",
    "write_csv",
    "write_json",
    "write_jsonl",
    "write_naacl",
    "write_pharaoh",
]

#: Names accepted by :func:`loads` / :func:`dumps`.
FORMATS = ("pharaoh", "naacl", "json", "jsonl", "csv")


class FormatError(ValueError):
    """An alignment file that cannot be read; says where (1-based line and column)."""

    def __init__(self, message: str, line: int | None = None, column: int | None = None):
        self.message = message
        self.line = line
        self.column = column
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class Link(NamedTuple):
    """One cell of the grid: token ``i`` of sentence 1 with token ``j`` of sentence 2."""

    i: int
    j: int
    sure: bool = True


def _link_set(links: Iterable[Sequence[int]], what: str) -> frozenset[tuple[int, int]]:
    out = set()
    for link in links:
        try:
            i, j = link
        except (TypeError, ValueError):
            raise ValueError(f"{what} link {link!r} is not a pair (i, j)") from None
        if isinstance(i, bool) or isinstance(j, bool) or not isinstance(i, int) or not isinstance(j, int):
            raise ValueError(f"{what} link {link!r} must hold two integers")
        if i < 0 or j < 0:
            raise ValueError(f"{what} link ({i}, {j}) has a negative index")
        out.add((i, j))
    return frozenset(out)


def _tokens(tokens: Iterable[str] | None, what: str) -> tuple[str, ...] | None:
    if tokens is None:
        return None
    if isinstance(tokens, str):
        raise ValueError(f"{what} must be a sequence of tokens, not a string")
    out = tuple(tokens)
    for t in out:
        if not isinstance(t, str) or not t or any(ch.isspace() for ch in t):
            raise ValueError(f"{what} holds {t!r}, which is not a non-empty token without spaces")
    return out


@dataclass(frozen=True)
class Alignment:
    """A word alignment of one sentence pair.

    ``tokens1``/``tokens2`` are the two token sequences, or ``None`` when a file
    carried links only (Pharaoh, NAACL, CSV without ``pairs=``). ``sure`` and
    ``possible`` are disjoint sets of 0-based ``(i, j)``; a link given in both is
    kept as sure. Construction validates: indices are non-negative integers and,
    when tokens are known, inside the ``len(tokens1) × len(tokens2)`` grid
    (``ValueError`` otherwise).
    """

    tokens1: tuple[str, ...] | None
    tokens2: tuple[str, ...] | None
    sure: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    possible: frozenset[tuple[int, int]] = field(default_factory=frozenset)

    def __post_init__(self):
        t1 = _tokens(self.tokens1, "tokens1")
        t2 = _tokens(self.tokens2, "tokens2")
        if (t1 is None) != (t2 is None):
            raise ValueError("give both token sequences or neither")
        sure = _link_set(self.sure, "sure")
        possible = _link_set(self.possible, "possible") - sure
        if t1 is not None:
            for i, j in sorted(sure | possible):
                if i >= len(t1) or j >= len(t2):
                    raise ValueError(
                        f"link {i}-{j} lies outside the {len(t1)}×{len(t2)} grid "
                        f"(sentence 1 has {len(t1)} tokens, sentence 2 has {len(t2)})"
                    )
        object.__setattr__(self, "tokens1", t1)
        object.__setattr__(self, "tokens2", t2)
        object.__setattr__(self, "sure", sure)
        object.__setattr__(self, "possible", possible)

    @classmethod
    def from_links(
        cls,
        tokens1: Sequence[str] | None,
        tokens2: Sequence[str] | None,
        links: Iterable[Link | tuple[int, int] | tuple[int, int, bool]],
    ) -> Alignment:
        """Build from :class:`Link` values (or ``(i, j)`` / ``(i, j, sure)`` tuples)."""
        sure, possible = set(), set()
        for link in links:
            if len(link) == 2:
                sure.add((link[0], link[1]))
            else:
                (sure if link[2] else possible).add((link[0], link[1]))
        return cls(tokens1, tokens2, frozenset(sure), frozenset(possible))

    @property
    def has_tokens(self) -> bool:
        return self.tokens1 is not None

    @property
    def links(self) -> frozenset[tuple[int, int]]:
        """Och & Ney's P: every link, sure or possible."""
        return self.sure | self.possible

    @property
    def shape(self) -> tuple[int, int]:
        """``(len(tokens1), len(tokens2))``; without tokens, the smallest grid holding every link."""
        if self.tokens1 is not None:
            return len(self.tokens1), len(self.tokens2)
        links = self.links
        return (max((i for i, _ in links), default=-1) + 1, max((j for _, j in links), default=-1) + 1)

    def link_list(self) -> list[Link]:
        """Every link as a :class:`Link`, sorted by ``(i, j)``."""
        out = [Link(i, j, True) for i, j in self.sure] + [Link(i, j, False) for i, j in self.possible]
        out.sort()
        return out

    def with_tokens(self, tokens1: Sequence[str], tokens2: Sequence[str]) -> Alignment:
        """The same links over the given tokens (validated against them)."""
        return Alignment(tuple(tokens1), tuple(tokens2), self.sure, self.possible)

    @classmethod
    def from_dict(cls, obj: dict) -> Alignment:
        """Inverse of :meth:`to_dict` (validated; :class:`FormatError` on a bad object)."""
        return _from_obj(obj, "alignment", None)

    def to_dict(self) -> dict:
        """The JSON object of the ``json`` format (links sorted)."""
        return {
            "tokens1": None if self.tokens1 is None else list(self.tokens1),
            "tokens2": None if self.tokens2 is None else list(self.tokens2),
            "sure": [list(link) for link in sorted(self.sure)],
            "possible": [list(link) for link in sorted(self.possible)],
        }


# --------------------------------------------------------------------------- helpers

def _lines(source: str | Iterable[str]) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its end-of-line) from text or lines."""
    # "\n" only: JSON lines may hold U+2028/U+2029/U+0085 raw inside strings. A final
    # "\n" ends the last line rather than starting an empty one (an empty Pharaoh line
    # is a pair without links, so it must not be invented).
    if isinstance(source, str):
        it = source.split("\n")
        if it and it[-1] == "":
            it.pop()
    else:
        it = source
    for n, line in enumerate(it, 1):
        yield n, line.rstrip("\r\n")


def _pair_tokens(pairs) -> list[tuple[tuple[str, ...] | None, tuple[str, ...] | None]] | None:
    if pairs is None:
        return None
    out = []
    for k, pair in enumerate(pairs):
        try:
            t1, t2 = pair
        except (TypeError, ValueError):
            raise ValueError(f"pairs[{k}] is not a (tokens1, tokens2) pair") from None
        out.append((_tokens(t1, f"pairs[{k}][0]"), _tokens(t2, f"pairs[{k}][1]")))
    return out


def _check_in_grid(i: int, j: int, tokens, line: int, column: int | None, pair_label: str, link_text: str):
    t1, t2 = tokens
    if t1 is None:
        return
    if i >= len(t1) or j >= len(t2):
        raise FormatError(
            f"link {link_text!r} of {pair_label} lies outside the {len(t1)}×{len(t2)} grid "
            f"(sentence 1 has {len(t1)} tokens, sentence 2 has {len(t2)})",
            line,
            column,
        )


def _resolve_count(n_pairs: int | None, pair_tokens, found: int, unit: str) -> int:
    """Pair count for link-list formats; ``found`` is 1 + the largest index seen."""
    if pair_tokens is not None:
        if n_pairs is not None and n_pairs != len(pair_tokens):
            raise ValueError(f"n_pairs={n_pairs} disagrees with {len(pair_tokens)} pairs given")
        n_pairs = len(pair_tokens)
    if n_pairs is None:
        return found
    if found > n_pairs:
        raise FormatError(f"{unit} {found} is beyond the {n_pairs} sentence pairs expected")
    return n_pairs


# --------------------------------------------------------------------------- Pharaoh

_PHARAOH_RE = re.compile(r"^([0-9]+)([-p])([0-9]+)$")
#: A non-negative integer in a file: ASCII digits only (``str.isdigit`` also accepts "²", which
#: ``int`` refuses, and "١", which it reads as 1).
_UINT_RE = re.compile(r"[0-9]+")


def read_pharaoh(
    source: str | Iterable[str],
    *,
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
) -> list[Alignment]:
    """Read Pharaoh links, one pair per line (``i-j`` sure, ``ipj`` possible, 0-based).

    With ``pairs`` (the token sequences of each pair), the line count must equal
    ``len(pairs)`` and every link must fit its grid; the alignments then carry
    those tokens. A trailing end-of-line does not make an extra pair.
    Errors name the line and the 1-based character column of the bad link.
    """
    pair_tokens = _pair_tokens(pairs)
    out = []
    for n, line in _lines(source):
        tokens = pair_tokens[n - 1] if pair_tokens is not None and n <= len(pair_tokens) else (None, None)
        if pair_tokens is not None and n > len(pair_tokens):
            raise FormatError(f"more alignment lines than the {len(pair_tokens)} sentence pairs", n)
        sure, possible = set(), set()
        for m in re.finditer(r"\S+", line):
            item = m.group()
            parsed = _PHARAOH_RE.match(item)
            if not parsed:
                raise FormatError(f"{item!r} is not a link 'i-j' (sure) or 'ipj' (possible)", n, m.start() + 1)
            i, j = int(parsed.group(1)), int(parsed.group(3))
            _check_in_grid(i, j, tokens, n, m.start() + 1, f"pair {n}", item)
            (sure if parsed.group(2) == "-" else possible).add((i, j))
        out.append(Alignment(tokens[0], tokens[1], frozenset(sure), frozenset(possible)))
    if pair_tokens is not None and len(out) != len(pair_tokens):
        raise FormatError(f"{len(out)} alignment lines for {len(pair_tokens)} sentence pairs", len(out) + 1)
    return out


def write_pharaoh(alignments: Iterable[Alignment]) -> str:
    """Pharaoh text: one line per pair, links sorted by (i, j), ending in a newline."""
    lines = []
    for a in alignments:
        lines.append(" ".join(f"{l.i}{'-' if l.sure else 'p'}{l.j}" for l in a.link_list()))
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------- NAACL

def _positive_int(text: str, what: str, line: int, column: int, *, allow_zero: bool = False) -> int:
    if not _UINT_RE.fullmatch(text):
        raise FormatError(f"{what} {text!r} is not a {'non-negative' if allow_zero else 'positive'} integer", line, column)
    value = int(text)
    if value == 0 and not allow_zero:
        raise FormatError(f"{what} must be 1 or more (NAACL numbering is 1-based)", line, column)
    return value


def read_naacl(
    source: str | Iterable[str],
    *,
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
    n_pairs: int | None = None,
) -> list[Alignment]:
    """Read NAACL links ``sent i j [S|P] [confidence]`` (1-based; see module docstring).

    Blank lines are ignored. Returns ``n_pairs`` (or ``len(pairs)``, else the
    largest sentence id) alignments in sentence-id order.
    """
    pair_tokens = _pair_tokens(pairs)
    found: dict[int, tuple[set, set]] = {}
    for n, line in _lines(source):
        fields = [(m.group(), m.start() + 1) for m in re.finditer(r"\S+", line)]
        if not fields:
            continue
        if len(fields) not in (3, 4, 5):
            raise FormatError(
                f"expected 'sent i j [S|P] [confidence]', found {len(fields)} fields", n, fields[0][1]
            )
        sent = _positive_int(fields[0][0], "sentence id", n, fields[0][1])
        i = _positive_int(fields[1][0], "position_L1", n, fields[1][1], allow_zero=True)
        j = _positive_int(fields[2][0], "position_L2", n, fields[2][1], allow_zero=True)
        sure = True
        rest = fields[3:]
        if rest and rest[0][0] in ("S", "P"):
            sure = rest[0][0] == "S"
            rest = rest[1:]
        if rest:
            text, col = rest[0]
            if len(rest) > 1:
                raise FormatError(f"unexpected field {rest[1][0]!r}", n, rest[1][1])
            try:
                conf = float(text)
            except ValueError:
                raise FormatError(f"{text!r} is neither S/P nor a confidence number", n, col) from None
            if not math.isfinite(conf):
                raise FormatError(f"confidence {text!r} is not a finite number", n, col)
        if pair_tokens is not None and sent > len(pair_tokens):
            raise FormatError(f"sentence id {sent} is beyond the {len(pair_tokens)} sentence pairs", n, fields[0][1])
        if n_pairs is not None and sent > n_pairs:
            raise FormatError(f"sentence id {sent} is beyond the {n_pairs} sentence pairs", n, fields[0][1])
        if i == 0 or j == 0:
            continue  # a NULL link: the word is unaligned, which needs no cell
        if pair_tokens is not None:
            _check_in_grid(i - 1, j - 1, pair_tokens[sent - 1], n, fields[1][1], f"sentence {sent}", f"{i} {j}")
        s, p = found.setdefault(sent, (set(), set()))
        (s if sure else p).add((i - 1, j - 1))
    count = _resolve_count(n_pairs, pair_tokens, max(found, default=0), "sentence id")
    out = []
    for k in range(count):
        s, p = found.get(k + 1, (set(), set()))
        t1, t2 = pair_tokens[k] if pair_tokens is not None else (None, None)
        out.append(Alignment(t1, t2, frozenset(s), frozenset(p)))
    return out


def write_naacl(alignments: Iterable[Alignment]) -> str:
    """NAACL text ``sent i j S|P``, 1-based, one link a line, sorted."""
    rows = []
    for k, a in enumerate(alignments, 1):
        for l in a.link_list():
            rows.append(f"{k} {l.i + 1} {l.j + 1} {'S' if l.sure else 'P'}\n")
    return "".join(rows)


# --------------------------------------------------------------------------- JSON

def _from_obj(obj, label: str, line: int | None) -> Alignment:
    if not isinstance(obj, dict):
        raise FormatError(f"{label} is not a JSON object", line)
    unknown = set(obj) - {"tokens1", "tokens2", "sure", "possible"}
    if unknown:
        raise FormatError(f"{label} has unknown field(s) {sorted(unknown)}", line)
    t1, t2 = obj.get("tokens1"), obj.get("tokens2")
    for name, t in (("tokens1", t1), ("tokens2", t2)):
        if t is not None and (not isinstance(t, list) or not all(isinstance(x, str) for x in t)):
            raise FormatError(f"{label}: {name} must be a list of strings or null", line)
    links: dict[str, set] = {}
    for kind in ("sure", "possible"):
        raw = obj.get(kind, [])
        if not isinstance(raw, list):
            raise FormatError(f"{label}: {kind} must be a list of [i, j] pairs", line)
        links[kind] = set()
        for link in raw:
            if (
                not isinstance(link, list)
                or len(link) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in link)
            ):
                raise FormatError(f"{label}: {kind} link {json.dumps(link)} is not [i, j] with i, j ≥ 0", line)
            if t1 is not None and t2 is not None and (link[0] >= len(t1) or link[1] >= len(t2)):
                raise FormatError(
                    f"{label}: {kind} link {json.dumps(link)} lies outside the {len(t1)}×{len(t2)} grid", line
                )
            links[kind].add(tuple(link))
    try:
        return Alignment(t1, t2, frozenset(links["sure"]), frozenset(links["possible"]))
    except ValueError as exc:
        raise FormatError(f"{label}: {exc}", line) from None


def read_json(source: str | Iterable[str], *, jsonl: bool | None = None) -> list[Alignment]:
    """Read the ``json`` (a list, or one object) or ``jsonl`` format.

    ``jsonl=None`` decides by the text: a document that parses as one JSON value
    is ``json``, otherwise it is read line by line. Errors name the line (and
    column for syntax errors) and the pair's 0-based index.
    """
    text = source if isinstance(source, str) else "".join(
        line if line.endswith("\n") else line + "\n" for line in source
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
            return [_from_obj(doc, "pair 0", None)]
        if not isinstance(doc, list):
            raise FormatError("expected a JSON list of alignment objects", 1)
        return [_from_obj(obj, f"pair {k}", None) for k, obj in enumerate(doc)]
    out = []
    for n, line in _lines(text):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise FormatError(f"invalid JSON: {exc.msg}", n, exc.colno) from None
        except RecursionError:
            raise FormatError("JSON nested too deeply", n) from None
        out.append(_from_obj(obj, f"pair {len(out)}", n))
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
    pair_tokens = _pair_tokens(pairs)
    text = source if isinstance(source, str) else "".join(
        line if line.endswith("\n") else line + "\n" for line in source
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
            if not _UINT_RE.fullmatch(cell):
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
            _check_in_grid(i, j, pair_tokens[pair], n, 2, f"pair {pair}", f"{i},{j}")
        s, p = found.setdefault(pair, (set(), set()))
        (s if kind == "sure" else p).add((i, j))
    if not header_seen:
        raise FormatError("missing the header 'pair,i,j,kind'", 1)
    count = _resolve_count(n_pairs, pair_tokens, max(found, default=-1) + 1, "pair count")
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
        for l in a.link_list():
            w.writerow([k, l.i, l.j, "sure" if l.sure else "possible"])
    return buf.getvalue()


# --------------------------------------------------------------------------- dispatch

def loads(
    text: str,
    format: str,
    *,
    pairs: Sequence[tuple[Sequence[str], Sequence[str]]] | None = None,
    n_pairs: int | None = None,
) -> list[Alignment]:
    """Read ``text`` in one of :data:`FORMATS`.

    ``pairs`` attaches tokens to link-only formats (and validates links against
    them); for ``json``/``jsonl`` it must agree with the tokens in the file when
    both are present.
    """
    if format == "pharaoh":
        if n_pairs is not None:
            raise ValueError("Pharaoh files give the pair count by their lines; pass pairs= instead of n_pairs=")
        return read_pharaoh(text, pairs=pairs)
    if format == "naacl":
        return read_naacl(text, pairs=pairs, n_pairs=n_pairs)
    if format == "csv":
        return read_csv(text, pairs=pairs, n_pairs=n_pairs)
    if format in ("json", "jsonl"):
        out = read_json(text, jsonl=format == "jsonl")
        if n_pairs is not None and n_pairs != len(out):
            raise FormatError(f"{len(out)} pairs in the file, {n_pairs} expected")
        if pairs is not None:
            if len(pairs) != len(out):
                raise FormatError(f"{len(out)} pairs in the file, {len(pairs)} sentence pairs given")
            merged = []
            for k, (a, (t1, t2)) in enumerate(zip(out, pairs)):
                if a.has_tokens and (a.tokens1, a.tokens2) != (tuple(t1), tuple(t2)):
                    raise FormatError(f"pair {k}: the file's tokens differ from the sentence pair given")
                try:
                    merged.append(a.with_tokens(t1, t2))
                except ValueError as exc:
                    raise FormatError(f"pair {k}: {exc}") from None
            out = merged
        return out
    raise ValueError(f"unknown alignment format {format!r}; choose one of {', '.join(FORMATS)}")


def dumps(alignments: Iterable[Alignment], format: str) -> str:
    """Write ``alignments`` in one of :data:`FORMATS`."""
    writers = {
        "pharaoh": write_pharaoh,
        "naacl": write_naacl,
        "json": write_json,
        "jsonl": write_jsonl,
        "csv": write_csv,
    }
    if format not in writers:
        raise ValueError(f"unknown alignment format {format!r}; choose one of {', '.join(FORMATS)}")
    return writers[format](list(alignments))


# --------------------------------------------------------------------------- groups

def load_groups(path) -> list[dict]:
    """Read alignment groups (``fixtures/alignment/demo_groups.jsonl.gz``; schema there).

    Returns the JSON objects with each member's ``alignments`` turned into
    ``{name: Alignment}`` over the key's and the member's tokens (validated).
    A ``.gz`` path is decompressed. Errors raise :class:`FormatError` naming the line.
    """
    import gzip
    from pathlib import Path

    path = Path(path)
    opener = gzip.open if path.suffix == ".gz" else open
    groups = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                g = json.loads(line)
                key = g["key"]["tokens"]
                for m in g["members"]:
                    m["alignments"] = {
                        name: Alignment(tuple(key), tuple(m["tokens"]), frozenset(map(tuple, a.get("sure", []))),
                                        frozenset(map(tuple, a.get("possible", []))))
                        for name, a in m["alignments"].items()
                    }
            except json.JSONDecodeError as exc:
                raise FormatError(f"invalid JSON: {exc.msg}", n, exc.colno) from None
            except (KeyError, TypeError, AttributeError) as exc:
                raise FormatError(f"not an alignment group ({exc!r})", n) from None
            except ValueError as exc:
                raise FormatError(f"group {g.get('group')!r}: {exc}", n) from None
            groups.append(g)
    return groups

"""The alignment object (:class:`Alignment`, :class:`Link`), its format error, and the checks every reader shares."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

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
        if t1 is not None and t2 is not None:  # both or neither (checked above)
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
        sure: set[tuple[int, int]] = set()
        possible: set[tuple[int, int]] = set()
        for link in links:
            if len(link) == 2:
                sure.add((link[0], link[1]))
            else:
                (sure if link[2] else possible).add((link[0], link[1]))
        return cls(_tokens(tokens1, "tokens1"), _tokens(tokens2, "tokens2"), frozenset(sure), frozenset(possible))

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
        if self.tokens1 is not None and self.tokens2 is not None:  # both or neither
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
        return from_obj(obj, "alignment", None)

    def to_dict(self) -> dict:
        """The JSON object of the ``json`` format (links sorted)."""
        return {
            "tokens1": None if self.tokens1 is None else list(self.tokens1),
            "tokens2": None if self.tokens2 is None else list(self.tokens2),
            "sure": [list(link) for link in sorted(self.sure)],
            "possible": [list(link) for link in sorted(self.possible)],
        }


# --------------------------------------------------------------------------- helpers


def numbered_lines(source: str | Iterable[str]) -> Iterator[tuple[int, str]]:
    """Yield (1-based line number, line without its end-of-line) from text or lines."""
    # "\n" only: JSON lines may hold U+2028/U+2029/U+0085 raw inside strings. A final
    # "\n" ends the last line rather than starting an empty one (an empty Pharaoh line
    # is a pair without links, so it must not be invented).
    it: Iterable[str]
    if isinstance(source, str):
        parts = source.split("\n")
        if parts and parts[-1] == "":
            parts.pop()
        it = parts
    else:
        it = source
    for n, line in enumerate(it, 1):
        yield n, line.rstrip("\r\n")


def pair_tokens_or_none(pairs) -> list[tuple[tuple[str, ...] | None, tuple[str, ...] | None]] | None:
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


def check_in_grid(i: int, j: int, tokens, line: int, column: int | None, pair_label: str, link_text: str):
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


def resolve_count(n_pairs: int | None, pair_tokens, found: int, unit: str) -> int:
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


#: A non-negative integer in a file: ASCII digits only (``str.isdigit`` also accepts "²", which
#: ``int`` refuses, and "١", which it reads as 1).
UINT_RE = re.compile(r"[0-9]+")


# NAACL counts and indices: 1-based positive integers.
def positive_int(text: str, what: str, line: int, column: int, *, allow_zero: bool = False) -> int:
    if not UINT_RE.fullmatch(text):
        raise FormatError(
            f"{what} {text!r} is not a {'non-negative' if allow_zero else 'positive'} integer", line, column
        )
    value = int(text)
    if value == 0 and not allow_zero:
        raise FormatError(f"{what} must be 1 or more (NAACL numbering is 1-based)", line, column)
    return value


# One JSON object ({tokens1, tokens2, sure, possible}) → Alignment: Alignment.from_json and read_json.
def from_obj(obj, label: str, line: int | None) -> Alignment:
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

"""Line formats: Pharaoh (``i-j`` / ``i?j``, one sentence pair a line) and NAACL 2003 (``pair i j S|P``)."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from .model import (
    Alignment,
    FormatError,
    check_in_grid,
    numbered_lines,
    pair_tokens_or_none,
    positive_int,
    resolve_count,
)

# --------------------------------------------------------------------------- Pharaoh

_PHARAOH_RE = re.compile(r"^([0-9]+)([-p])([0-9]+)$")


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
    pair_tokens = pair_tokens_or_none(pairs)
    out = []
    for n, line in numbered_lines(source):
        tokens = pair_tokens[n - 1] if pair_tokens is not None and n <= len(pair_tokens) else (None, None)
        if pair_tokens is not None and n > len(pair_tokens):
            raise FormatError(f"more alignment lines than the {len(pair_tokens)} sentence pairs", n)
        sure: set[tuple[int, int]] = set()
        possible: set[tuple[int, int]] = set()
        for m in re.finditer(r"\S+", line):
            item = m.group()
            parsed = _PHARAOH_RE.match(item)
            if not parsed:
                raise FormatError(f"{item!r} is not a link 'i-j' (sure) or 'ipj' (possible)", n, m.start() + 1)
            i, j = int(parsed.group(1)), int(parsed.group(3))
            check_in_grid(i, j, tokens, n, m.start() + 1, f"pair {n}", item)
            (sure if parsed.group(2) == "-" else possible).add((i, j))
        out.append(Alignment(tokens[0], tokens[1], frozenset(sure), frozenset(possible)))
    if pair_tokens is not None and len(out) != len(pair_tokens):
        raise FormatError(f"{len(out)} alignment lines for {len(pair_tokens)} sentence pairs", len(out) + 1)
    return out


def write_pharaoh(alignments: Iterable[Alignment]) -> str:
    """Pharaoh text: one line per pair, links sorted by (i, j), ending in a newline."""
    lines = []
    for a in alignments:
        lines.append(" ".join(f"{link.i}{'-' if link.sure else 'p'}{link.j}" for link in a.link_list()))
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------- NAACL


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
    pair_tokens = pair_tokens_or_none(pairs)
    found: dict[int, tuple[set, set]] = {}
    for n, line in numbered_lines(source):
        fields = [(m.group(), m.start() + 1) for m in re.finditer(r"\S+", line)]
        if not fields:
            continue
        if len(fields) not in (3, 4, 5):
            raise FormatError(f"expected 'sent i j [S|P] [confidence]', found {len(fields)} fields", n, fields[0][1])
        sent = positive_int(fields[0][0], "sentence id", n, fields[0][1])
        i = positive_int(fields[1][0], "position_L1", n, fields[1][1], allow_zero=True)
        j = positive_int(fields[2][0], "position_L2", n, fields[2][1], allow_zero=True)
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
            check_in_grid(i - 1, j - 1, pair_tokens[sent - 1], n, fields[1][1], f"sentence {sent}", f"{i} {j}")
        s, p = found.setdefault(sent, (set(), set()))
        (s if sure else p).add((i - 1, j - 1))
    count = resolve_count(n_pairs, pair_tokens, max(found, default=0), "sentence id")
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
        for link in a.link_list():
            rows.append(f"{k} {link.i + 1} {link.j + 1} {'S' if link.sure else 'P'}\n")
    return "".join(rows)

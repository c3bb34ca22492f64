"""Dispatch by format name (:func:`loads`, :func:`dumps`) and alignment groups (:func:`load_groups`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from .model import FORMATS, Alignment, FormatError
from .table_formats import read_csv, read_json, write_csv, write_json, write_jsonl
from .text_formats import read_naacl, read_pharaoh, write_naacl, write_pharaoh

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
                        name: Alignment(
                            tuple(key),
                            tuple(m["tokens"]),
                            frozenset(map(tuple, a.get("sure", []))),
                            frozenset(map(tuple, a.get("possible", []))),
                        )
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

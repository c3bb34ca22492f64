"""What the importer fuzz tests share (test_import_fuzz*.py): the hypothesis settings (FUZZ,
bounded by PARAEVAL_FUZZ_EXAMPLES) and the strategies that build study tables, write them in
every format, mutate them byte by byte, and parse them expecting data or a clear error."""

from __future__ import annotations

import csv
import io
import json
import os
import random

from hypothesis import HealthCheck, assume, settings
from hypothesis import strategies as st

from annotation.importing.reading import StudyImportError
from annotation.importing.studies import parse_study_file

#: Inputs per property; ``PARAEVAL_FUZZ_EXAMPLES=1000`` searches harder (minutes, not seconds).
MAX_EXAMPLES = int(os.environ.get("PARAEVAL_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: Characters ``str.splitlines`` treats as line ends but JSON writes raw (see the module docstring).
JSONL_LINE_BREAKERS = "\x85\u2028\u2029"
KNOWN_COLUMNS = {"original_id", "original", "system", "candidate", "reference", "group", "document"}


def clean_text(*, alphabet=None, max_size=30):
    chars = (
        alphabet if alphabet is not None else st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
    )
    return st.text(chars, min_size=1, max_size=max_size).map(str.strip).filter(bool)


def unique_names(n_min, n_max, **kw):
    return st.lists(clean_text(max_size=12, **kw), min_size=n_min, max_size=n_max, unique=True)


@st.composite
def study_tables(draw, alphabet=None):
    """(originals {id: (text, reference)}, systems, candidates {(id, system): text}, layout)."""
    ids = draw(unique_names(1, 5, alphabet=alphabet))
    systems = draw(
        unique_names(1, 3, alphabet=alphabet).filter(
            lambda ns: not any(n in KNOWN_COLUMNS or n.lower().startswith("control:") for n in ns)
        )
    )
    layout = draw(st.sampled_from(["long", "wide"]))
    originals = {
        i: (draw(clean_text(alphabet=alphabet)), draw(st.one_of(st.just(""), clean_text(alphabet=alphabet))))
        for i in ids
    }
    cands = {}
    for i in ids:
        chosen = systems if layout == "wide" else draw(st.lists(st.sampled_from(systems), min_size=1, unique=True))
        for s in chosen:
            cands[(i, s)] = draw(clean_text(alphabet=alphabet))
    return originals, systems, cands, layout


def serialize(table, fmt: str, *, rnd: random.Random, ascii_json: bool | None = None) -> bytes:
    originals, systems, cands, layout = table
    with_ref = any(ref for _, ref in originals.values())
    rows: list[dict] = []
    if layout == "long":
        for (i, s), text in cands.items():
            rows.append(
                {"original_id": i, "original": originals[i][0], "system": s, "candidate": text}
                | ({"reference": originals[i][1]} if with_ref else {})
            )
    else:
        for i, (text, ref) in originals.items():
            rows.append(
                {"original_id": i, "original": text}
                | ({"reference": ref} if with_ref else {})
                | {s: cands[(i, s)] for s in systems}
            )
    if fmt == "jsonl":
        ascii_json = rnd.random() < 0.5 if ascii_json is None else ascii_json
        out = "".join(json.dumps(r, ensure_ascii=ascii_json) + "\n" for r in rows)
    elif fmt == "tsv":
        # TSV is read raw (no quoting, issue 12): a field holds anything but a tab or a
        # line break, and is written as it is.
        assume(all(not (set(str(v)) & set("\t\r\n")) for r in rows for v in [*r, *r.values()]))
        end = "\r\n" if rnd.random() < 0.5 else "\n"
        fields = list(rows[0])
        out = "".join("\t".join(line) + end for line in [fields, *([str(r[f]) for f in fields] for r in rows)])
    else:
        buf = io.StringIO()
        # "\r\n" ends rows so that a bare "\r" or "\n" inside a text gets quoted (csv.writer
        # quotes only the characters of its line terminator); Excel writes the same.
        w = csv.DictWriter(
            buf,
            fieldnames=list(rows[0]),
            delimiter="," if fmt == "csv" else "\t",
            lineterminator="\r\n",
            quoting=rnd.choice([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]),
        )
        w.writeheader()
        w.writerows(rows)
        out = buf.getvalue()
    return (b"\xef\xbb\xbf" if rnd.random() < 0.3 else b"") + out.encode("utf-8")


def mutate(data: bytes, rnd: random.Random, n: int) -> bytes:
    buf = bytearray(data)
    for _ in range(n):
        op = rnd.randrange(4)
        pos = rnd.randrange(len(buf) + 1)
        if op == 0 and buf:
            buf[min(pos, len(buf) - 1)] = rnd.randrange(256)
        elif op == 1:
            buf[pos:pos] = bytes([rnd.choice(b',\t"\n\r\x00\xff{}[]:') if rnd.random() < 0.7 else rnd.randrange(256)])
        elif op == 2 and buf:
            del buf[min(pos, len(buf) - 1)]
        else:
            del buf[pos:]
    return bytes(buf)


def parse_or_error(data: bytes, filename: str, fmt: str | None = None):
    """The parse result, or the StudyImportError; anything else fails the test."""
    try:
        return parse_study_file(data, filename=filename, fmt=fmt)
    except StudyImportError as exc:
        assert exc.issues and exc.describe()
        return exc

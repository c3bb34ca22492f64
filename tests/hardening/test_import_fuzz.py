"""Property-based fuzzing (hypothesis) of every importer: here the study importer, parser and
web; the alignment pairs and system-alignment importers in test_import_fuzz_alignment.py; the
strategies that build the inputs in fuzz_helpers.py, the empty_study fixture in conftest.py.

Importers: the study importer (``annotation.importing.parse_study_file``, behind the
API ``POST /api/studies/<id>/import/`` and the study page's form), the alignment
pairs importer (``annotation.alignment.importing.parse_pairs_file``, API and form)
and the system-alignment importer (Pharaoh, NAACL, JSON, JSONL, CSV; API and form).

Inputs: random bytes; valid files mutated byte by byte (flips, insertions,
deletions, truncation); valid files in the wrong encoding (Latin-1, UTF-16);
fields longer than the limit; ragged rows; and valid files in every layout and
format, which must come back exactly.

Properties: the parser returns the data or raises ``StudyImportError`` with at
least one issue (never another exception); the web doors answer 201/302 (imported)
or 400 / the form with errors — never a 5xx — and after an error the database
holds exactly what it held before (no partial import).

Bounded: each property tries at most ``MAX_EXAMPLES`` inputs (the file runs in
seconds; set ``PARAEVAL_FUZZ_EXAMPLES`` to search harder). JSON nested thousands deep
and NUL characters are refused with a clear error (tests/test_hostile_requests.py), and
the line separators U+0085/U+2028/U+2029 may appear raw inside JSONL strings (lines
end at "\n" only).
"""

from __future__ import annotations

import csv
import io
import random

from django.db import transaction
from hypothesis import assume, given
from hypothesis import strategies as st

from annotation.importing.reading import MAX_FIELD_CHARS, StudyImportError
from annotation.importing.studies import parse_study_file

from .fuzz_helpers import FUZZ, mutate, parse_or_error, serialize, study_tables

# --- the study importer, parser level ------------------------------------------------------------


@FUZZ
@given(data=st.binary(max_size=3000), name=st.sampled_from(["f.csv", "f.tsv", "f.jsonl", "f.txt", "f.xlsx", "f"]))
def test_random_bytes_end_in_data_or_a_clear_error(data, name):
    parse_or_error(data, name)


@FUZZ
@given(
    table=study_tables(), fmt=st.sampled_from(["csv", "tsv", "jsonl"]), seed=st.integers(0, 2**32), n=st.integers(1, 6)
)
def test_mutated_files_end_in_data_or_a_clear_error(table, fmt, seed, n):
    rnd = random.Random(seed)
    parse_or_error(mutate(serialize(table, fmt, rnd=rnd), rnd, n), f"f.{fmt}")


@FUZZ
@given(table=study_tables(), fmt=st.sampled_from(["csv", "tsv", "jsonl"]), seed=st.integers(0, 2**32))
def test_valid_files_import_exactly_in_every_layout_and_format(table, fmt, seed):
    originals, systems, cands, layout = table
    parsed = parse_study_file(serialize(table, fmt, rnd=random.Random(seed)), filename=f"f.{fmt}")
    assert parsed.layout == layout
    assert {k: (o.text, o.reference) for k, o in parsed.originals.items()} == originals
    assert {(c.original_id, c.system): c.text for c in parsed.candidates} == cands
    assert set(parsed.systems) == ({s for _, s in cands} if layout == "long" else set(systems))


LATIN1 = st.characters(min_codepoint=0x20, max_codepoint=0xFF, blacklist_characters="\x7f\x85\xa0")


@FUZZ
@given(
    table=study_tables(alphabet=LATIN1),
    fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
    encoding=st.sampled_from(["latin-1", "utf-16", "utf-16-le", "utf-16-be"]),
    seed=st.integers(0, 2**32),
)
def test_files_in_another_encoding_are_refused_not_garbled(table, fmt, encoding, seed):
    originals, systems, cands, layout = table
    assume(encoding.startswith("utf-16") or any(ord(ch) > 127 for t, _ in originals.values() for ch in t))
    # JSON keeps the characters raw, as an editor saving Latin-1 or UTF-16 would
    text = serialize(table, fmt, rnd=random.Random(seed), ascii_json=False).decode("utf-8-sig")
    exc = parse_or_error(text.encode(encoding), f"f.{fmt}")
    assert isinstance(exc, StudyImportError)
    assert any("UTF-8" in i.message or "NUL" in i.message for i in exc.issues), exc.describe()


@FUZZ
@given(
    table=study_tables(),
    fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
    extra=st.integers(1, 3000),
    which=st.sampled_from(["original", "candidate", "original_id"]),
    seed=st.integers(0, 2**32),
)
def test_enormous_fields_are_refused_with_their_column(table, fmt, extra, which, seed):
    originals, systems, cands, layout = table
    big = "x" * (MAX_FIELD_CHARS + extra)
    first = next(iter(originals))
    if which == "original":
        originals = {**originals, first: (big, originals[first][1])}
    elif which == "candidate":
        key = next(iter(cands))
        cands = {**cands, key: big}
    else:
        originals = {big if k == first else k: v for k, v in originals.items()}
        cands = {((big if i == first else i), s): t for (i, s), t in cands.items()}
    exc = parse_or_error(serialize((originals, systems, cands, layout), fmt, rnd=random.Random(seed)), f"f.{fmt}")
    assert isinstance(exc, StudyImportError)
    assert any(i.line is not None for i in exc.issues), exc.describe()


@FUZZ
@given(
    table=study_tables(),
    fmt=st.sampled_from(["csv", "tsv"]),
    seed=st.integers(0, 2**32),
    change=st.sampled_from([-1, 1, 2]),
)
def test_ragged_rows_are_refused_naming_the_line(table, fmt, seed, change):
    rnd = random.Random(seed)
    text = serialize(table, fmt, rnd=rnd).decode("utf-8-sig")
    if fmt == "tsv":  # raw TSV: one line a row, fields split on tabs
        rows = [line.split("\t") for line in text.replace("\r\n", "\n").split("\n") if line]
    else:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=","))
    k = rnd.randrange(1, len(rows))
    rows[k] = rows[k][:change] if change < 0 else rows[k] + ["extra"] * change
    assume(len(rows[k]) != len(rows[0]))
    if fmt == "tsv":
        out = "".join("\t".join(r) + "\n" for r in rows)
    else:
        buf = io.StringIO()
        csv.writer(buf, delimiter=",", lineterminator="\n").writerows(rows)
        out = buf.getvalue()
    exc = parse_or_error(out.encode(), f"f.{fmt}")
    assert isinstance(exc, StudyImportError)
    assert any("fields but the header has" in i.message for i in exc.issues), exc.describe()


# --- the study importer, through the web ---------------------------------------------------------


def _study_counts(study_id: int) -> tuple[int, int, int]:
    from annotation.models import Candidate, Original, System

    return (
        Original.objects.filter(study_id=study_id).count(),
        System.objects.filter(study_id=study_id).count(),
        Candidate.objects.filter(original__study_id=study_id).count(),
    )


def hostile_files():
    """(bytes, file name): random bytes, mutated valid files, valid files."""
    names = st.sampled_from(["f.csv", "f.tsv", "f.jsonl", "f.txt", "f.bin"])
    valid = st.tuples(study_tables(), st.sampled_from(["csv", "tsv", "jsonl"]), st.integers(0, 2**32)).map(
        lambda t: (serialize(t[0], t[1], rnd=random.Random(t[2])), f"f.{t[1]}")
    )
    mutated = st.tuples(valid, st.integers(0, 2**32), st.integers(1, 5)).map(
        lambda t: (mutate(t[0][0], random.Random(t[1]), t[2]), t[0][1])
    )
    return st.one_of(st.tuples(st.binary(max_size=2000), names), mutated, valid)


@FUZZ
@given(upload=hostile_files(), replace=st.booleans(), fmt=st.sampled_from([None, "csv", "tsv", "jsonl", "xml"]))
def test_the_import_api_imports_all_or_nothing_and_never_fails(upload, replace, fmt, empty_study, client):
    from .conftest import upload_bytes

    data, name = upload
    client.force_login(empty_study.owner)
    before = _study_counts(empty_study.pk)
    body = {"file": upload_bytes(name, data), "replace": "true" if replace else "false"} | (
        {"format": fmt} if fmt else {}
    )
    with transaction.atomic():
        response = client.post(f"/api/studies/{empty_study.pk}/import/", body)
        after = _study_counts(empty_study.pk)
        transaction.set_rollback(True)
    assert response.status_code in (201, 202, 400), response.content[:500]
    if response.status_code == 400:
        assert after == before
        assert response.json()  # a detail naming the problem, or the field that is wrong
    elif response.status_code == 201:
        summary = response.json()["summary"]
        added = (summary["originals_added"], summary["systems_added"], summary["candidates_added"])
        assert after == (added if replace else tuple(b + a for b, a in zip(before, added)))


@FUZZ
@given(upload=hostile_files())
def test_the_import_form_imports_all_or_nothing_and_never_fails(upload, empty_study, client):
    from .conftest import upload_bytes

    data, name = upload
    client.force_login(empty_study.owner)
    before = _study_counts(empty_study.pk)
    with transaction.atomic():
        response = client.post(f"/studies/{empty_study.pk}/", {"action": "import", "file": upload_bytes(name, data)})
        after = _study_counts(empty_study.pk)
        transaction.set_rollback(True)
    assert response.status_code in (200, 302, 400), response.status_code
    if response.status_code == 200:  # the page again, with the errors
        assert after == before
        assert b"error" in response.content.lower()

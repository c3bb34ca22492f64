"""Property-based fuzzing (hypothesis) of every importer.

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
import json
import os
import random

import pytest
from django.db import transaction
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from annotation.importing import MAX_FIELD_CHARS, StudyImportError, parse_study_file

#: Inputs per property; ``PARAEVAL_FUZZ_EXAMPLES=1000`` searches harder (minutes, not seconds).
MAX_EXAMPLES = int(os.environ.get("PARAEVAL_FUZZ_EXAMPLES", "30"))
FUZZ = settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])
#: Characters ``str.splitlines`` treats as line ends but JSON writes raw (see the module docstring).
JSONL_LINE_BREAKERS = "\x85\u2028\u2029"
KNOWN_COLUMNS = {"original_id", "original", "system", "candidate", "reference", "group", "document"}


def clean_text(*, alphabet=None, max_size=30):
    chars = alphabet if alphabet is not None else st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00")
    return st.text(chars, min_size=1, max_size=max_size).map(str.strip).filter(bool)


def unique_names(n_min, n_max, **kw):
    return st.lists(clean_text(max_size=12, **kw), min_size=n_min, max_size=n_max, unique=True)


@st.composite
def study_tables(draw, alphabet=None):
    """(originals {id: (text, reference)}, systems, candidates {(id, system): text}, layout)."""
    ids = draw(unique_names(1, 5, alphabet=alphabet))
    systems = draw(unique_names(1, 3, alphabet=alphabet).filter(
        lambda ns: not any(n in KNOWN_COLUMNS or n.lower().startswith("control:") for n in ns)))
    layout = draw(st.sampled_from(["long", "wide"]))
    originals = {i: (draw(clean_text(alphabet=alphabet)), draw(st.one_of(st.just(""), clean_text(alphabet=alphabet))))
                 for i in ids}
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
            rows.append({"original_id": i, "original": originals[i][0], "system": s, "candidate": text}
                        | ({"reference": originals[i][1]} if with_ref else {}))
    else:
        for i, (text, ref) in originals.items():
            rows.append({"original_id": i, "original": text} | ({"reference": ref} if with_ref else {})
                        | {s: cands[(i, s)] for s in systems})
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
        w = csv.DictWriter(buf, fieldnames=list(rows[0]), delimiter="," if fmt == "csv" else "\t",
                           lineterminator="\r\n", quoting=rnd.choice([csv.QUOTE_MINIMAL, csv.QUOTE_ALL]))
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


# --- the study importer, parser level ------------------------------------------------------------

@FUZZ
@given(data=st.binary(max_size=3000), name=st.sampled_from(["f.csv", "f.tsv", "f.jsonl", "f.txt", "f.xlsx", "f"]))
def test_random_bytes_end_in_data_or_a_clear_error(data, name):
    parse_or_error(data, name)


@FUZZ
@given(table=study_tables(), fmt=st.sampled_from(["csv", "tsv", "jsonl"]), seed=st.integers(0, 2**32),
       n=st.integers(1, 6))
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
@given(table=study_tables(alphabet=LATIN1), fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
       encoding=st.sampled_from(["latin-1", "utf-16", "utf-16-le", "utf-16-be"]), seed=st.integers(0, 2**32))
def test_files_in_another_encoding_are_refused_not_garbled(table, fmt, encoding, seed):
    originals, systems, cands, layout = table
    assume(encoding.startswith("utf-16") or any(ord(ch) > 127 for t, _ in originals.values() for ch in t))
    # JSON keeps the characters raw, as an editor saving Latin-1 or UTF-16 would
    text = serialize(table, fmt, rnd=random.Random(seed), ascii_json=False).decode("utf-8-sig")
    exc = parse_or_error(text.encode(encoding), f"f.{fmt}")
    assert isinstance(exc, StudyImportError)
    assert any("UTF-8" in i.message or "NUL" in i.message for i in exc.issues), exc.describe()


@FUZZ
@given(table=study_tables(), fmt=st.sampled_from(["csv", "tsv", "jsonl"]), extra=st.integers(1, 3000),
       which=st.sampled_from(["original", "candidate", "original_id"]), seed=st.integers(0, 2**32))
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
@given(table=study_tables(), fmt=st.sampled_from(["csv", "tsv"]), seed=st.integers(0, 2**32),
       change=st.sampled_from([-1, 1, 2]))
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

    return (Original.objects.filter(study_id=study_id).count(), System.objects.filter(study_id=study_id).count(),
            Candidate.objects.filter(original__study_id=study_id).count())


def hostile_files():
    """(bytes, file name): random bytes, mutated valid files, valid files."""
    names = st.sampled_from(["f.csv", "f.tsv", "f.jsonl", "f.txt", "f.bin"])
    valid = st.tuples(study_tables(), st.sampled_from(["csv", "tsv", "jsonl"]), st.integers(0, 2**32)).map(
        lambda t: (serialize(t[0], t[1], rnd=random.Random(t[2])), f"f.{t[1]}"))
    mutated = st.tuples(valid, st.integers(0, 2**32), st.integers(1, 5)).map(
        lambda t: (mutate(t[0][0], random.Random(t[1]), t[2]), t[0][1]))
    return st.one_of(st.tuples(st.binary(max_size=2000), names), mutated, valid)


@pytest.fixture
def empty_study(db):
    from django.contrib.auth.models import User

    from annotation import services

    owner = User.objects.create_user("fuzz-owner", password="pw")
    services.researcher_grant(user=owner)
    study = services.study_create(name="Fuzzed study", owner=owner)
    services.study_import_file(study=study, data=b"original_id,original,human\nk1,Kept.,Kept too.\n", filename="k.csv")
    return study


@FUZZ
@given(upload=hostile_files(), replace=st.booleans(), fmt=st.sampled_from([None, "csv", "tsv", "jsonl", "xml"]))
def test_the_import_api_imports_all_or_nothing_and_never_fails(upload, replace, fmt, empty_study, client):
    from .conftest import upload_bytes

    data, name = upload
    client.force_login(empty_study.owner)
    before = _study_counts(empty_study.pk)
    body = {"file": upload_bytes(name, data), "replace": "true" if replace else "false"} | ({"format": fmt} if fmt else {})
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


# --- alignment pairs ------------------------------------------------------------------------------

@st.composite
def pair_files(draw):
    """A valid pairs file: (bytes, format, expected {pair_id: (tokens1, tokens2)}), pretokenized."""
    token = st.text(st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=8)
    fmt = draw(st.sampled_from(["csv", "tsv", "jsonl"]))
    n = draw(st.integers(1, 4))
    ids = draw(st.lists(st.text("abcxyz0123-_", min_size=1, max_size=6), min_size=n, max_size=n, unique=True))
    expected = {}
    for pid in ids:
        t1 = draw(st.lists(token, min_size=1, max_size=6))
        t2 = draw(st.lists(token, min_size=1, max_size=6))
        expected[pid] = (t1, t2)
    if fmt == "jsonl":
        text = "".join(json.dumps({"pair_id": k, "sentence1": " ".join(a), "sentence2": " ".join(b)}) + "\n"
                       for k, (a, b) in expected.items())
    elif fmt == "tsv":  # raw: the tokens hold no tab or line break (category Cc is excluded)
        text = "pair_id\tsentence1\tsentence2\n" + "".join(
            f"{k}\t{' '.join(a)}\t{' '.join(b)}\n" for k, (a, b) in expected.items())
    else:
        buf = io.StringIO()
        w = csv.writer(buf, delimiter=",", lineterminator="\n")
        w.writerow(["pair_id", "sentence1", "sentence2"])
        w.writerows([k, " ".join(a), " ".join(b)] for k, (a, b) in expected.items())
        text = buf.getvalue()
    # The split of the joined tokens is what a pretokenized import must give back.
    expected = {k: (" ".join(a).split(), " ".join(b).split()) for k, (a, b) in expected.items()}
    return text.encode(), fmt, expected


@FUZZ
@given(files=pair_files())
def test_valid_pair_files_import_exactly(files):
    from annotation.alignment.importing import parse_pairs_file

    data, fmt, expected = files
    parsed = parse_pairs_file(data, filename=f"p.{fmt}", pretokenized=True)
    assert {p.external_id: (p.tokens1, p.tokens2) for p in parsed.pairs} == expected


@FUZZ
@given(data=st.one_of(st.binary(max_size=2000),
                      st.tuples(pair_files(), st.integers(0, 2**32), st.integers(1, 5)).map(
                          lambda t: mutate(t[0][0], random.Random(t[1]), t[2]))),
       fmt=st.sampled_from(["csv", "tsv", "jsonl"]), pretokenized=st.booleans())
def test_random_pair_files_end_in_pairs_or_a_clear_error(data, fmt, pretokenized):
    from annotation.alignment.importing import parse_pairs_file

    try:
        parse_pairs_file(data, filename=f"p.{fmt}", pretokenized=pretokenized)
    except StudyImportError as exc:
        assert exc.issues and exc.describe()


def _alignment_counts(study_id: int) -> tuple[int, int, int, int]:
    from annotation.alignment.models import AlignmentGroup, AlignmentPair, AlignmentSystem, SystemAlignment

    return (AlignmentPair.objects.filter(study_id=study_id).count(), AlignmentGroup.objects.filter(study_id=study_id).count(),
            AlignmentSystem.objects.filter(study_id=study_id).count(),
            SystemAlignment.objects.filter(system__study_id=study_id).count())


@FUZZ
@given(data=st.one_of(st.binary(max_size=1500), pair_files().map(lambda t: t[0]),
                      st.tuples(pair_files(), st.integers(0, 2**32), st.integers(1, 5)).map(
                          lambda t: mutate(t[0][0], random.Random(t[1]), t[2]))),
       name=st.sampled_from(["p.csv", "p.tsv", "p.jsonl", "p.txt", "p"]), replace=st.booleans(),
       door=st.sampled_from(["api", "form"]))
def test_pair_imports_through_the_web_are_all_or_nothing(data, name, replace, door, empty_study, client):
    from .conftest import upload_bytes

    client.force_login(empty_study.owner)
    before = _alignment_counts(empty_study.pk)
    with transaction.atomic():
        if door == "api":
            response = client.post(f"/api/alignment/studies/{empty_study.pk}/pairs/import/",
                                   {"file": upload_bytes(name, data), "replace": replace})
        else:
            body = {"pairs-file": upload_bytes(name, data)} | ({"pairs-replace": "on"} if replace else {})
            response = client.post(f"/studies/{empty_study.pk}/alignment/import-pairs/", body)
        after = _alignment_counts(empty_study.pk)
        transaction.set_rollback(True)
    ok = 201 if door == "api" else 302
    assert response.status_code in (ok, 400), response.status_code
    if response.status_code == 400:
        assert after == before


# --- system alignments ----------------------------------------------------------------------------

@pytest.fixture
def aligned_study(empty_study):
    """The empty study with three pairs: 3×3, 2×4 and 5×1 tokens."""
    from annotation.alignment import services

    text = "".join(json.dumps({"pair_id": f"p{k}", "sentence1": a, "sentence2": b}) + "\n" for k, (a, b) in enumerate(
        [("a b c", "x y z"), ("a b", "w x y z"), ("a b c d e", "x")]))
    services.pairs_import_file(study=empty_study, data=text.encode(), filename="p.jsonl", pretokenized=True)
    return empty_study


SHAPES = [(3, 3), (2, 4), (5, 1)]


@st.composite
def alignment_files(draw):
    """(text, format): links that may fall outside the grids, be negative or huge."""
    fmt = draw(st.sampled_from(["pharaoh", "naacl", "json", "jsonl", "csv"]))
    index = st.one_of(st.integers(0, 5), st.integers(-3, 2**64))
    n_pairs = draw(st.sampled_from([3, 3, 3, 2, 4]))
    links = [draw(st.lists(st.tuples(index, index, st.booleans()), max_size=5)) for _ in range(n_pairs)]
    if fmt == "pharaoh":
        text = "".join(" ".join(f"{i}{'-' if sure else '?'}{j}" for i, j, sure in ls) + "\n" for ls in links)
    elif fmt == "naacl":
        text = "".join(f"{k + 1} {i + 1} {j + 1} {'S' if sure else 'P'}\n" for k, ls in enumerate(links) for i, j, sure in ls)
    elif fmt == "csv":
        text = "pair,i,j,kind\n" + "".join(f"{k},{i},{j},{'sure' if sure else 'possible'}\n"
                                            for k, ls in enumerate(links) for i, j, sure in ls)
    else:
        objs = [{"sure": [[i, j] for i, j, s in ls if s], "possible": [[i, j] for i, j, s in ls if not s]} for ls in links]
        text = json.dumps(objs) if fmt == "json" else "".join(json.dumps(o) + "\n" for o in objs)
    return text, fmt


@FUZZ
@given(upload=st.one_of(alignment_files(),
                        st.tuples(st.binary(max_size=800).map(lambda b: b.decode("latin-1")),
                                  st.sampled_from(["pharaoh", "naacl", "json", "jsonl", "csv"]))),
       encoding=st.sampled_from(["utf-8", "utf-8", "utf-16"]), door=st.sampled_from(["api", "form"]))
def test_system_alignment_imports_are_all_or_nothing(upload, encoding, door, aligned_study, client):
    from annotation.alignment import selectors

    from .conftest import upload_bytes

    text, fmt = upload
    try:
        data = text.encode(encoding)
    except UnicodeEncodeError:
        data = text.encode("utf-8", "surrogatepass")
    client.force_login(aligned_study.owner)
    before = _alignment_counts(aligned_study.pk)
    with transaction.atomic():
        if door == "api":
            response = client.post(f"/api/alignment/studies/{aligned_study.pk}/systems/import/",
                                   {"name": "fuzz", "format": fmt, "file": upload_bytes(f"a.{fmt}", data)})
        else:
            response = client.post(f"/studies/{aligned_study.pk}/alignment/import-system/",
                                   {"system-name": "fuzz", "system-format": fmt,
                                    "system-file": upload_bytes(f"a.{fmt}", data)})
        after = _alignment_counts(aligned_study.pk)
        stored = None
        if response.status_code in (201, 302):
            from annotation.alignment.models import AlignmentSystem

            system = AlignmentSystem.objects.get(study=aligned_study, name="fuzz")
            stored = selectors.system_alignments(system=system)
        transaction.set_rollback(True)
    assert response.status_code in ((201, 400) if door == "api" else (302, 400)), response.status_code
    if response.status_code == 400:
        assert after == before
    else:
        assert after[3] == before[3] + 3  # one alignment per pair, every link inside its grid
        pairs = list(selectors.pairs_for_study(study=aligned_study))
        for pair in pairs:
            a = stored[pair.pk]
            assert all(i < len(pair.tokens1) and j < len(pair.tokens2) for i, j in a.sure | a.possible)

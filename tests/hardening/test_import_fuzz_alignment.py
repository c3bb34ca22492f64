"""Property-based fuzzing (hypothesis) of the alignment importers: the alignment pairs importer
(``annotation.alignment.importing.parse_pairs_file``, API and form) and the system-alignment
importer (Pharaoh, NAACL, JSON, JSONL, CSV; API and form). The properties are those of
test_import_fuzz.py: data or a clear error, never a 5xx, and nothing partial after an error."""

from __future__ import annotations

import csv
import io
import json
import random

import pytest
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from annotation.importing.reading import StudyImportError

from .fuzz_helpers import FUZZ, mutate

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
        text = "".join(
            json.dumps({"pair_id": k, "sentence1": " ".join(a), "sentence2": " ".join(b)}) + "\n"
            for k, (a, b) in expected.items()
        )
    elif fmt == "tsv":  # raw: the tokens hold no tab or line break (category Cc is excluded)
        text = "pair_id\tsentence1\tsentence2\n" + "".join(
            f"{k}\t{' '.join(a)}\t{' '.join(b)}\n" for k, (a, b) in expected.items()
        )
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
@given(
    data=st.one_of(
        st.binary(max_size=2000),
        st.tuples(pair_files(), st.integers(0, 2**32), st.integers(1, 5)).map(
            lambda t: mutate(t[0][0], random.Random(t[1]), t[2])
        ),
    ),
    fmt=st.sampled_from(["csv", "tsv", "jsonl"]),
    pretokenized=st.booleans(),
)
def test_random_pair_files_end_in_pairs_or_a_clear_error(data, fmt, pretokenized):
    from annotation.alignment.importing import parse_pairs_file

    try:
        parse_pairs_file(data, filename=f"p.{fmt}", pretokenized=pretokenized)
    except StudyImportError as exc:
        assert exc.issues and exc.describe()


def _alignment_counts(study_id: int) -> tuple[int, int, int, int]:
    from annotation.alignment.models import AlignmentGroup, AlignmentPair, AlignmentSystem, SystemAlignment

    return (
        AlignmentPair.objects.filter(study_id=study_id).count(),
        AlignmentGroup.objects.filter(study_id=study_id).count(),
        AlignmentSystem.objects.filter(study_id=study_id).count(),
        SystemAlignment.objects.filter(system__study_id=study_id).count(),
    )


@FUZZ
@given(
    data=st.one_of(
        st.binary(max_size=1500),
        pair_files().map(lambda t: t[0]),
        st.tuples(pair_files(), st.integers(0, 2**32), st.integers(1, 5)).map(
            lambda t: mutate(t[0][0], random.Random(t[1]), t[2])
        ),
    ),
    name=st.sampled_from(["p.csv", "p.tsv", "p.jsonl", "p.txt", "p"]),
    replace=st.booleans(),
    door=st.sampled_from(["api", "form"]),
)
def test_pair_imports_through_the_web_are_all_or_nothing(data, name, replace, door, empty_study, client):
    from .conftest import upload_bytes

    client.force_login(empty_study.owner)
    before = _alignment_counts(empty_study.pk)
    with transaction.atomic():
        if door == "api":
            response = client.post(
                f"/api/alignment/studies/{empty_study.pk}/pairs/import/",
                {"file": upload_bytes(name, data), "replace": replace},
            )
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
    from annotation.alignment.services.pairs import pairs_import_file

    text = "".join(
        json.dumps({"pair_id": f"p{k}", "sentence1": a, "sentence2": b}) + "\n"
        for k, (a, b) in enumerate([("a b c", "x y z"), ("a b", "w x y z"), ("a b c d e", "x")])
    )
    pairs_import_file(study=empty_study, data=text.encode(), filename="p.jsonl", pretokenized=True)
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
        text = "".join(
            f"{k + 1} {i + 1} {j + 1} {'S' if sure else 'P'}\n" for k, ls in enumerate(links) for i, j, sure in ls
        )
    elif fmt == "csv":
        text = "pair,i,j,kind\n" + "".join(
            f"{k},{i},{j},{'sure' if sure else 'possible'}\n" for k, ls in enumerate(links) for i, j, sure in ls
        )
    else:
        objs = [
            {"sure": [[i, j] for i, j, s in ls if s], "possible": [[i, j] for i, j, s in ls if not s]} for ls in links
        ]
        text = json.dumps(objs) if fmt == "json" else "".join(json.dumps(o) + "\n" for o in objs)
    return text, fmt


@FUZZ
@given(
    upload=st.one_of(
        alignment_files(),
        st.tuples(
            st.binary(max_size=800).map(lambda b: b.decode("latin-1")),
            st.sampled_from(["pharaoh", "naacl", "json", "jsonl", "csv"]),
        ),
    ),
    encoding=st.sampled_from(["utf-8", "utf-8", "utf-16"]),
    door=st.sampled_from(["api", "form"]),
)
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
            response = client.post(
                f"/api/alignment/studies/{aligned_study.pk}/systems/import/",
                {"name": "fuzz", "format": fmt, "file": upload_bytes(f"a.{fmt}", data)},
            )
        else:
            response = client.post(
                f"/studies/{aligned_study.pk}/alignment/import-system/",
                {"system-name": "fuzz", "system-format": fmt, "system-file": upload_bytes(f"a.{fmt}", data)},
            )
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

"""Alignment tasks come from CSV/TSV/JSONL files of pairs or groups, all or nothing."""

import pytest
from django.urls import reverse

from annotation.alignment.models import AlignmentGroup, AlignmentPair
from annotation.alignment.services.assignments import assignments_create
from annotation.alignment.services.drafts import assignment_draft_save
from annotation.alignment.services.pairs import pairs_import_file
from annotation.importing.reading import StudyImportError
from metrics.core.text import tokenize

from .conftest import PAIRS_JSONL, upload

pytestmark = pytest.mark.django_db


def test_a_group_line_becomes_one_pair_per_other_sentence_sharing_the_key(study):
    summary = pairs_import_file(study=study, data=PAIRS_JSONL.encode(), filename="pairs.jsonl")
    assert summary == {"pairs_added": 3, "groups_added": 2, "replaced": False, "format": "jsonl"}
    pairs = list(AlignmentPair.objects.filter(study=study).order_by("position"))
    assert [p.external_id for p in pairs] == ["g1:2", "g1:3", "p3"]
    assert [p.group.external_id for p in pairs] == ["g1", "g1", "p3"]
    assert pairs[0].tokens1 == pairs[1].tokens1 == tokenize("In the beginning was the Word.")
    assert pairs[2].tokens2 == ["He", "died", "."]


def test_csv_pairs_with_groups_and_default_ids(study):
    data = (
        b"sentence1,sentence2,group_id\n"
        b'"God\'s love, and peace.",Love of God and peace.,k\n'
        b'"God\'s love, and peace.",The love of God; peace.,k\n'
    )
    pairs_import_file(study=study, data=data, filename="p.csv")
    pairs = list(AlignmentPair.objects.filter(study=study).order_by("position"))
    assert [p.external_id for p in pairs] == ["1", "2"]
    assert pairs[0].tokens1 == ["God's", "love", ",", "and", "peace", "."]
    assert AlignmentGroup.objects.get(study=study).external_id == "k"


def test_pretokenized_tsv_is_split_on_spaces_only(study):
    pairs_import_file(
        study=study,
        data=b"pair_id\tsentence1\tsentence2\nx\tdo n't go\tstay-put !\n",
        filename="p.tsv",
        pretokenized=True,
    )
    pair = AlignmentPair.objects.get(study=study)
    assert pair.tokens1 == ["do", "n't", "go"] and pair.tokens2 == ["stay-put", "!"]


def test_given_tokens_in_jsonl_are_kept(study):
    line = '{"pair_id": "a", "sentence1": "x y", "sentence2": "z", "tokens1": ["x", "y"], "tokens2": ["z"]}\n'
    pairs_import_file(study=study, data=line.encode(), filename="p.jsonl")
    assert AlignmentPair.objects.get(study=study).tokens1 == ["x", "y"]


def test_every_problem_is_named_by_line_and_nothing_is_written(study):
    data = (
        b"sentence1,sentence2,pair_id,group_id\n"
        b"A cat.,A feline.,a,g\n"
        b",Empty first.,b,\n"
        b"Other key.,Something.,c,g\n"
        b"A dog.,A hound.,a,\n"
    )
    with pytest.raises(StudyImportError) as err:
        pairs_import_file(study=study, data=data, filename="bad.csv")
    text = err.value.describe()
    assert "bad.csv, line 3, column 'sentence1': is empty" in text
    assert "bad.csv, line 4, column 'sentence1': group 'g' has a different sentence 1 here than on line 2" in text
    assert "bad.csv, line 5, column 'pair_id': pair id 'a' already appeared on line 2" in text
    assert not AlignmentPair.objects.filter(study=study).exists()


@pytest.mark.parametrize(
    "data, filename, message",
    [
        (b"sentence1,text\n", "x.csv", "line 1, column 'text': unknown column"),
        (b"sentence1\n", "x.csv", "line 1, column 'sentence2': required column is missing"),
        (
            b'{"group_id": "g", "key": "k", "others": []}\n',
            "x.jsonl",
            "line 1, column 'others': must be a non-empty list",
        ),
        (
            b'{"sentence1": "a", "sentence2": "b", "tokens1": ["a b"]}\n',
            "x.jsonl",
            "line 1, column 'tokens1': must be a list of non-empty tokens",
        ),
        (b'{"sentence1": "a"\n', "x.jsonl", "line 1: not valid JSON"),
        (b"\xff\xfe", "x.csv", "not valid UTF-8"),
        (b"sentence1,sentence2\n" + b"a,b\n" * 0, "x.csv", "no pairs in the file"),
        (b"x", "x.docx", "cannot tell the format"),
    ],
)
def test_bad_files_are_refused_with_where_and_why(study, data, filename, message):
    with pytest.raises(StudyImportError) as err:
        pairs_import_file(study=study, data=data, filename=filename)
    assert message in err.value.describe()


def test_a_second_import_appends_and_refuses_known_ids(study, pairs):
    pairs_import_file(study=study, data=b"pair_id,sentence1,sentence2\nq,One.,Two.\n", filename="more.csv")
    assert AlignmentPair.objects.get(study=study, external_id="q").position == 3
    with pytest.raises(StudyImportError) as err:
        pairs_import_file(study=study, data=b"pair_id,sentence1,sentence2\np3,One.,Two.\n", filename="again.csv")
    assert "again.csv, line 2, column 'pair_id': the study already has a pair 'p3'" in err.value.describe()


def test_replace_is_refused_once_an_annotator_saved_work(study, pairs, annotator):
    from annotation.alignment.models import AlignmentAssignment

    assignments_create(study=study)
    a = AlignmentAssignment.objects.filter(annotator=annotator).first()
    assignment_draft_save(assignment=a, sure=[[0, 0]], possible=[], revision=0, active_seconds=3)
    with pytest.raises(StudyImportError, match="cannot be replaced"):
        pairs_import_file(study=study, data=b"sentence1,sentence2\na,b\n", filename="r.csv", replace=True)
    assert AlignmentPair.objects.filter(study=study).count() == 3


def test_the_researcher_page_shows_import_errors_with_line_numbers(client, researcher, study):
    client.force_login(researcher)
    r = client.post(
        reverse("alignment:import_pairs", kwargs={"study_id": study.pk}),
        {"pairs-file": upload("bad.csv", "sentence1,sentence2\nfine,fine too\n,oops\n")},
    )
    assert r.status_code == 400
    html = r.content.decode()
    assert "Nothing was imported" in html and "bad.csv, line 3, column &#x27;sentence1&#x27;: is empty" in html
    assert not AlignmentPair.objects.filter(study=study).exists()


def test_the_researcher_page_imports_and_counts(client, researcher, study):
    client.force_login(researcher)
    r = client.post(
        reverse("alignment:import_pairs", kwargs={"study_id": study.pk}),
        {"pairs-file": upload("pairs.jsonl", PAIRS_JSONL)},
        follow=True,
    )
    html = r.content.decode()
    assert 'data-count="pairs">3<' in html and 'data-count="groups">2<' in html


def test_the_api_imports_pairs_and_reports_errors(api_client, researcher, study):
    api_client.force_authenticate(researcher)
    url = reverse("alignment-api:pairs_import", kwargs={"study_id": study.pk})
    r = api_client.post(url, {"file": upload("p.csv", "sentence1,sentence2\nok,ok\nbad,\n")}, format="multipart")
    assert r.status_code == 400
    assert r.json()["errors"] == [{"line": 3, "column": "sentence2", "message": "is empty"}]
    r = api_client.post(url, {"file": upload("pairs.jsonl", PAIRS_JSONL)}, format="multipart")
    assert r.status_code == 201 and r.json()["pairs_added"] == 3
    listed = api_client.get(reverse("alignment-api:pair_list", kwargs={"study_id": study.pk})).json()
    assert [p["pair_id"] for p in listed] == ["g1:2", "g1:3", "p3"]

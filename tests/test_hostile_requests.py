"""Hostile requests end in a 400, never a 500: deep JSON, NUL characters, odd line breaks."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile


@pytest.fixture
def logged_in(api_client, researcher):
    api_client.force_authenticate(researcher)
    return api_client


def test_deeply_nested_json_is_a_400(logged_in, study):
    body = "[" * 5000 + "]" * 5000
    r = logged_in.post("/api/studies/create/", body, content_type="application/json")
    assert r.status_code == 400 and "nested too deeply" in r.json()["detail"]


def test_nul_in_json_strings_is_a_400(logged_in):
    r = logged_in.post("/api/studies/create/", json.dumps({"name": "a\x00b"}), content_type="application/json")
    assert r.status_code == 400 and "NUL" in r.json()["detail"]


def test_nul_in_urls_queries_and_forms_is_a_400(client, researcher, study):
    client.force_login(researcher)
    assert client.get(f"/studies/{study.pk}/?q=%00").status_code == 400
    assert client.get("/judge/studies/1/items/%00/").status_code == 400
    assert client.post("/studies/new/", {"name": "x\x00"}).status_code == 400


def test_jsonl_study_import_refuses_nul_and_deep_nesting_with_line_numbers(study):
    from annotation.importing.reading import StudyImportError
    from annotation.importing.studies import parse_study_file

    nul = '{"original_id": "1", "original": "a\\u0000b", "system": "s", "candidate": "c"}\n'
    with pytest.raises(StudyImportError, match="line 1: contains a NUL character"):
        parse_study_file(nul.encode(), filename="d.jsonl")
    deep = '{"original_id": "1", "original": "a", "system": "s", "candidate": "c"}\n' + "[" * 5000 + "]" * 5000 + "\n"
    with pytest.raises(StudyImportError, match="line 2: JSON nested too deeply"):
        parse_study_file(deep.encode(), filename="d.jsonl")


def test_a_lone_surrogate_escape_is_a_400_in_a_body_and_a_named_line_in_an_import(logged_in, study):
    """Found by the import fuzz test: JSON's \\ud800 escape without its other half decodes to
    a lone surrogate, which no database or UTF-8 can hold: the import crashed (500) on the
    insert, and its error answer crashed on rendering. Both are now refused, the import with
    line and column; a complete pair (an emoji) is a character like any other."""
    from annotation.importing.reading import StudyImportError
    from annotation.importing.studies import parse_study_file

    r = logged_in.post("/api/studies/create/", '{"name": "a\\ud800b"}', content_type="application/json")
    assert r.status_code == 400 and "surrogate" in r.json()["detail"]
    good = '{"original_id": "1", "original": "ok", "system": "s", "candidate": "c"}\n'
    lone = '{"original_id": "2", "original": "x\\udf1f", "system": "s", "candidate": "c"}\n'
    with pytest.raises(StudyImportError, match=r"line 2: a \\u escape of half a surrogate pair at character 36"):
        parse_study_file((good + lone).encode(), filename="d.jsonl")
    pair = '{"original_id": "1", "original": "smile \\ud83d\\ude00", "system": "s", "candidate": "c"}\n'
    assert parse_study_file(pair.encode(), filename="d.jsonl").originals["1"].text == "smile \U0001f600"
    escaped = (
        '{"original_id": "1", "original": "a \\\\ud800 b", "system": "s", "candidate": "c"}\n'  # a backslash, then text
    )
    assert parse_study_file(escaped.encode(), filename="d.jsonl").originals["1"].text == "a \\ud800 b"
    r = logged_in.post(
        f"/api/studies/{study.pk}/import/",
        {"file": SimpleUploadedFile("d.jsonl", lone.encode()), "replace": "false"},
        format="multipart",
    )
    assert r.status_code == 400 and "surrogate" in r.content.decode()


def test_jsonl_lines_may_hold_unicode_line_separators_inside_strings():
    from annotation.importing.studies import parse_study_file

    row = {"original_id": "1", "original": "first\u2028second\u0085third", "system": "s", "candidate": "c\u2029d"}
    parsed = parse_study_file((json.dumps(row, ensure_ascii=False) + "\n").encode(), filename="d.jsonl")
    assert parsed.originals["1"].text == "first\u2028second\u0085third"


def test_alignment_json_readers_refuse_deep_nesting_and_keep_unicode_separators():
    from metrics.core.alignment.model import FormatError
    from metrics.core.alignment.table_formats import read_json

    with pytest.raises(FormatError, match="nested too deeply"):
        read_json("[" * 5000 + "]" * 5000)
    # U+2028 raw inside a JSON string does not end the line: the reader gets to judge
    # the token itself (a token may not hold a space of any kind) instead of failing on
    # half a line of JSON.
    line = json.dumps({"tokens1": ["a\u2028b"], "tokens2": ["c"], "sure": [[0, 0]], "possible": []}, ensure_ascii=False)
    with pytest.raises(FormatError, match="tokens1 holds"):
        read_json(line + "\n", jsonl=True)

"""Every class of bad input names the file, line and column; good input parses."""

import pytest

from annotation.importing.reading import StudyImportError, detect_format
from annotation.importing.studies import parse_study_file


def parse(text, filename="data.csv", **kw):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return parse_study_file(data, filename=filename, **kw)


def error_of(text, filename="data.csv", **kw) -> StudyImportError:
    with pytest.raises(StudyImportError) as info:
        parse(text, filename, **kw)
    return info.value


LONG = "original_id,original,system,candidate\n1,The cat sat.,human,A cat was sitting.\n1,The cat sat.,mt,The cat sits.\n2,Go home.,human,Return home.\n"


def test_long_csv_parses_originals_systems_and_candidates():
    p = parse(LONG)
    assert p.layout == "long"
    assert list(p.originals) == ["1", "2"]
    assert p.systems == ["human", "mt"]
    assert [(c.original_id, c.system, c.line) for c in p.candidates] == [
        ("1", "human", 2),
        ("1", "mt", 3),
        ("2", "human", 4),
    ]


def test_wide_tsv_parses_one_column_per_system_with_optional_columns():
    text = (
        "original_id\toriginal\treference\thuman\tmt\n1\tThe cat sat.\tA cat sat.\tA cat was sitting.\tThe cat sits.\n"
    )
    p = parse(text, "data.tsv")
    assert p.layout == "wide"
    assert p.systems == ["human", "mt"]
    assert p.originals["1"].reference == "A cat sat."
    assert len(p.candidates) == 2


def test_jsonl_long_and_wide():
    long = '{"original_id": "a", "original": "Hi.", "system": "s", "candidate": "Hello."}\n\n{"original_id": 7, "original": "Bye.", "system": "s", "candidate": "Goodbye."}\n'
    p = parse(long, "d.jsonl")
    assert p.layout == "long" and list(p.originals) == ["a", "7"]
    wide = '{"original_id": "a", "original": "Hi.", "s1": "Hello.", "s2": "Hey."}\n'
    assert parse(wide, "d.jsonl").systems == ["s1", "s2"]


def test_quoted_multiline_field_reports_the_line_where_its_record_starts():
    text = 'original_id,original,system,candidate\n1,"two\nlines",s,ok\n2,x,s,\n'
    err = error_of(text)
    assert err.issues[0].line == 4 and err.issues[0].column == "candidate"


def test_missing_required_column_is_named():
    err = error_of("original_id,system,candidate\n1,s,c\n")
    assert "data.csv, line 1, column 'original': required column is missing" in str(err)


def test_unknown_column_in_long_layout_is_named():
    err = error_of("original_id,original,system,candidate,score\n1,a,s,b,3\n")
    assert "line 1, column 'score': unknown column" in str(err)


def test_empty_text_names_line_and_column():
    err = error_of("original_id,original,system,candidate\n1,a,s,b\n2, ,s,c\n3,x,s,\n")
    rendered = str(err)
    assert "line 3, column 'original': empty text" in rendered
    assert "line 4, column 'candidate': empty text for system 's'" in rendered


def test_original_id_with_two_texts_names_both_lines():
    err = error_of("original_id,original,system,candidate\n1,a,s,b\n1,different,t,c\n")
    assert "line 3, column 'original': original_id '1' has a different original here than on line 2" in str(err)


def test_duplicate_original_and_system_names_both_lines():
    err = error_of("original_id,original,system,candidate\n1,a,s,b\n1,a,s,c\n")
    assert (
        "line 3, column 'candidate': duplicate candidate: original '1' and system 's' already appeared on line 2"
        in str(err)
    )


def test_bad_encoding_names_the_line_of_the_first_bad_byte():
    data = b"original_id,original,system,candidate\n1,a,s,b\n" + b"2,caf\xe9,s,c\n"
    err = error_of(data)
    assert err.issues[0].line == 3
    assert "not valid UTF-8" in str(err)


def test_file_over_the_size_limit_is_refused_before_parsing():
    err = error_of(LONG, max_bytes=10)
    assert "the limit is 10" in str(err)


def test_ragged_rows_and_bad_json_are_reported_with_lines():
    err = error_of("original_id,original,system,candidate\n1,a,s\n")
    assert "line 2: has 3 fields but the header has 4" in str(err)
    err = error_of('{"original_id": "1", "original": "a", "system": "s", "candidate": "b"}\n{oops\n', "d.jsonl")
    assert "d.jsonl, line 2: not valid JSON" in str(err)


def test_reserved_control_system_names_are_refused():
    err = error_of("original_id,original,system,candidate\n1,a,control:identical,b\n")
    assert "reserved" in str(err)


def test_all_problems_are_listed_at_once():
    err = error_of("original_id,original,system,candidate\n1,,s,b\n2,a,s,\n3,a,,c\n")
    assert [i.line for i in err.issues] == [2, 3, 4]


def test_format_comes_from_extension_or_override():
    assert detect_format("x.tsv") == "tsv"
    assert detect_format("x.data", "jsonl") == "jsonl"
    with pytest.raises(StudyImportError, match="cannot tell the format"):
        detect_format("x.xlsx")


def test_empty_and_header_only_files_are_errors():
    assert "empty" in str(error_of(""))
    assert "no data rows" in str(error_of("original_id,original,system,candidate\n"))

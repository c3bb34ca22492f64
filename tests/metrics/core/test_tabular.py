"""Issue 12, item 4: one reader for tabular input — CSV with quoting, TSV raw, JSON
Lines split on "\\n" only — with the same file/line/column errors everywhere."""

import json

import pytest

from annotation.importing.reading import StudyImportError
from annotation.importing.studies import parse_study_file
from metrics.core.tabular import TabularError, read_table, split_lines


def test_tsv_is_read_raw_so_a_leading_quote_stays_in_its_field():
    text = 'original\tcandidate\n"Hello," she said.\tHi, she said.\nsecond\trow\n'
    table = read_table(text, "tsv", "t.tsv")
    assert [row for _, row in table.rows] == [
        {"original": '"Hello," she said.', "candidate": "Hi, she said."},
        {"original": "second", "candidate": "row"},
    ]
    assert [line for line, _ in table.rows] == [2, 3]


def test_csv_keeps_rfc4180_quoting_with_line_breaks_inside_fields():
    text = 'a,b\n"x, ""y""\nz",2\nlast,3\n'
    table = read_table(text, "csv", "t.csv")
    assert table.rows == [(2, {"a": 'x, "y"\nz', "b": "2"}), (4, {"a": "last", "b": "3"})]


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c"])
def test_jsonl_lines_end_at_newline_only(sep):
    rows = [{"original": f"one{sep}two", "candidate": "x"}, {"original": "three", "candidate": "y"}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    table = read_table(text, "jsonl", "t.jsonl")
    assert table.records() == rows and [line for line, _ in table.rows] == [1, 2]
    assert split_lines("a\r\nb\n") == ["a", "b"]


def test_errors_name_file_line_and_column():
    with pytest.raises(TabularError) as info:
        read_table("a\tb\nx\ty\nonly-one\n", "tsv", "t.tsv", required=("a", "c"))
    text = str(info.value)
    assert "t.tsv, line 1: missing column(s) c" in text
    assert "t.tsv, line 3: has 1 fields but the header has 2" in text
    with pytest.raises(TabularError, match=r"t\.jsonl, line 2, column 'b': missing"):
        read_table('{"a": 1, "b": 2}\n{"a": 3}\n', "jsonl", "t.jsonl", required=("a", "b"))
    with pytest.raises(TabularError, match=r"t\.csv, line 2: malformed CSV"):
        read_table('a,b\n"x"y,1\n', "csv", "t.csv")


def test_the_study_importer_reads_tsv_through_the_same_reader():
    """Before, the study importer read TSV with CSV quoting: a candidate starting with a
    quote swallowed the following rows into one field."""
    text = (
        'original_id\toriginal\tsystem\tcandidate\ns1\tHe said no.\th\t"No," he said.\ns2\tIt rains.\th\tRain falls.\n'
    )
    parsed = parse_study_file(text.encode(), filename="study.tsv")
    assert [c.text for c in parsed.candidates] == ['"No," he said.', "Rain falls."]
    with pytest.raises(StudyImportError, match=r"study\.csv, line 2: malformed CSV"):
        parse_study_file(b'original_id,original,system,candidate\n"s1"x,y,h,c\n', filename="study.csv")

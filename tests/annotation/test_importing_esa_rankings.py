"""ESA span and ranking files: the formats people use parse; hostile input is refused whole, every
problem named with its line and column."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from annotation.importing.reading import StudyImportError
from annotation.judging.protocols.esa.parsers import MAX_SPANS, parse_esa_spans_file
from annotation.judging.protocols.ranking.parsers import parse_rankings_file
from metrics.core.ranking.orders import groups_to_json
from metrics.core.spans.jsonl import annotation_line
from metrics.core.spans.model import ErrorSpan, EsaAnnotation
from metrics.core.spans.offsets import codepoint_to_utf16

ORIGINAL = "I am a tweakment holdout 😀, said the man."
CANDIDATE = "I refuse tweakments 😀 — the man said."
TEXTS = {("o1", "human1"): (ORIGINAL, CANDIDATE), ("o1", "mt"): (ORIGINAL, "كَتَبَ الولدُ الدرسَ.")}


def jsonl(*rows) -> bytes:
    return "\n".join(r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in rows).encode("utf-8")


def issues_of(parse, data, **kw):
    with pytest.raises(StudyImportError) as info:
        parse(data, filename="f.jsonl", **kw)
    return [(i.line, i.column, i.message) for i in info.value.issues]


def _at(text, word):
    start = text.index(word)
    return start, start + len(word)


def test_paraeval_lines_parse_with_code_point_offsets_both_sides_and_the_missing_marker():
    s, e = _at(CANDIDATE, "refuse")
    os_, oe = _at(ORIGINAL, "holdout")
    parsed = parse_esa_spans_file(
        jsonl(
            {
                "judge": "j1",
                "original_id": "o1",
                "system": "human1",
                "score": 70,
                "seconds": 12.5,
                "error_spans": [
                    {"side": "candidate", "start": s, "end": e, "severity": "minor"},
                    {"side": "original", "start": os_, "end": oe, "severity": "Major", "category": "omission"},
                    {"missing": True, "severity": "minor"},
                ],
                "proposed_spans": [{"start": s, "end": e, "severity": "minor", "category": "addition"}],
            }
        ),
        filename="f.jsonl",
        texts=TEXTS,
    )
    (row,) = parsed.rows
    assert (row.judge, row.original_id, row.system, row.score, row.seconds) == ("j1", "o1", "human1", 70.0, 12.5)
    assert row.spans == (
        ErrorSpan("candidate", s, e, "minor"),
        ErrorSpan("original", os_, oe, "major", "omission"),
        ErrorSpan.missing_marker("minor"),
    )
    assert row.proposed == (ErrorSpan("candidate", s, e, "minor", "addition"),)
    assert row.candidate_text == CANDIDATE


def test_appraise_spans_inclusive_utf16_and_missing_convert_to_code_points():
    s, e = _at(CANDIDATE, "man said")  # after the emoji: UTF-16 and code points differ by one
    u_start, u_end = codepoint_to_utf16(CANDIDATE, s), codepoint_to_utf16(CANDIDATE, e)
    assert u_start == s + 1
    parsed = parse_esa_spans_file(
        jsonl(
            {
                "judge": "j1",
                "original_id": "o1",
                "system": "human1",
                "score": 55,
                "candidate": CANDIDATE,
                "error_spans": [
                    {"start_i": u_start, "end_i": u_end - 1, "severity": "major", "error_type": "Accuracy"},
                    {"start_i": "missing", "end_i": "missing", "severity": "minor"},
                ],
            }
        ),
        filename="f.jsonl",
    )
    spans = parsed.rows[0].spans
    assert CANDIDATE[spans[0].start : spans[0].end] == "man said" and spans[0].category == "Accuracy"
    assert spans[1].missing


def test_a_pearmut_output_line_becomes_one_row_per_model_with_its_texts_and_prefilled_spans():
    mt_text = "كَتَبَ الولدُ الدرسَ."
    line = {
        "user_id": "squealing-hit-488",
        "item_i": 0,
        "actions": [],
        "item": [
            {
                "item_id": "o1",
                "src": ORIGINAL,
                "tgt": {"human1": CANDIDATE, "mt": mt_text},
                "error_spans": {"mt": [{"start_i": 0, "end_i": 5, "severity": "minor", "category": None}]},
            }
        ],
        "annotation": [
            {
                "human1": {"score": 90, "error_spans": [], "textfield": None},
                "mt": {
                    "score": 40,
                    "error_spans": [
                        {"start_i": 0, "end_i": 5, "severity": "major", "category": None},
                        {"start_i": len(mt_text), "end_i": len(mt_text), "severity": "minor", "category": None},
                    ],
                },
            }
        ],
    }
    rows = {r.system: r for r in parse_esa_spans_file(jsonl(line), filename="f.jsonl").rows}
    assert set(rows) == {"human1", "mt"} and rows["human1"].judge == "squealing-hit-488"
    major, missing = rows["mt"].spans
    assert mt_text[major.start : major.end] == "كَتَبَ" and missing.missing
    assert rows["mt"].proposed[0].severity == "minor" and rows["mt"].original_text == ORIGINAL


def test_every_problem_is_listed_at_once_with_line_and_column():
    good = {"judge": "j1", "original_id": "o1", "system": "human1", "score": 50, "error_spans": []}
    data = jsonl(
        good,
        "{not json",
        {**good, "judge": "j2", "score": 101},
        {**good, "judge": "j3", "error_spans": [{"start": 5, "end": 2, "severity": "minor"}]},
        {**good, "judge": "j4", "error_spans": [{"start": 0, "end": 3, "severity": "critical"}]},
        {**good, "judge": "j5", "system": "control:identical"},
        good,
        {
            **good,
            "judge": "j6",
            "error_spans": [{"start": 0, "end": 4, "severity": "minor"}, {"start": 2, "end": 6, "severity": "minor"}],
        },
        {**good, "judge": "j7", "colour": "red"},
        {**good, "judge": "j8", "original_id": "nope"},
    )
    found = issues_of(parse_esa_spans_file, data, texts=TEXTS)
    lines = [line for line, _, _ in found]
    assert lines == [2, 3, 4, 5, 7, 8, 9, 10]  # line 6, a control's annotation, is skipped
    by_line = {line: (col, msg) for line, col, msg in found}
    assert "not valid JSON" in by_line[2][1]
    assert by_line[3][0] == "score"
    assert by_line[4][0] == "error_spans[0]" and "not inside the text" in by_line[4][1]
    assert by_line[5][0] == "error_spans[0].severity"
    assert "line 1" in by_line[7][1]  # the duplicate names the first line
    assert "overlap" in by_line[8][1]
    assert "colour" in by_line[9][1]
    assert by_line[10][0] == "original_id" and "no candidate" in by_line[10][1]


@pytest.mark.parametrize(
    "span, words",
    [
        ({"start": 0, "end": 1, "severity": "minor"}, "splits the character"),  # kaf without its fatha
        ({"start": True, "end": 2, "severity": "minor"}, "whole numbers"),
        ({"start": 0, "end": 2.0, "severity": "minor"}, "whole numbers"),
        ({"start": 0, "end": 10**30, "severity": "minor"}, "not inside the text"),
        ({"start": 0, "end": 2, "severity": "minor", "side": "reference"}, "side must be"),
        ({"start": 0, "end": 2, "start_i": 0, "severity": "minor"}, "not both"),
        ({"start": 0, "end": 2, "severity": "minor", "category": "x" * 500}, "category"),
        ({"missing": True, "side": "original", "severity": "minor"}, "candidate side"),
        ([1, 2], "an object"),
    ],
)
def test_hostile_spans_are_refused_with_a_reason(span, words):
    data = jsonl({"judge": "j1", "original_id": "o1", "system": "mt", "error_spans": [span]})
    ((line, column, message),) = issues_of(parse_esa_spans_file, data, texts=TEXTS)
    assert line == 1 and column.startswith("error_spans[0]") and words in message


def test_utf16_offsets_inside_a_surrogate_pair_or_without_a_text_are_refused():
    inside = codepoint_to_utf16(CANDIDATE, CANDIDATE.index("😀")) + 1
    data = jsonl(
        {
            "judge": "j1",
            "original_id": "o1",
            "system": "human1",
            "offsets": "utf16",
            "candidate": CANDIDATE,
            "error_spans": [{"start": 0, "end": inside, "severity": "minor"}],
        },
        {
            "judge": "j2",
            "original_id": "o1",
            "system": "human1",
            "offsets": "utf16",
            "error_spans": [{"start": 0, "end": 2, "severity": "minor"}],
        },
        {"judge": "j3", "original_id": "o1", "system": "human1", "offsets": "bytes", "error_spans": []},
    )
    found = issues_of(parse_esa_spans_file, data)
    assert "surrogate pair" in found[0][2] and "need the text" in found[1][2] and found[2][1] == "offsets"


def test_hostile_files_are_refused_before_work_or_as_a_whole():
    assert "limit" in issues_of(parse_esa_spans_file, b"x" * 101, max_bytes=100)[0][2]
    assert "UTF-8" in issues_of(parse_esa_spans_file, b'{"judge": "\xff"}')[0][2]
    assert "no annotations" in issues_of(parse_esa_spans_file, b"\n\n")[0][2]
    huge = b'{"judge": "j1", "original_id": "o1", "system": "s", "score": ' + b"9" * 5000 + b', "error_spans": []}'
    assert "too many digits" in issues_of(parse_esa_spans_file, huge)[0][2]
    nan = b'{"judge": "j1", "original_id": "o1", "system": "s", "score": NaN, "error_spans": []}'
    assert issues_of(parse_esa_spans_file, nan)[0][1] == "score"
    deep = b'{"judge": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert issues_of(parse_esa_spans_file, deep)[0][0] == 1
    many = jsonl(
        {
            "judge": "j1",
            "original_id": "o1",
            "system": "s",
            "error_spans": [{"start": k, "end": k + 1, "severity": "minor"} for k in range(MAX_SPANS + 1)],
        }
    )
    assert "at most" in issues_of(parse_esa_spans_file, many)[0][2]
    bloated = jsonl({"judge": "j1", "original_id": "o1", "system": "s", "score": "x" * 1_000_000, "error_spans": []})
    assert len(issues_of(parse_esa_spans_file, bloated)[0][2]) < 200  # a bad value is quoted short
    nul = b'{"judge": "j\\u0000", "original_id": "o1", "system": "s", "error_spans": []}'
    assert "NUL" in issues_of(parse_esa_spans_file, nul)[0][2]


def test_rankings_parse_ties_as_nested_lists_with_optional_scores():
    parsed = parse_rankings_file(
        jsonl(
            {
                "judge": "j1",
                "original_id": "o1",
                "ranking": ["human1", ["mt", "para"], "lm"],
                "scores": {"human1": 90, "mt": 60, "para": 60},
                "seconds": 30,
            },
            {"judge": "j2", "original_id": 7, "ranking": [["a", "b"], "c"]},
        ),
        filename="r.jsonl",
    )
    first, second = parsed.rows
    assert first.groups == (("human1",), ("mt", "para"), ("lm",)) and first.scores["mt"] == 60.0
    assert second.original_id == "7" and second.scores == {}


def test_ranking_problems_are_all_listed_with_line_and_column():
    systems = {"o1": {"a", "b", "c"}}
    data = jsonl(
        {"judge": "j1", "original_id": "o1", "ranking": ["a", "b", "c"]},
        {"judge": "j1", "original_id": "o1", "ranking": ["c", "b", "a"]},
        {"judge": "j2", "original_id": "o1", "ranking": ["a", "a", "c"]},
        {"judge": "j3", "original_id": "o1", "ranking": ["a", ["b", ["c"]]]},
        {"judge": "j4", "original_id": "o1", "ranking": ["a", "b", "d"]},
        {"judge": "j5", "original_id": "o2", "ranking": ["a", "b", "c"]},
        {"judge": "j6", "original_id": "o1", "ranking": ["a", "b", "c"], "scores": {"a": 150, "z": 3}},
        {"judge": "j7", "original_id": "o1", "ranking": "a > b > c"},
        {"judge": "j8", "original_id": "o1", "ranking": ["a", "b", "control:copy"]},
        {"judge": "j9", "original_id": "o1", "ranking": ["a", "b"]},
    )
    found = issues_of(parse_rankings_file, data, systems=systems, k=3)
    by_line: dict = {}
    for line, column, message in found:
        by_line.setdefault(line, []).append((column, message))
    assert sorted(by_line) == [2, 3, 4, 5, 6, 7, 8, 9, 10]
    assert "line 1" in by_line[2][0][1]
    assert "twice" in by_line[3][0][1] and by_line[3][0][0] == "ranking"
    assert "one level" in by_line[4][0][1]
    assert "d" in by_line[5][0][1]
    assert "no original" in by_line[6][0][1]
    assert {c for c, _ in by_line[7]} == {"scores.a", "scores.z"}
    assert "is a list" in by_line[8][0][1]
    assert any("reserved" in m for _, m in by_line[9])
    assert any("3 at once" in m for _, m in by_line[10])


def test_ranking_files_refuse_oversized_and_overlong_input():
    assert "limit" in issues_of(parse_rankings_file, b"x" * 11, max_bytes=10)[0][2]
    long = jsonl({"judge": "j1", "original_id": "o1", "ranking": [f"s{k}" for k in range(500)]})
    assert "at most" in issues_of(parse_rankings_file, long)[0][2]


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "judge",
                    "original_id",
                    "system",
                    "score",
                    "error_spans",
                    "proposed_spans",
                    "start",
                    "end",
                    "start_i",
                    "end_i",
                    "severity",
                    "side",
                    "missing",
                    "category",
                    "offsets",
                    "candidate",
                    "ranking",
                    "scores",
                    "seconds",
                    "user_id",
                    "item",
                    "annotation",
                    "tgt",
                    "src",
                    "item_id",
                ]
            ),
            inner,
            max_size=6,
        )
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_json, min_size=1, max_size=3) | st.binary(max_size=200))
def test_any_input_either_parses_or_is_refused_with_located_issues(value):
    data = value if isinstance(value, bytes) else "\n".join(json.dumps(v) for v in value).encode()
    for parse in (parse_esa_spans_file, parse_rankings_file):
        try:
            parse(data, filename="f.jsonl")
        except StudyImportError as exc:
            assert exc.issues and all(len(i.message) < 400 for i in exc.issues)


@settings(max_examples=300, deadline=None)
@given(score=_json, spans=st.lists(_json, max_size=3), ranking=_json, item=_json, offsets=_json)
def test_well_shaped_lines_with_hostile_fields_never_crash(score, spans, ranking, item, offsets):
    lines = [
        {
            "judge": "j1",
            "original_id": "o1",
            "system": "human1",
            "score": score,
            "error_spans": spans,
            "candidate": CANDIDATE,
            "original": ORIGINAL,
            "offsets": offsets,
        },
        {
            "user_id": "u",
            "item": [{"item_id": "o1", "src": ORIGINAL, "tgt": {"m": CANDIDATE}}, item],
            "annotation": [{"m": {"score": score, "error_spans": spans}}, {"m": item}],
        },
    ]
    for line in lines:
        try:
            parse_esa_spans_file(jsonl(line), filename="f.jsonl")
        except StudyImportError as exc:
            assert exc.issues
    try:
        parse_rankings_file(
            jsonl({"judge": "j1", "original_id": "o1", "ranking": ranking, "scores": score}), filename="r.jsonl"
        )
    except StudyImportError as exc:
        assert exc.issues


@pytest.mark.parametrize("style, offsets", [("paraeval", "codepoint"), ("paraeval", "utf16"), ("appraise", "utf16")])
def test_exported_lines_read_back_to_the_same_spans(style, offsets):
    candidate = "كَتَبَ الولدُ 😀 الدرسَ 👩‍👩‍👧 بسرعة."
    s1, e1 = _at(candidate, "الولدُ")
    s2, e2 = _at(candidate, "👩‍👩‍👧 بسرعة")
    spans = (
        ErrorSpan("candidate", s1, e1, "minor", "fluency"),
        ErrorSpan("candidate", s2, e2, "major"),
        ErrorSpan.missing_marker("minor"),
    )
    if style == "paraeval":
        spans += (ErrorSpan("original", *_at(ORIGINAL, "holdout"), "major", "omission"),)
    annotation = EsaAnnotation(
        "j1",
        "o1",
        "o1",
        "mt",
        spans,
        35.0,
        seconds=20.0,
        proposed=(ErrorSpan("candidate", s1, e1, "minor", "addition"),),
    )
    line = annotation_line(annotation, ORIGINAL, candidate, style=style, offsets=offsets)
    (row,) = parse_esa_spans_file(line.encode("utf-8"), filename="f.jsonl").rows
    assert row.spans == spans and row.proposed == annotation.proposed
    assert (row.judge, row.original_id, row.system, row.score, row.seconds) == ("j1", "o1", "mt", 35.0, 20.0)


def test_appraise_style_cannot_carry_spans_on_the_original():
    annotation = EsaAnnotation("j1", "o1", "o1", "mt", (ErrorSpan("original", 0, 1, "minor"),), 35.0)
    with pytest.raises(ValueError, match="candidate only"):
        annotation_line(annotation, ORIGINAL, CANDIDATE, style="appraise")


def test_a_ranking_written_with_groups_to_json_reads_back():
    groups = (("human1",), ("mt", "para"), ("lm",))
    line = jsonl({"judge": "j1", "original_id": "o1", "ranking": groups_to_json(groups)})
    assert parse_rankings_file(line, filename="r.jsonl").rows[0].groups == groups


def test_annotations_of_paraevals_controls_are_skipped_and_counted_not_refused():
    good = {"judge": "j1", "original_id": "o1", "system": "human1", "score": 50, "error_spans": []}
    control = {**good, "system": "control:unigram", "candidate": "not the study's text", "score": 7}
    parsed = parse_esa_spans_file(jsonl(good, control, {**control, "system": "Control:identical"}), filename="f.jsonl")
    assert [r.system for r in parsed.rows] == ["human1"] and parsed.controls_skipped == 2
    with pytest.raises(StudyImportError) as exc:
        parse_esa_spans_file(jsonl(control), filename="f.jsonl", texts=TEXTS)
    assert "only annotations of paraeval's controls" in exc.value.issues[0].message

"""Alignment value type and its file formats (Pharaoh, NAACL, JSON/JSONL, CSV)."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.core.alignment.io import dumps, loads
from metrics.core.alignment.model import FORMATS, Alignment, FormatError, Link
from metrics.core.alignment.table_formats import read_csv, read_json
from metrics.core.alignment.text_formats import read_naacl, read_pharaoh, write_naacl, write_pharaoh

T1 = ("In", "the", "beginning", "was", "the", "Word")
T2 = ("The", "Word", "was", "there", "at", "first")


def test_sure_and_possible_are_stored_disjointly_and_sure_wins():
    a = Alignment(T1, T2, frozenset({(5, 1), (3, 2)}), frozenset({(3, 2), (2, 5)}))
    assert a.sure == {(5, 1), (3, 2)}
    assert a.possible == {(2, 5)}
    assert a.links == {(5, 1), (3, 2), (2, 5)}
    assert a.link_list() == [Link(2, 5, False), Link(3, 2, True), Link(5, 1, True)]


def test_links_outside_the_grid_are_rejected_naming_the_link():
    with pytest.raises(ValueError, match=r"link 6-0 lies outside the 6×6 grid"):
        Alignment(T1, T2, frozenset({(6, 0)}))
    with pytest.raises(ValueError, match="negative"):
        Alignment(None, None, frozenset({(-1, 0)}))
    with pytest.raises(ValueError, match="both token sequences"):
        Alignment(T1, None)


def test_from_links_accepts_link_values_and_plain_pairs():
    a = Alignment.from_links(T1, T2, [Link(0, 4, False), (1, 0), (5, 1, True)])
    assert a.sure == {(1, 0), (5, 1)} and a.possible == {(0, 4)}


def test_to_dict_and_from_dict_are_inverse():
    a = Alignment(T1, T2, frozenset({(0, 4)}), frozenset({(5, 1)}))
    assert Alignment.from_dict(a.to_dict()) == a
    with pytest.raises(FormatError, match="outside"):
        Alignment.from_dict({"tokens1": ["a"], "tokens2": ["b"], "sure": [[1, 0]]})


def test_shape_without_tokens_is_the_smallest_grid_holding_the_links():
    assert Alignment(None, None, frozenset({(2, 7)})).shape == (3, 8)
    assert Alignment(T1, T2).shape == (6, 6)


# ---------------------------------------------------------------- Pharaoh


def test_pharaoh_reads_sure_and_possible_links_one_pair_per_line():
    out = read_pharaoh("0-0 1p2\n\n3-1\n")
    assert len(out) == 3
    assert out[0].sure == {(0, 0)} and out[0].possible == {(1, 2)}
    assert out[1].links == frozenset()
    assert out[2].sure == {(3, 1)}


def test_pharaoh_error_names_line_and_column_of_a_bad_link():
    with pytest.raises(FormatError) as err:
        read_pharaoh("0-0\n0-1 2x3\n")
    assert err.value.line == 2 and err.value.column == 5
    assert "'2x3'" in str(err.value) and str(err.value).startswith("line 2, column 5")


def test_pharaoh_links_are_checked_against_known_tokens():
    pairs = [(T1, T2), (("a", "b"), ("c",))]
    with pytest.raises(FormatError) as err:
        read_pharaoh("0-0\n1-0 0-1\n", pairs=pairs)
    assert err.value.line == 2 and err.value.column == 5 and "'0-1'" in str(err.value)
    assert "2×1" in str(err.value)


def test_pharaoh_line_count_must_match_the_pairs():
    with pytest.raises(FormatError, match="1 alignment lines for 2 sentence pairs"):
        read_pharaoh("0-0\n", pairs=[(T1, T2), (T1, T2)])
    with pytest.raises(FormatError, match="more alignment lines"):
        read_pharaoh("0-0\n0-0\n", pairs=[(T1, T2)])


def test_pharaoh_reading_is_all_or_nothing():
    with pytest.raises(FormatError):
        read_pharaoh(["0-0", "1-1", "oops"])


# ---------------------------------------------------------------- NAACL


def test_naacl_is_one_based_with_optional_kind_and_confidence():
    text = "1 1 1\n1 2 3 P\n2 4 2 S 0.75\n3 1 1 0.5\n"
    out = read_naacl(text)
    assert [a.sure for a in out] == [{(0, 0)}, {(3, 1)}, {(0, 0)}]
    assert out[0].possible == {(1, 2)}


def test_naacl_null_links_mean_unaligned_and_add_no_cell():
    out = read_naacl("1 0 3 S\n1 2 2\n", n_pairs=2)
    assert out[0].links == {(1, 1)} and out[1].links == frozenset()


def test_naacl_errors_name_line_and_column():
    with pytest.raises(FormatError) as err:
        read_naacl("1 1 1\n1 x 2 S\n")
    assert (err.value.line, err.value.column) == (2, 3)
    with pytest.raises(FormatError, match="1-based") as err:
        read_naacl("0 1 1\n")
    assert err.value.line == 1
    with pytest.raises(FormatError, match="confidence"):
        read_naacl("1 1 1 S maybe\n")
    with pytest.raises(FormatError, match="outside the 2×1 grid") as err:
        read_naacl("\n1 2 2\n", pairs=[(("a", "b"), ("c",))])
    assert err.value.line == 2
    with pytest.raises(FormatError, match="beyond the 1 sentence pairs"):
        read_naacl("2 1 1\n", n_pairs=1)


# ---------------------------------------------------------------- JSON / CSV


def test_json_accepts_a_list_a_single_object_or_jsonl():
    obj = {"tokens1": ["a", "b"], "tokens2": ["c"], "sure": [[0, 0]], "possible": [[1, 0]]}
    one = read_json(json.dumps(obj))
    many = read_json(json.dumps([obj, obj]))
    lines = read_json(json.dumps(obj) + "\n\n" + json.dumps(obj) + "\n")
    assert one[0] == many[1] == lines[1]
    assert one[0].possible == {(1, 0)} and one[0].tokens1 == ("a", "b")


def test_json_errors_name_the_pair_line_and_link():
    good = json.dumps({"tokens1": ["a"], "tokens2": ["b"], "sure": [[0, 0]]})
    bad = json.dumps({"tokens1": ["a"], "tokens2": ["b"], "sure": [[0, 1]]})
    with pytest.raises(FormatError) as err:
        read_json(good + "\n" + bad + "\n", jsonl=True)
    assert err.value.line == 2 and "pair 1" in str(err.value) and "[0, 1]" in str(err.value)
    with pytest.raises(FormatError) as err:
        read_json('[{"sure": [[0, 0]]},\n {"sure": [[0, "1"]]}]')
    assert "pair 1" in str(err.value)
    with pytest.raises(FormatError) as err:
        read_json('{"sure": [[0, 0]\n')
    assert err.value.line is not None
    with pytest.raises(FormatError, match="unknown field"):
        read_json('{"sure": [], "sureness": []}')


def test_csv_reads_rows_and_checks_header_and_kind():
    out = read_csv("pair,i,j,kind\n0,0,0,sure\n2,1,0,possible\n")
    assert len(out) == 3 and out[2].possible == {(1, 0)} and out[1].links == frozenset()
    with pytest.raises(FormatError, match="header"):
        read_csv("0,0,0,sure\n")
    with pytest.raises(FormatError) as err:
        read_csv("pair,i,j,kind\n0,0,0,sure\n0,1,1,maybe\n")
    assert (err.value.line, err.value.column) == (3, 4)


def test_loads_json_merges_given_pairs_and_detects_disagreement():
    text = json.dumps([{"sure": [[0, 0]]}])
    out = loads(text, "json", pairs=[(("x",), ("y",))])
    assert out[0].tokens1 == ("x",)
    with pytest.raises(FormatError, match="pair 0"):
        loads(json.dumps([{"sure": [[1, 0]]}]), "json", pairs=[(("x",), ("y",))])
    with pytest.raises(ValueError, match="unknown alignment format"):
        loads("", "giza")


def test_writers_sort_links():
    a = Alignment(None, None, frozenset({(2, 1), (0, 0)}), frozenset({(1, 3)}))
    assert write_pharaoh([a]) == "0-0 1p3 2-1\n"
    assert write_naacl([a]) == "1 1 1 S\n1 2 4 P\n1 3 2 S\n"


# ---------------------------------------------------------------- round trips

token = st.text(alphabet="abcdefghijklmnopqrstuvwxyzé’,.", min_size=1, max_size=4)


@st.composite
def alignments(draw):
    n1 = draw(st.integers(1, 7))
    n2 = draw(st.integers(1, 7))
    t1 = draw(st.lists(token, min_size=n1, max_size=n1))
    t2 = draw(st.lists(token, min_size=n2, max_size=n2))
    cells = st.tuples(st.integers(0, n1 - 1), st.integers(0, n2 - 1))
    sure = draw(st.frozensets(cells, max_size=10))
    possible = draw(st.frozensets(cells, max_size=10))
    return Alignment(tuple(t1), tuple(t2), sure, possible - sure)


@settings(max_examples=60, deadline=None)
@given(st.lists(alignments(), max_size=5), st.sampled_from(FORMATS))
def test_every_format_round_trips_without_loss(aligns, fmt):
    text = dumps(aligns, fmt)
    pairs = [(a.tokens1, a.tokens2) for a in aligns]
    back = loads(text, fmt, pairs=pairs)
    assert back == aligns
    if fmt in ("json", "jsonl"):
        assert loads(text, fmt) == aligns  # tokens travel inside the file

"""The shipped demo alignment groups (fixtures/alignment/demo_groups.jsonl.gz)."""

from pathlib import Path

import pytest

from metrics.core.alignment.io import load_groups
from metrics.core.alignment.model import Alignment, FormatError
from metrics.core.text import TOKENIZER_VERSION, tokenize

DEMO = Path(__file__).resolve().parents[3] / "fixtures" / "alignment" / "demo_groups.jsonl.gz"


def test_demo_has_fifty_john_groups_against_web_and_two_machine_systems():
    groups = load_groups(DEMO)
    assert len(groups) == 50
    assert len({g["group"] for g in groups}) == 50
    for g in groups:
        assert g["group"].startswith("John ") and g["tokenizer"] == TOKENIZER_VERSION
        assert g["key"]["system"] == "kjv" and g["key"]["tokens"] == tokenize(g["key"]["text"])
        assert 8 <= len(g["key"]["tokens"]) <= 30
        web, *machine = g["members"]
        assert [m["system"] for m in g["members"]] == ["web", "synonyms", "pivot-mt"]
        assert web["tokens"] == tokenize(web["text"]) and 8 <= len(web["tokens"]) <= 30
        assert set(web["alignments"]) == {"pivot", "paraeval-aligner"}
        assert web["alignments"]["pivot"].links  # Strong's tags link something in every verse
        for m in machine:  # machine outputs carry no Strong's tags: the aligner only
            assert m["tokens"] == tokenize(m["text"]) and set(m["alignments"]) == {"paraeval-aligner"}
        for m in g["members"]:
            for a in m["alignments"].values():
                assert isinstance(a, Alignment) and a.tokens1 == tuple(g["key"]["tokens"])
                assert a.tokens2 == tuple(m["tokens"])


def test_load_groups_names_the_line_of_a_bad_link(tmp_path):
    bad = tmp_path / "g.jsonl"
    bad.write_text(
        '{"group": "x", "key": {"tokens": ["a"]}, "members": []}\n'
        '{"group": "y", "key": {"tokens": ["a"]}, "members": [{"tokens": ["b"], '
        '"alignments": {"pivot": {"sure": [[0, 3]]}}}]}\n',
        encoding="utf-8",
    )
    with pytest.raises(FormatError) as err:
        load_groups(bad)
    assert err.value.line == 2 and "0-3" in str(err.value)

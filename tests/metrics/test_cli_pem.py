"""``manage.py build_phrase_table`` and ``manage.py build_lm`` (no database needed)."""

from io import StringIO

import kenlm
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from metrics.core.lm.estimate import estimate_kneser_ney, lm_tokens
from metrics.core.phrase_table import PhraseTable, build_phrase_table

CORPUS = "the houses fell\tlas casas cayeron\nthe house stands\tla casa está\n"
ALIGN = "0-0 1-1 2-2\n0-0 1-1 2p2\n"


def run(name, *args):
    buf = StringIO()
    call_command(name, *args, stdout=buf)
    return buf.getvalue()


@pytest.fixture
def files(tmp_path):
    (tmp_path / "corpus.tsv").write_text(CORPUS, encoding="utf-8")
    (tmp_path / "align.txt").write_text(ALIGN, encoding="utf-8")
    return tmp_path


def test_build_phrase_table_counts_what_the_library_counts(files):
    out = files / "pt.tsv.gz"
    msg = run(
        "build_phrase_table",
        "--corpus",
        str(files / "corpus.tsv"),
        "--alignments",
        str(files / "align.txt"),
        "--out",
        str(out),
    )
    assert "phrase pairs" in msg
    table = PhraseTable.load(out)
    pairs = [(line.split("\t")[0].split(), line.split("\t")[1].split()) for line in CORPUS.splitlines()]
    links = [{(0, 0), (1, 1), (2, 2)}, {(0, 0), (1, 1), (2, 2)}]  # possible links count too
    expected = build_phrase_table((e, f, a) for (e, f), a in zip(pairs, links))
    got = {(e, f): round(p * table.count_e(e)) for e in table.english for f, p in table.translations(e)}
    assert got == dict(expected)
    assert table.count_e("hous") == 2  # "houses" and "house" share a Porter stem


def test_build_phrase_table_converts_a_moses_table(tmp_path):
    moses = tmp_path / "phrase-table"
    moses.write_text("houses ||| casas ||| 1 1 1 1 ||| 0-0 ||| 4 3 2\n", encoding="utf-8")
    out = tmp_path / "pt.tsv"
    run("build_phrase_table", "--moses", str(moses), "--out", str(out))
    assert PhraseTable.load(out).translations("hous") == [("casas", 1.0)]


@pytest.mark.parametrize(
    "corpus, align, message",
    [
        ("only one field\n", "0-0\n", "line 1: expected english<TAB>pivot"),
        (CORPUS, "0-0 1-1 2-2\n", "1 alignment lines for 2 sentence pairs"),
        (CORPUS, "0-0 1-9\n0-0\n", "line 1"),
        (CORPUS, "0-0 x\n0-0\n", "not a link"),
        (" \tlas casas\n", "0-0\n", "english sentence is empty"),
    ],
)
def test_build_phrase_table_rejects_bad_input_with_one_line(tmp_path, corpus, align, message):
    (tmp_path / "c.tsv").write_text(corpus, encoding="utf-8")
    (tmp_path / "a.txt").write_text(align, encoding="utf-8")
    with pytest.raises(CommandError, match=message) as err:
        run(
            "build_phrase_table",
            "--corpus",
            str(tmp_path / "c.tsv"),
            "--alignments",
            str(tmp_path / "a.txt"),
            "--out",
            str(tmp_path / "o.tsv"),
        )
    assert "\n" not in str(err.value)


def test_build_phrase_table_needs_its_inputs(tmp_path):
    with pytest.raises(CommandError, match="--corpus and --alignments are required"):
        run("build_phrase_table", "--out", str(tmp_path / "o.tsv"))
    with pytest.raises(CommandError, match="cannot read corpus file"):
        run(
            "build_phrase_table",
            "--corpus",
            str(tmp_path / "nope"),
            "--alignments",
            str(tmp_path / "nope"),
            "--out",
            str(tmp_path / "o.tsv"),
        )


def test_build_lm_writes_an_arpa_that_kenlm_reads(tmp_path):
    lines = ["The cat sat on the mat.", "The dog sat on the log.", "A cat saw the dog!"] * 4
    text = tmp_path / "train.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "m.arpa"
    msg = run("build_lm", "--text", str(text), "--order", "3", "--out", str(out))
    assert "3-grams" in msg
    lm = kenlm.Model(str(out))
    ours = estimate_kneser_ney([lm_tokens(s) for s in lines], order=3)
    sent = lm_tokens("The cat sat on the log.")
    assert lm.order == 3
    assert lm.score(" ".join(sent), bos=True, eos=True) == pytest.approx(ours.sentence_logprob(sent), abs=1e-4)


def test_build_lm_errors_are_one_line_and_exit_non_zero(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(CommandError, match="empty corpus"):
        run("build_lm", "--text", str(empty), "--out", str(tmp_path / "m.arpa"))
    with pytest.raises(CommandError, match="no such file"):
        run("build_lm", "--text", str(tmp_path / "missing.txt"), "--out", str(tmp_path / "m.arpa"))
    with pytest.raises(CommandError, match="--order"):
        run("build_lm", "--text", str(empty), "--order", "0", "--out", str(tmp_path / "m.arpa"))
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"caf\xe9\n")
    # CommandError is what Django turns into one stderr line and exit status 1.
    with pytest.raises(CommandError, match="not UTF-8") as err:
        run("build_lm", "--text", str(bad), "--out", str(tmp_path / "m.arpa"))
    assert "\n" not in str(err.value)

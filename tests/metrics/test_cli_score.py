"""``manage.py score`` and ``manage.py metrics`` (no database needed)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import sacrebleu
from django.core.management import call_command
from django.core.management.base import CommandError

from metrics.core.base.signature import parse_signature

ORIGINALS = ["The cat sat on the mat.", "In the beginning God created the heaven and the earth."]
CANDIDATES = ['A cat sat on a "mat".', "In the beginning, God created the heavens and the earth."]
REFERENCES = ["A cat was on the mat.", "At first God made the sky and the land."]


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


@pytest.fixture
def tsv(tmp_path):
    path = tmp_path / "pairs.tsv"
    rows = ["original\tcandidate\treference"] + [f"{o}\t{c}\t{r}" for o, c, r in zip(ORIGINALS, CANDIDATES, REFERENCES)]
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_json_output_equals_sacrebleu(tsv):
    out, _ = run("score", "--metric", "bleu", "--input", str(tsv), "--json")
    data = json.loads(out)
    assert set(data) == {"metric", "signature", "scores", "corpus"}
    assert data["metric"] == "bleu"
    assert data["scores"] == [sacrebleu.sentence_bleu(c, [o]).score for o, c in zip(ORIGINALS, CANDIDATES)]
    assert data["corpus"] == sacrebleu.corpus_bleu(CANDIDATES, [ORIGINALS]).score
    assert parse_signature(data["signature"])["metric"] == "bleu"


def test_params_and_the_reference_column(tsv):
    out, _ = run(
        "score",
        "--metric",
        "bleu",
        "--param",
        "against=reference",
        "--param",
        "lowercase=true",
        "--input",
        str(tsv),
        "--json",
    )
    data = json.loads(out)
    assert data["scores"] == [
        sacrebleu.sentence_bleu(c, [r], lowercase=True).score for c, r in zip(CANDIDATES, REFERENCES)
    ]
    assert parse_signature(data["signature"])["against"] == "reference"


def test_rows_are_written_back_with_a_score_column(tsv, tmp_path):
    out, err = run("score", "--metric", "pinc", "--input", str(tsv))
    lines = out.splitlines()
    assert lines[0] == "original\tcandidate\treference\tscore"
    assert lines[1].startswith(f"{ORIGINALS[0]}\t{CANDIDATES[0]}\t")  # the quote in the text survives
    assert "pinc corpus score" in err and "signature metric:pinc" in err
    target = tmp_path / "scored.csv"
    run("score", "--metric", "pinc", "--input", str(tsv), "--output", str(target))
    import csv

    with open(target, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["candidate"] for r in rows] == CANDIDATES
    assert all(0.0 <= float(r["score"]) <= 1.0 for r in rows)


def test_csv_and_jsonl_inputs(tmp_path):
    import csv

    path = tmp_path / "pairs.csv"
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["candidate", "original"])
        w.writerows(zip(CANDIDATES, ORIGINALS))
    from_csv = json.loads(run("score", "--metric", "chrf", "--input", str(path), "--json")[0])
    jl = tmp_path / "pairs.jsonl"
    jl.write_text("\n".join(json.dumps({"original": o, "candidate": c}) for o, c in zip(ORIGINALS, CANDIDATES)))
    from_jsonl = json.loads(run("score", "--metric", "chrf", "--input", str(jl), "--json")[0])
    assert (
        from_csv["scores"]
        == from_jsonl["scores"]
        == [sacrebleu.sentence_chrf(c, [o]).score for o, c in zip(ORIGINALS, CANDIDATES)]
    )
    out, _ = run("score", "--metric", "chrf", "--input", str(jl))
    assert [json.loads(line)["score"] for line in out.splitlines()] == from_jsonl["scores"]
    # --format overrides the extension.
    odd = tmp_path / "pairs.txt"
    odd.write_text(jl.read_text())
    assert (
        json.loads(run("score", "--metric", "chrf", "--input", str(odd), "--format", "jsonl", "--json")[0])
        == from_jsonl
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["--metric", "blue"], "unknown metric 'blue'; known metrics: bertscore, bleu"),
        (["--metric", "bleu", "--param", "colour=red"], "unknown parameter 'colour'"),
        (["--metric", "bleu", "--param", "lowercase"], "--param expects KEY=VALUE"),
        (["--metric", "bleu", "--param", "max_ngram_order=x"], "'max_ngram_order' must be int"),
        (["--metric", "weem4pg", "--resource", "vectors=/no/such/file.txt"], "cannot read '/no/such/file.txt'"),
        (["--metric", "weem4pg", "--resource", "vecs=/tmp"], "unknown resource 'vecs'"),
    ],
)
def test_bad_requests_are_one_line_errors(tsv, args, message):
    with pytest.raises(CommandError) as exc:
        run("score", *args, "--input", str(tsv))
    assert message in str(exc.value)
    assert "\n" not in str(exc.value)


def test_bad_files_are_one_line_errors(tmp_path):
    missing_col = tmp_path / "a.tsv"
    missing_col.write_text("original\ttext\nx\ty\n")
    latin1 = tmp_path / "b.tsv"
    latin1.write_bytes("original\tcandidate\ncaf\xe9\tcafe\n".encode("latin-1"))
    ragged = tmp_path / "c.tsv"
    ragged.write_text("original\tcandidate\nx\ty\tz\n")
    no_ref = tmp_path / "d.tsv"
    no_ref.write_text("original\tcandidate\treference\nx\ty\tz\nx\ty\t\n")
    cases = [
        (missing_col, [], "missing column(s) candidate"),
        # the shared reader's messages (metrics.core.tabular): file, line, what is wrong
        (latin1, [], "b.tsv, line 2: not valid UTF-8"),
        (ragged, [], "c.tsv, line 2: has 3 fields but the header has 2"),
        (no_ref, ["--param", "against=reference"], "line 3 has no reference"),
        (tmp_path / "absent.tsv", [], "no such file"),
        (tmp_path / "x.xlsx", [], "unknown file type '.xlsx'"),
    ]
    for path, extra, message in cases:
        with pytest.raises(CommandError) as exc:
            run("score", "--metric", "bleu", *extra, "--input", str(path))
        assert message in str(exc.value), (path, str(exc.value))


def test_metrics_lists_every_slug_with_params_and_defaults():
    out, _ = run("metrics")
    for slug in ("bleu", "chrf", "ter", "pinc", "ibleu", "target-f1", "weem4pg", "paraphrase-bleu"):
        assert f"\n{slug}: " in "\n" + out
    assert "alpha=0.9" in out and "against=original" in out
    data = json.loads(run("metrics", "--json")[0])
    ibleu = next(e for e in data if e["slug"] == "ibleu")
    assert ibleu["needs_reference"] is True
    assert {
        "name": "alpha",
        "type": "float",
        "default": 0.9,
        "choices": None,
        "help": "weight α of BLEU against the reference",
    } in ibleu["params"]
    assert [e["slug"] for e in data] == sorted(e["slug"] for e in data)


@pytest.mark.parametrize("sep", ["\u2028", "\u0085"])
def test_score_reads_back_its_own_jsonl_output_when_a_text_holds_a_unicode_line_separator(tmp_path, sep):
    """Issue 12: JSONL was split with str.splitlines(), which breaks at U+2028/U+0085."""
    src = tmp_path / "in.jsonl"
    rows = [
        {"original": f"The cat{sep}sat on the mat.", "candidate": "A cat sat on a mat."},
        {"original": "It rains today.", "candidate": "Today it is raining."},
    ]
    src.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    first = tmp_path / "out.jsonl"
    run("score", "--metric", "bleu", "--input", str(src), "--output", str(first))
    second = tmp_path / "again.jsonl"
    run("score", "--metric", "bleu", "--input", str(first), "--output", str(second))
    back = [json.loads(line) for line in second.read_text(encoding="utf-8").split("\n") if line]
    assert [r["original"] for r in back] == [r["original"] for r in rows]
    assert len(back) == 2 and all(isinstance(r["score"], float) for r in back)

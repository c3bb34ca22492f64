"""``manage.py alignment_score`` (no database needed)."""

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

ROOT = Path(__file__).resolve().parents[2]

PAIRS = "the cat sat\ta cat was sitting\nthe cat sat\tthe feline sat\n"
GOLD = "0-0 1-1 2-2 2p3\n0-0 1-1 2-2\n"
TEST = "0-0 1-1 2-3\n0-0 2-2\n"
TABLE = "cat\tfeline\t0.3\nsat\twas sitting\t0.5\nsat\tsits\t0.1\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in (("pairs", PAIRS), ("gold", GOLD), ("test", TEST), ("table", TABLE)):
        p = tmp_path / f"{name}.txt"
        p.write_text(text, encoding="utf-8")
        out[name] = str(p)
    return out


def run(*args):
    buf = StringIO()
    call_command("alignment_score", *args, stdout=buf)
    return buf.getvalue()


def test_json_output_has_exactly_the_documented_names_and_hand_checked_values(files):
    out = json.loads(run("--pairs", files["pairs"], "--gold", files["gold"], "--test", files["test"], "--json"))
    assert list(out) == ["precision", "recall", "f1", "aer", "align_prec", "align_recall"]
    # A = {0-0, 1-1, 2-3, 0-0, 2-2}; S = 6 sure gold links; P adds 2p3.
    assert out["precision"] == 1.0  # all 5 test links are in P
    assert out["recall"] == pytest.approx(4 / 6)  # 2-3 is only possible
    assert out["aer"] == pytest.approx(1 - (4 + 5) / (5 + 6))
    assert out["align_prec"] == pytest.approx(8 / 15) and out["align_recall"] == pytest.approx(8 / 9)


def test_paraphrase_table_adds_lb_precision_and_rel_recall_over_the_group(files):
    args = ["--pairs", files["pairs"], "--gold", files["gold"], "--test", files["test"], "--json"]
    out = json.loads(run(*args, "--paraphrases", files["table"]))
    assert list(out)[-2:] == ["lb_precision", "rel_recall"]
    # one group (both pairs share "the cat sat"); 9 reference pairs; cat→feline and
    # sat→was sitting are right, sat→sits is not.
    assert out["lb_precision"] == pytest.approx(2 / 3) and out["rel_recall"] == pytest.approx(2 / 9)
    filtered = json.loads(run(*args, "--paraphrases", files["table"], "--min-prob", "0.2"))
    assert filtered["lb_precision"] == 1.0
    # max_len 1 bounds both sides: reference {the→a, cat→feline}; posited cat→feline, sat→sits
    one = json.loads(run(*args, "--paraphrases", files["table"], "--max-len", "1"))
    assert one["lb_precision"] == 0.5 and one["rel_recall"] == 0.5


def test_text_output_lists_every_score(files):
    out = run("--pairs", files["pairs"], "--gold", files["gold"], "--test", files["test"])
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["pairs", "precision", "recall", "f1", "aer", "align_prec", "align_recall"]
    assert "aer           0.1818" in out


def test_undefined_scores_are_null_in_json(tmp_path, files):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    out = json.loads(run("--pairs", files["pairs"], "--gold", files["gold"], "--test", str(empty), "--json"))
    assert out["precision"] is None and out["recall"] == 0.0


@pytest.mark.parametrize(
    "name, text, message",
    [
        ("test", "0-0 1-1 2-7\n0-0\n", "line 1, column 9: link '2-7' of pair 1 lies outside the 3×4 grid"),
        ("gold", "0-0\n", "1 alignment lines for 2 sentence pairs"),
        ("test", "0-0\n0:0\n", "line 2, column 1: '0:0' is not a link"),
        ("pairs", "the cat sat a cat\n", "line 1: expected two tab-separated sentences"),
        ("table", "cat\tfeline\tlots\n", "line 1, column 3: probability 'lots' is not a number"),
    ],
)
def test_bad_input_is_one_line_error_naming_the_place(tmp_path, files, name, text, message):
    bad = tmp_path / "bad.txt"
    bad.write_text(text, encoding="utf-8")
    files = {**files, name: str(bad)}
    args = ["--pairs", files["pairs"], "--gold", files["gold"], "--test", files["test"]]
    if name == "table":
        args += ["--paraphrases", files["table"]]
    with pytest.raises(CommandError) as err:
        run(*args)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_missing_file_and_bad_options_are_errors(files):
    with pytest.raises(CommandError, match="cannot read GOLD file"):
        run("--pairs", files["pairs"], "--gold", "/nonexistent/gold", "--test", files["test"])
    with pytest.raises(CommandError, match="--max-len"):
        run("--pairs", files["pairs"], "--gold", files["gold"], "--test", files["test"], "--max-len", "0")


def test_manage_py_exits_non_zero_with_one_line_on_stderr(tmp_path, files):
    bad = tmp_path / "bad.txt"
    bad.write_text("0-0 9-9\n0-0\n", encoding="utf-8")
    proc = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "alignment_score",
            "--pairs",
            files["pairs"],
            "--gold",
            files["gold"],
            "--test",
            str(bad),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and proc.stdout == ""
    assert proc.stderr.strip().count("\n") == 0 and "9-9" in proc.stderr

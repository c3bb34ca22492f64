"""``manage.py agreement`` and ``manage.py correlate`` (no database needed)."""

import json
from io import StringIO

import krippendorff
import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from scipy import stats as sps
from sklearn.metrics import cohen_kappa_score

from metrics.core.stats.significance import williams_test
from metrics.core.stats.simulate import simulate_judgments


def run(name, *args):
    buf = StringIO()
    call_command(name, *args, stdout=buf)
    return buf.getvalue()


@pytest.fixture
def ratings(tmp_path):
    frame = simulate_judgments(n_originals=25, n_judges=3, controls=(), criteria=("adequacy", "overall"), seed=2)
    path = tmp_path / "ratings.csv"
    frame[["judge", "item", "criterion", "score"]].to_csv(path, index=False)
    return frame, path


def test_agreement_json_matches_the_libraries(ratings):
    frame, path = ratings
    out = json.loads(run("agreement", "--input", str(path), "--json"))
    assert set(out) == {"adequacy", "overall"}
    overall = frame[frame["criterion"] == "overall"].pivot(index="judge", columns="item", values="score")
    values = overall.to_numpy(dtype=float)
    for level in ("nominal", "ordinal", "interval"):
        assert out["overall"]["krippendorff_alpha"][level] == pytest.approx(
            krippendorff.alpha(values, level_of_measurement=level)
        )
    assert out["overall"]["fleiss_kappa"] is not None
    first = out["overall"]["cohen_kappa"][0]
    assert first["judges"] == ["j01", "j02"] and first["n"] == 100
    assert first["quadratic"] == pytest.approx(
        cohen_kappa_score(values[0], values[1], weights="quadratic", labels=np.unique(values))
    )
    assert out["overall"]["pearson"][2]["statistic"] == pytest.approx(sps.pearsonr(values[1], values[2]).statistic)


def test_agreement_without_criterion_column_uses_one_named_score(tmp_path):
    path = tmp_path / "r.tsv"
    rows = ["judge\titem\tscore"] + [f"{j}\ti{i}\t{(i + k) % 3 + 1}" for i in range(12) for k, j in enumerate("ab")]
    rows += ["c\ti0\t1"]  # an incomplete design: Fleiss is not defined
    path.write_text("\n".join(rows) + "\n")
    out = json.loads(run("agreement", "--input", str(path), "--json"))
    assert list(out) == ["score"]
    assert out["score"]["fleiss_kappa"] is None
    assert "same number of ratings" in out["score"]["fleiss_kappa_reason"]
    text = run("agreement", "--input", str(path))
    # The text is the report's agreement table (same builder as the report page).
    assert text.startswith("Agreement per criterion") and "same number of ratings" in text
    fleiss = next(line for line in text.splitlines() if "Fleiss κ" in line)
    assert fleiss.split()[:3] == ["score", "Fleiss", "κ"] and "—" in fleiss


def test_agreement_bootstrap_adds_an_interval(ratings):
    _, path = ratings
    out = json.loads(run("agreement", "--input", str(path), "--json", "--n-boot", "50"))
    low, high = out["adequacy"]["krippendorff_alpha_ci"]["interval"]
    assert low < out["adequacy"]["krippendorff_alpha"]["interval"] < high


@pytest.mark.parametrize(
    "content, name, message",
    [
        ("judge,item\na,b\n", "x.csv", "missing column"),
        ("judge,item,score\na,i,good\n", "x.csv", "not numeric"),
        ("judge,item,score\na,i,1\na,i,2\n", "x.csv", "twice"),
        ("judge,item,score\n", "x.csv", "no data rows"),
        ("judge,item,score\na,i,1\n", "x.xlsx", "unknown file type"),
    ],
)
def test_agreement_bad_input_is_a_command_error(tmp_path, content, name, message):
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(CommandError, match=message):
        run("agreement", "--input", str(path))


def test_agreement_unreadable_file_is_a_command_error(tmp_path):
    with pytest.raises(CommandError, match="no such file"):
        run("agreement", "--input", str(tmp_path / "missing.csv"))


@pytest.fixture
def scored(tmp_path):
    rng = np.random.default_rng(0)
    systems = np.repeat(["s1", "s2", "s3", "s4", "s5"], 40)
    quality = pd.Series({"s1": 1.0, "s2": 2.0, "s3": 3.0, "s4": 4.0, "s5": 5.0})[systems].to_numpy()
    human = quality + rng.normal(0, 1, systems.size)
    frame = pd.DataFrame(
        {
            "system": systems,
            "item": [f"i{k}" for k in range(systems.size)],
            "human": human,
            "good": human + rng.normal(0, 0.5, systems.size),
            "poor": human + rng.normal(0, 2, systems.size),
        }
    )
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_correlate_json_has_both_levels_and_williams(scored):
    frame, path = scored
    out = json.loads(
        run("correlate", "--input", str(path), "--human", "human", "--metric", "good", "--metric", "poor", "--json")
    )
    seg = out["metrics"]["good"]["segment"]
    assert seg["pearson"]["statistic"] == pytest.approx(sps.pearsonr(frame["human"], frame["good"]).statistic)
    assert seg["kendall_b"]["statistic"] == pytest.approx(sps.kendalltau(frame["human"], frame["good"]).statistic)
    means = frame.groupby("system")[["human", "poor"]].mean()
    sysl = out["metrics"]["poor"]["system"]
    assert sysl["spearman"]["statistic"] == pytest.approx(sps.spearmanr(means["human"], means["poor"]).statistic)
    assert sysl["pearson"]["n"] == 5
    (w,) = out["williams"]
    r12 = sps.pearsonr(frame["human"], frame["good"]).statistic
    r13 = sps.pearsonr(frame["human"], frame["poor"]).statistic
    r23 = sps.pearsonr(frame["good"], frame["poor"]).statistic
    assert w["better"] == "good"
    assert w["williams_pvalue"] == pytest.approx(williams_test(r12, r13, r23, 200).pvalue)
    text = run("correlate", "--input", str(path), "--human", "human", "--metric", "good", "--metric", "poor")
    assert "Williams: good better than poor?" in text


def test_correlate_bad_input_is_a_command_error(scored, tmp_path):
    _, path = scored
    with pytest.raises(CommandError, match="missing column"):
        run("correlate", "--input", str(path), "--human", "human", "--metric", "nope")
    bad = tmp_path / "bad.tsv"
    bad.write_text("system\titem\thuman\tm\ns\ti\t1\tx\n")
    with pytest.raises(CommandError, match="not numeric"):
        run("correlate", "--input", str(bad), "--human", "human", "--metric", "m")


def test_bad_input_exits_non_zero_with_one_line_on_stderr(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    path = tmp_path / "x.csv"
    path.write_text("judge,item\na,b\n")
    proc = subprocess.run(
        [sys.executable, str(root / "manage.py"), "agreement", "--input", str(path)],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert proc.returncode != 0
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "missing column(s) score" in lines[0]


def test_agreement_prints_the_same_agreement_table_as_the_report(ratings):
    """One code path: the command's table is the report's table for the same ratings."""
    from metrics.core.stats.report import build_report
    from metrics.reports.exports.agreement import agreement_tables
    from metrics.reports.exports.model import table_text

    frame, path = ratings
    full = frame.assign(original=frame["item"], system="s", is_control=False, control_kind=None)
    report = build_report(full, n_boot=60, seed=4)
    expected = "".join(table_text(t) for t in agreement_tables(report))
    text = run("agreement", "--input", str(path), "--n-boot", "60", "--seed", "4")
    assert text.startswith(expected)


@pytest.mark.parametrize("ext", ["csv", "tsv", "jsonl"])
def test_agreement_reads_csv_tsv_and_jsonl_alike(ratings, tmp_path, ext):
    frame, csv_path = ratings
    path = tmp_path / f"r.{ext}"
    cols = frame[["judge", "item", "criterion", "score"]]
    if ext == "tsv":
        cols.to_csv(path, sep="\t", index=False)
    elif ext == "jsonl":
        cols.to_json(path, orient="records", lines=True)
    else:
        path = csv_path
    out = json.loads(run("agreement", "--input", str(path), "--json"))
    assert out == json.loads(run("agreement", "--input", str(csv_path), "--json"))


def test_a_tsv_field_starting_with_a_quote_does_not_swallow_rows(tmp_path):
    """Issue 12: read with CSV quoting, the quote opened a field that ran over the next
    rows and α came out null for two judges who agree."""
    rows = ["judge\titem\tscore"]
    for k in range(40):
        item = f'"quoted {k}' if k == 3 else f"i{k}"
        rows += [f"a\t{item}\t{k % 5 + 1}", f"b\t{item}\t{k % 5 + 1}"]
    path = tmp_path / "r.tsv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = json.loads(run("agreement", "--input", str(path), "--json"))
    assert out["score"]["n_items"] == 40
    assert out["score"]["krippendorff_alpha"]["interval"] == pytest.approx(1.0)


def test_bad_rows_are_named_by_file_line_and_column(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"judge": "a", "item": "i", "score": 1}\n{"judge": "b", "item": "i", "score": "high"}\n')
    with pytest.raises(CommandError, match=r"r\.jsonl, line 2, column 'score': not numeric"):
        run("agreement", "--input", str(path))
    csv_path = tmp_path / "r.csv"
    csv_path.write_text('judge,item,score\na,"unclosed,1\n')
    with pytest.raises(CommandError, match=r"r\.csv, line 2: malformed CSV"):
        run("agreement", "--input", str(csv_path))

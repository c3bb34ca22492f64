"""The command line does what the report does (issue 28, item 5): agreement on the full scale with
the report's weighted summary, metric runs and designs from scripts, labelled runs, p-values."""

import io
import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from sklearn.metrics import cohen_kappa_score

from metrics.core.stats.results import format_pvalue


def _ratings(tmp_path, rows):
    f = tmp_path / "ratings.csv"
    f.write_text("judge,item,score\n" + "".join(f"{j},{i},{s}\n" for j, i, s in rows), encoding="utf-8")
    return f


def _agreement_json(path, *args):
    out = io.StringIO()
    call_command("agreement", "--input", str(path), "--json", *args, stdout=out)
    return json.loads(out.getvalue())["score"]


# Two judges on a 1-5 scale on which nobody used 3: weighted kappa must weigh distances on 1..5.
A = [1, 2, 2, 4, 5, 5, 1, 4, 2, 5, 4, 1]
B = [2, 2, 1, 5, 4, 5, 1, 2, 2, 4, 5, 4]


def test_weighted_kappa_uses_the_full_scale_given_with_scale(tmp_path):
    path = _ratings(
        tmp_path, [("a", f"i{n}", s) for n, s in enumerate(A)] + [("b", f"i{n}", s) for n, s in enumerate(B)]
    )
    on_scale = _agreement_json(path, "--scale", "1-5", "--min-shared", "4")["cohen_kappa"][0]
    observed = _agreement_json(path, "--min-shared", "4")["cohen_kappa"][0]
    assert on_scale["linear"] == pytest.approx(cohen_kappa_score(A, B, labels=[1, 2, 3, 4, 5], weights="linear"))
    assert observed["linear"] == pytest.approx(cohen_kappa_score(A, B, weights="linear"))
    assert on_scale["linear"] != pytest.approx(observed["linear"])
    assert on_scale["quadratic"] == pytest.approx(cohen_kappa_score(A, B, labels=[1, 2, 3, 4, 5], weights="quadratic"))


def test_a_score_off_the_given_scale_is_refused_naming_it(tmp_path):
    path = _ratings(tmp_path, [("a", "i1", 7), ("b", "i1", 2), ("a", "i2", 1), ("b", "i2", 2)])
    with pytest.raises(CommandError, match="score 7, which is not on --scale 1-5"):
        call_command("agreement", "--input", str(path), "--scale", "1-5")


def test_agreement_gives_the_weighted_summary_and_lists_pairs_below_min_shared_apart(tmp_path):
    rng = np.random.default_rng(0)
    truth = rng.integers(1, 6, 40)
    rows = [(j, f"i{n}", int(np.clip(t + rng.integers(-1, 2), 1, 5))) for j in ("a", "b") for n, t in enumerate(truth)]
    rows += [("c", f"i{n}", int(truth[n])) for n in range(3)]  # c shares 3 items with each
    data = _agreement_json(_ratings(tmp_path, rows), "--min-shared", "30")
    summary = data["pearson_summary"]
    assert summary["n_pairs"] == 1 and summary["n_pairs_listed"] == 3
    ab = next(p for p in data["pearson"] if p["judges"] == ["a", "b"])
    assert summary["statistic"] == pytest.approx(ab["statistic"])  # one pair: the weighted mean is its r
    below = {tuple(p["judges"]): p["reason"] for p in data["pairs_below_min_shared"]}
    assert below == {
        ("a", "c"): "3 shared items, fewer than min_shared = 30",
        ("b", "c"): "3 shared items, fewer than min_shared = 30",
    }
    text = io.StringIO()
    call_command("agreement", "--input", str(tmp_path / "ratings.csv"), stdout=text)
    assert "weighted summary (Fisher z, weights n - 3" in text.getvalue()
    assert "a – c: 3 shared items, fewer than min_shared = 30" in text.getvalue()


def test_p_values_that_underflow_print_as_below_1e_300_not_zero():
    assert format_pvalue(0.0) == "< 1e-300"
    assert format_pvalue(5e-320) == "< 1e-300"
    assert format_pvalue(3e-12) == "3.0e-12"
    assert format_pvalue(0.0312) == "0.0312"
    assert format_pvalue(None) == "n/a"


def test_correlate_prints_an_underflowed_p_value_as_below_1e_300(tmp_path):
    f = tmp_path / "scores.csv"
    rows = ["system,item,human,m"] + [f"s{i % 3},i{i},{i},{i * 2 + (i % 2) * 1e-9}" for i in range(400)]
    f.write_text("\n".join(rows) + "\n", encoding="utf-8")
    out = io.StringIO()
    call_command("correlate", "--input", str(f), "--human", "human", "--metric", "m", stdout=out)
    assert "(p < 1e-300)" in out.getvalue()
    assert "(p 0.0000)" not in out.getvalue()


@pytest.mark.django_db
def test_design_and_metric_runs_are_set_from_the_command_line_with_labelled_runs(study, tmp_path):
    design = tmp_path / "design.json"
    design.write_text(
        json.dumps(
            {
                "criteria": [
                    {
                        "slug": "meaning",
                        "name": "Meaning",
                        "scale": {
                            "type": "slider",
                            "min": 0,
                            "max": 100,
                            "anchors": {"low": "None", "mid": "Half", "high": "All"},
                        },
                    }
                ],
                "judges_per_item": 2,
            }
        ),
        encoding="utf-8",
    )
    out = io.StringIO()
    call_command("design", study.name, "--file", str(design), "--set", "qc_alpha=0.01", stdout=out)
    shown = json.loads(out.getvalue())
    assert shown["criteria"][0]["slug"] == "meaning" and shown["judges_per_item"] == 2 and shown["qc_alpha"] == 0.01
    with pytest.raises(CommandError, match="was not changed"):
        call_command("design", study.name, "--set", "judges_per_item=-3")
    for params in ([], ["--param", "lowercase=true"]):
        call_command("metric_run", study.name, "--metric", "bleu", *params, "--wait", stdout=io.StringIO())
    listing = io.StringIO()
    call_command("metric_run", study.name, "--list", stdout=listing)
    labels = [line.split("\t")[1] for line in listing.getvalue().splitlines()[1:]]
    assert sorted(labels) == ["bleu (lowercase=false)", "bleu (lowercase=true)"]


@pytest.mark.django_db
def test_design_reads_its_json_from_standard_input_with_file_dash(study, monkeypatch):
    # BaseCommand has no stdin attribute: the command reads sys.stdin itself.
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps({"judges_per_item": 2})))
    out = io.StringIO()
    call_command("design", study.name, "--file", "-", stdout=out)
    assert json.loads(out.getvalue())["judges_per_item"] == 2


def test_run_labels_name_the_settings_that_tell_runs_of_one_metric_apart():
    from types import SimpleNamespace as Run

    from metrics.reports.selectors import metric_run_labels

    runs = [
        Run(pk=16, metric="bertscore", against="reference", params={"idf": False}),
        Run(pk=17, metric="bertscore", against="original", params={"idf": False}),
        Run(pk=18, metric="chrf", against="original", params={}),
        Run(pk=19, metric="bleu", against="original", params={}),
        Run(pk=20, metric="bleu", against="original", params={}),
    ]
    assert metric_run_labels(runs) == {
        16: "bertscore (vs reference)",
        17: "bertscore (vs original)",
        18: "chrf",
        19: "bleu #19",
        20: "bleu #20",
    }

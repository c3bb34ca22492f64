"""``manage.py parabank_study`` on the real ParaBank file: the report's metric
meta-evaluation equals an independent computation straight from the file — pandas for
the data, sacrebleu for the metric scores, scipy for the correlations and Williams'
formula written out here (Graham & Baldwin 2014, eq. 1) — not through paraeval code.

Reads ../shared/data/parabank (Hu et al., AAAI 2019); skipped when it is absent. Cheap
metrics only (bleu, chrf); about three minutes on a shared 2-core machine.
"""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import sacrebleu
import scipy.stats as sps
from django.core.management import call_command

from annotation.models import Study
from metrics.models import MetricRun

PARABANK = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "parabank"

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.slow,
    pytest.mark.skipif(not (PARABANK / "candidates.tsv.xz").exists(), reason="../shared/data/parabank is absent"),
]


def _williams_p(r12: float, r13: float, r23: float, n: int) -> float:
    """One-tailed p of Williams' t (Graham & Baldwin 2014, eq. 1)."""
    k = 1 - r12**2 - r13**2 - r23**2 + 2 * r12 * r13 * r23
    t = (
        (r12 - r13)
        * math.sqrt((n - 1) * (1 + r23))
        / math.sqrt(2 * k * (n - 1) / (n - 3) + ((r12 + r13) ** 2 / 4) * (1 - r23) ** 3)
    )
    return float(sps.t.sf(t, n - 3))


def _accuracy_within(frame: pd.DataFrame, metric: str) -> float:
    """Mean over originals of the share of candidate pairs ordered alike (ties count)."""
    accs = []
    for _, g in frame.groupby("ref_id"):
        h, m = g["human"].to_numpy(), g[metric].to_numpy()
        pairs = list(combinations(range(len(g)), 2))
        if pairs:
            accs.append(np.mean([np.sign(h[i] - h[j]) == np.sign(m[i] - m[j]) for i, j in pairs]))
    return float(np.mean(accs))


def _independent() -> dict:
    d = pd.read_csv(PARABANK / "candidates.tsv.xz", sep="\t", quoting=3, dtype=str, keep_default_na=False)
    refs = pd.read_csv(PARABANK / "ref.tsv", sep="\t", quoting=3, dtype=str, keep_default_na=False)
    d = d.assign(system=d["sys_id"].str.split()).explode("system")
    # The study holds one candidate per (original, system): the first row's text.
    text = d.drop_duplicates(["ref_id", "system"], keep="first").set_index(["ref_id", "system"])["candidate"]
    last = d.drop_duplicates(["worker_id_anon", "ref_id", "system"], keep="last")
    last = last.assign(v=pd.to_numeric(last["human_score"].replace("", np.nan))).dropna(subset=["v"])
    items = last.groupby(["ref_id", "system"])["v"].mean().rename("human").reset_index()
    items["candidate"] = [text[(r, s)] for r, s in zip(items["ref_id"], items["system"])]
    items["original"] = items["ref_id"].map(refs.set_index("ref_id")["ref_sent"])
    items["chrf"] = [sacrebleu.sentence_chrf(c, [o]).score for c, o in zip(items["candidate"], items["original"])]
    items["bleu"] = [sacrebleu.sentence_bleu(c, [o]).score for c, o in zip(items["candidate"], items["original"])]
    systems = items.groupby("system")[["human", "chrf", "bleu"]].mean()
    out = {"n_items": len(items), "n_systems": len(systems)}
    for level, frame in (("segment", items), ("system", systems)):
        out[level] = {}
        for m in ("chrf", "bleu"):
            out[level][m] = {
                "pearson": sps.pearsonr(frame["human"], frame[m])[0],
                "spearman": sps.spearmanr(frame["human"], frame[m])[0],
                "kendall_b": sps.kendalltau(frame["human"], frame[m], variant="b")[0],
            }
        n = len(frame)
        r_h = {m: out[level][m]["pearson"] for m in ("chrf", "bleu")}
        best, other = sorted(r_h, key=r_h.get, reverse=True)
        out[level]["best"] = best
        out[level]["williams"] = _williams_p(r_h[best], r_h[other], sps.pearsonr(frame[best], frame[other])[0], n)
    out["segment"]["chrf"]["accuracy"] = _accuracy_within(items, "chrf")
    out["segment"]["bleu"]["accuracy"] = _accuracy_within(items, "bleu")
    return out


def test_parabank_study_leaderboard_matches_an_independent_computation(make_user, tmp_path, monkeypatch):
    from metrics.core.semantic import metrics as semantic_metrics

    # As on a machine without the extra: the semantic metric is listed with the install command
    # (patched where the metrics look it up; the package only re-exports it).
    monkeypatch.setattr(semantic_metrics, "missing_requirements", lambda: ["torch"])
    owner = make_user("rita", researcher=True)
    md = tmp_path / "leaderboard.md"
    call_command(
        "parabank_study",
        str(PARABANK),
        "--owner",
        owner.username,
        "--metric",
        "bleu",
        "--metric",
        "chrf",
        "--metric",
        "ibleu",
        "--metric",
        "embed-cosine",
        "--no-pem",
        "--n-boot",
        "50",
        "--markdown",
        str(md),
    )
    study = Study.objects.get(name="ParaBank evaluation")
    assert set(MetricRun.objects.filter(study=study).values_list("metric", flat=True)) == {"bleu", "chrf"}
    report = study.reports.order_by("-pk").first()
    meta = report.result["metric_meta_evaluation"]
    ref = _independent()

    assert meta["segment"]["n"] == ref["n_items"]
    assert meta["system"]["n"] == ref["n_systems"] == 36
    for level in ("segment", "system"):
        rows = {r["metric"]: r for r in meta[level]["rows"]}
        assert set(rows) == {"bleu", "chrf"}
        methods = ("pearson", "spearman", "kendall_b") + (("accuracy",) if level == "segment" else ())
        for m in ("bleu", "chrf"):
            for method in methods:
                assert rows[m][method] == pytest.approx(ref[level][m][method], abs=1e-9), (level, m, method)
        best = ref[level]["best"]
        assert rows[best]["rank"] == 1
        worse = next(m for m in rows if m != best)
        assert rows[worse]["p_vs_best"] == pytest.approx(ref[level]["williams"], rel=1e-9, abs=1e-12)
        assert meta[level]["matrix"]["metrics"] == [best, worse]
        assert meta[level]["matrix"]["pvalues"][0][1] == pytest.approx(ref[level]["williams"], rel=1e-9, abs=1e-12)
        # chrF is the baseline: bleu's test against it is the same pair's test.
        assert rows["bleu"]["p_vs_baseline"] == pytest.approx(ref[level]["williams"], rel=1e-9, abs=1e-12)
    text = md.read_text()
    assert "- `ibleu`: needs a reference paraphrase, which ParaBank does not have" in text
    assert "- `embed-cosine`: unavailable: needs torch: run `make install-semantic`" in text
    assert "| 1 | chrf |" in text or "| 1 | bleu |" in text
    assert "Williams tests against chrf" in text
    # the human side: every system's raw and z similarity (grammaticality is 0–2: no z)
    assert "| system | similarity raw | similarity z | originals | judgments with z |" in text
    assert "grammaticality z" not in text and "nan" not in text.lower()
    blocks = report.result["system_scores"]["criteria"]
    assert [b["criterion"] for b in blocks] == ["similarity"] and len(blocks[0]["systems"]) == 36

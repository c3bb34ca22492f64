"""ParaBank's real crowd evaluation imports as a study, and its report's figures equal an
independent pandas/scipy/krippendorff computation on the same file.

Reads ../shared/data/parabank (Hu et al., AAAI 2019); skipped when it is absent.
"""

from __future__ import annotations

from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from annotation.judging.protocols.absolute.models import Judgment
from annotation.models import Study

PARABANK = Path(__file__).resolve().parents[3] / ".." / "shared" / "data" / "parabank"

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not (PARABANK / "candidates.tsv.xz").exists(), reason="../shared/data/parabank is absent"),
]


def _independent() -> dict:
    """The same figures straight from the file: one item per (original, system), the
    worker's last row for it counting (ParaBank lists some repeats)."""
    d = pd.read_csv(PARABANK / "candidates.tsv.xz", sep="\t", quoting=3, dtype=str, keep_default_na=False)
    d = d.assign(system=d["sys_id"].str.split()).explode("system")
    d["item"] = d["ref_id"] + "/" + d["system"]
    last = d.drop_duplicates(["worker_id_anon", "item"], keep="last")
    sim = pd.to_numeric(last["human_score"].replace("", np.nan))
    gm = pd.to_numeric(last["gm"])
    out = {"n_judges": last["worker_id_anon"].nunique(), "n_items": last["item"].nunique()}
    for name, values, level in (("similarity", sim, "interval"), ("grammaticality", gm, "ordinal")):
        frame = last.assign(v=values).dropna(subset=["v"])
        matrix = frame.pivot(index="worker_id_anon", columns="item", values="v")
        out[f"alpha_{name}"] = krippendorff.alpha(
            reliability_data=matrix.to_numpy(dtype=float), level_of_measurement=level
        )
    per_item = last.assign(v=sim).dropna(subset=["v"]).groupby(["item", "ref_id", "system"])["v"].mean()
    per_system = per_item.groupby(level=["ref_id", "system"]).mean().groupby(level="system").mean()
    out["ranking"] = per_system.sort_values(ascending=False, kind="stable")
    return out


def test_parabank_imports_and_its_report_matches_an_independent_computation(make_user, tmp_path):
    owner = make_user("rita", researcher=True)
    call_command("import_parabank", str(PARABANK), "--owner", owner.username)
    study = Study.objects.get(name="ParaBank evaluation")
    assert study.originals.count() == 400
    assert {c["slug"]: c["scale"]["type"] for c in study.judging_design.criteria} == {
        "similarity": "slider",
        "grammaticality": "points",
    }
    assert Judgment.objects.filter(study=study).values("judge").distinct().count() == 44

    call_command("report", str(study.pk), "--out", str(tmp_path), "--no-metrics", "--n-boot", "50")
    result = study.reports.order_by("-pk").first().result
    ref = _independent()
    assert result["summary"]["n_judges"] == ref["n_judges"] == 44
    assert result["summary"]["n_items"] == ref["n_items"]
    agreement = result["agreement"]
    assert agreement["similarity"]["alpha_level"] == "interval"
    assert agreement["similarity"]["fleiss_kappa"] is None  # no κ on a slider
    assert agreement["grammaticality"]["alpha_level"] == "ordinal"
    assert agreement["similarity"]["krippendorff_alpha"]["interval"]["statistic"] == pytest.approx(
        ref["alpha_similarity"], abs=1e-9
    )
    assert agreement["grammaticality"]["krippendorff_alpha"]["ordinal"]["statistic"] == pytest.approx(
        ref["alpha_grammaticality"], abs=1e-9
    )
    ranking = result["system_ranking"]["systems"]
    assert result["system_ranking"]["criterion"] == "similarity"
    assert [r["system"] for r in ranking] == list(ref["ranking"].index)
    assert [r["mean"] for r in ranking] == pytest.approx(list(ref["ranking"].to_numpy()), abs=1e-9)

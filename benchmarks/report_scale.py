"""Time ``build_report`` on 1,000,000 judgments against a straightforward researcher script.

The study: 10 judges × 25,000 items × 4 criteria = 1,000,000 judgments (3,125
originals × (5 systems + 3 controls)), one random clicker, three simulated metrics.

* ``paraeval`` — ``metrics.core.stats.build_report`` (everything: Tables 1–3 with
  five coefficients, α at three levels + Fleiss' κ + six ICCs with bootstrap CIs,
  pairwise Cohen's κ and Pearson, judge QC, system ranking, leaderboard).
* ``baseline`` — what a researcher would write with pandas groupby, scipy
  ``pearsonr``/``spearmanr``/``kendalltau``, ``krippendorff.alpha`` (bootstrap CI by
  resampling items and calling it again), statsmodels Fleiss' κ, sklearn Cohen's κ,
  scipy Mann–Whitney: the subset of the report's numbers those tools give directly.

Each variant runs in a fresh subprocess so its peak RSS (``ru_maxrss``) is its own.
Usage::

    .venv/bin/python benchmarks/report_scale.py [--n-boot 200] [--originals 3125]

prints one line per variant and the time ratio.  Both variants use the same number of
bootstrap resamples; a last run times ``build_report`` at its default (1000).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from itertools import combinations
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CRITERIA = ("adequacy", "fluency", "dissimilarity", "overall")


def make_study(n_originals: int):
    from metrics.core.stats.simulate import DEFAULT_SYSTEMS, simulate_judgments, simulate_metric_scores

    systems = dict(DEFAULT_SYSTEMS)
    systems["machine3"] = {"adequacy": 3.0, "fluency": 3.0, "dissimilarity": 3.2, "overall": 2.7}
    judgments = simulate_judgments(n_originals=n_originals, systems=systems, n_judges=10, n_random_clickers=1, seed=1)
    metrics = simulate_metric_scores(judgments, seed=2)
    return judgments, metrics


def run_paraeval(judgments, metrics, n_boot):
    from metrics.core.stats.report import build_report

    report = build_report(judgments, metrics, n_boot=n_boot)
    return len(json.dumps(report, allow_nan=False))


def run_baseline(judgments, metrics, n_boot):
    """The straightforward script: loops, groupby, library calls, naive bootstrap."""
    import krippendorff
    import numpy as np
    from scipy.stats import kendalltau, mannwhitneyu, pearsonr, spearmanr
    from sklearn.metrics import cohen_kappa_score
    from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

    out = {}
    expected = {
        "identical": {"adequacy": 5, "fluency": 5, "dissimilarity": 1, "overall": 2},
        "random": {"adequacy": 1, "fluency": 5, "dissimilarity": 5, "overall": 1},
        "unigram": {"adequacy": 1, "fluency": 1, "dissimilarity": 5, "overall": 1},
    }
    genuine = judgments[~judgments["is_control"]]
    judges = sorted(judgments["judge"].unique())

    # Table 1: inter-judge Pearson, sentence and system level.
    overall = genuine[genuine["criterion"] == "overall"]
    wide = overall.pivot(index="item", columns="judge", values="score")
    sysmeans = overall.groupby(["judge", "system"])["score"].mean().unstack("system")
    for a, b in combinations(judges, 2):
        both = wide[[a, b]].dropna()
        out[f"t1/{a}/{b}"] = (pearsonr(both[a], both[b])[0], pearsonr(sysmeans.loc[a], sysmeans.loc[b])[0])

    # Human reference: judge mean, controls at their fixed scores.
    ref = judgments.groupby(["item", "criterion"])["score"].mean().unstack("criterion")
    meta = judgments.drop_duplicates("item").set_index("item")[["original", "system", "is_control", "control_kind"]]
    ref = meta.join(ref)
    for kind, scores in expected.items():
        for crit, value in scores.items():
            ref.loc[ref["control_kind"] == kind, crit] = value

    # Table 2.
    subset = ref[(ref["adequacy"] >= 4) & (ref["fluency"] >= 4)]
    for name, part in (("all", ref), ("subset", subset)):
        sm = part.groupby("system")[list(CRITERIA)].mean()
        for crit in ("adequacy", "fluency", "dissimilarity"):
            out[f"t2/{name}/{crit}"] = (pearsonr(part[crit], part["overall"])[0], pearsonr(sm[crit], sm["overall"])[0])

    # Table 3: each metric vs mean and each judge, both levels, four coefficients.
    for metric, mframe in metrics.groupby("metric"):
        m = mframe.set_index("item")["score"]
        targets = [("mean", ref["overall"])] + [(j, wide[j].dropna()) for j in judges]
        for human, h in targets:
            joined = pd_concat(h, m)
            sm = joined.groupby(ref.loc[joined.index, "system"]).mean()
            for level, frame in (("segment", joined), ("system", sm)):
                out[f"t3/{metric}/{human}/{level}"] = (
                    pearsonr(frame["h"], frame["m"])[0],
                    spearmanr(frame["h"], frame["m"])[0],
                    kendalltau(frame["h"], frame["m"], variant="b")[0],
                    kendalltau(frame["h"], frame["m"], variant="c")[0],
                )

    # Agreement per criterion (controls excluded).
    rng = np.random.default_rng(0)
    for crit in CRITERIA:
        mat = genuine[genuine["criterion"] == crit].pivot(index="judge", columns="item", values="score").to_numpy(float)
        for level in ("nominal", "ordinal", "interval"):
            point = krippendorff.alpha(mat, level_of_measurement=level)
            boots = [
                krippendorff.alpha(mat[:, rng.integers(0, mat.shape[1], mat.shape[1])], level_of_measurement=level)
                for _ in range(n_boot)
            ]
            out[f"alpha/{crit}/{level}"] = (point, *np.percentile(boots, [2.5, 97.5]))
        table, _ = aggregate_raters(mat.T.astype(int))
        out[f"fleiss/{crit}"] = fleiss_kappa(table)
        for i, j in combinations(range(mat.shape[0]), 2):
            for w in (None, "linear", "quadratic"):
                out[f"cohen/{crit}/{i}/{j}/{w}"] = cohen_kappa_score(mat[i], mat[j], weights=w)
            out[f"pearson/{crit}/{i}/{j}"] = pearsonr(mat[i], mat[j])[0]

    # Judge QC: Mann–Whitney tests on the controls.
    for judge, rows in judgments.groupby("judge"):
        for crit, kinds in (
            ("adequacy", ("random", "unigram")),
            ("fluency", ("unigram",)),
            ("dissimilarity", ("identical",)),
        ):
            r = rows[rows["criterion"] == crit]
            low = r[r["control_kind"].isin(kinds)]["score"]
            gen = r[~r["is_control"]]["score"]
            out[f"qc/{judge}/{crit}"] = mannwhitneyu(low, gen, alternative="less").pvalue
    return len(out)


def pd_concat(h, m):
    import pandas as pd

    return pd.concat({"h": h, "m": m}, axis=1, join="inner").dropna()


def child(variant: str, n_originals: int, n_boot: int) -> None:
    judgments, metrics = make_study(n_originals)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start, cpu_start = time.perf_counter(), time.process_time()
    size = (run_paraeval if variant == "paraeval" else run_baseline)(judgments, metrics, n_boot)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        json.dumps(
            {
                "variant": variant,
                "judgments": len(judgments),
                "n_boot": n_boot,
                "seconds": seconds,
                "cpu_seconds": cpu,
                "peak_rss_mib": rss_after / 1024,
                "rss_before_mib": rss_before / 1024,
                "output": size,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-boot", type=int, default=200, help="bootstrap resamples for both variants")
    parser.add_argument("--originals", type=int, default=3125, help="3125 gives 1,000,000 judgments")
    parser.add_argument("--child", choices=("paraeval", "baseline"), help=argparse.SUPPRESS)
    parser.add_argument("--skip-default", action="store_true", help="skip the run at build_report's default n_boot")
    args = parser.parse_args()
    if args.child:
        child(args.child, args.originals, args.n_boot)
        return

    def run(variant, n_boot):
        cmd = [
            sys.executable,
            __file__,
            "--child",
            variant,
            "--originals",
            str(args.originals),
            "--n-boot",
            str(n_boot),
        ]
        res = json.loads(
            subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        )
        print(
            f"{variant:9s} n_boot={n_boot:<5d} {res['judgments']:>9,d} judgments  {res['seconds']:7.1f} s wall "
            f"{res['cpu_seconds']:7.1f} s CPU  "
            f"peak RSS {res['peak_rss_mib']:7.0f} MiB (after simulating the data: {res['rss_before_mib']:.0f} MiB)"
        )
        return res

    ours = run("paraeval", args.n_boot)
    base = run("baseline", args.n_boot)
    print(
        f"ratio baseline / paraeval: {base['seconds'] / ours['seconds']:.1f}x wall, "
        f"{base['cpu_seconds'] / ours['cpu_seconds']:.1f}x CPU"
    )
    if not args.skip_default:
        from metrics.core.stats.report import auto_n_boot

        run("paraeval", auto_n_boot(args.originals * 5))


if __name__ == "__main__":
    main()

"""ParaBank leaderboard: every paraeval metric against real human similarity judgments.

    .venv/bin/python benchmarks/parabank_leaderboard.py [--out docs/parabank-leaderboard.md]
        [--threads 2] [--fresh] [--no-pem] [--metric SLUG ...]

Data: ParaBank's human evaluation (Hu, Rudinger, Post & Van Durme, AAAI 2019) from
../shared/data/parabank/: 5,548 distinct (original, candidate) pairs of 400
originals, each judged by 2–6 crowd workers on a 0–100 semantic-similarity slider;
the human score of a candidate is the mean of its judgments (benchmarks/parabank_data.py).

Metrics: every registered metric with its default parameters, comparing the
candidate with the original (ParaBank has no reference paraphrases: ``parascore``
runs as ParaScore.Free, ``ibleu`` cannot run and is listed as skipped). Metrics
whose optional dependencies are missing are listed as skipped with the reason.
TER is lower-is-better: its scores are negated before correlating, so that for
every metric a positive correlation means agreement. PINC measures *difference*
from the original and keeps its sign (it correlates negatively with similarity).

PEM (Liu, Dahlmeier & Ng 2010): the SVR of metrics.core.pem.pem_train from the
three PEM features (pivot F1, LM fluency, target F1) to the human score, scored
out-of-fold: the 400 originals are split into 5 folds (GroupKFold); for each fold
PEM is trained on the other four (with pem_train's own grouped inner CV for C, γ, ε
over :data:`PEM_GRID`) and predicts the held-out originals' candidates — no
candidate is scored by a model that saw its original.

Levels: *segment* — one row per candidate (Pearson, Spearman, Kendall τ-b, and
pairwise accuracy within each original); *system* — the 36 systems (a candidate
counts for every system that produced it) by mean metric vs mean human score.
Williams tests (Williams 1959; Graham & Baldwin 2014, one-tailed): for each metric
against chrF, at both levels, and the full segment-level matrix.

Scores are cached per metric signature in var/parabank_scores/ (``--fresh``
recomputes). Writes Markdown to ``--out`` and prints it.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from parabank_data import PARABANK, load_parabank  # noqa: E402

CACHE = REPO / "var" / "parabank_scores"
PARAMS = {"parascore": {"reference_free": True}}
SEG_METHODS = ("pearson", "spearman", "kendall_b", "accuracy")


def _cache_path(signature: str) -> Path:
    import hashlib

    return CACHE / (hashlib.sha256(signature.encode()).hexdigest()[:16] + ".json")


def metric_scores(slug: str, originals, candidates, *, fresh: bool) -> tuple[np.ndarray | None, str]:
    """Sentence scores of one metric over all pairs (cached by signature), or (None, why skipped)."""
    from metrics.core.base.params import MetricError
    from metrics.core.registry import create_metric, get_metric

    cls = get_metric(slug)
    reason = getattr(cls, "unavailable_reason", lambda: None)()
    if reason:
        return None, f"unavailable: {reason}"
    try:
        metric = create_metric(slug, PARAMS.get(slug, {}))
    except MetricError as exc:
        return None, str(exc)
    if metric.needs_references:
        return None, "needs a reference paraphrase, which ParaBank does not have"
    missing = metric.missing_resources()
    if missing:
        return None, f"resource(s) {', '.join(missing)} not available by default"
    sig = metric.signature()
    path = _cache_path(sig + f"|n={len(candidates)}")
    if path.exists() and not fresh:
        return np.asarray(json.loads(path.read_text())["scores"], dtype=float), sig
    t, c = time.perf_counter(), time.process_time()
    stats = metric.segment_stats(originals, candidates, [None] * len(candidates))
    scores = np.asarray(metric.sentence_scores(stats), dtype=float)
    print(
        f"  {slug}: {len(candidates)} pairs in {time.perf_counter() - t:.1f} s wall, "
        f"{time.process_time() - c:.1f} CPU-s",
        file=sys.stderr,
        flush=True,
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"signature": sig, "scores": scores.tolist()}))
    return scores, sig


#: A smaller grid than pem.DEFAULT_PARAM_GRID (48 settings): 5 outer × 5 inner folds of
#: the full grid are 1,200 SVR fits, too many for a shared 2-core machine. The target is
#: mapped from 0–100 to PEM's 1–5 scale (y/25 + 1) so that ε keeps its meaning.
PEM_GRID = {"svr__C": (1.0, 10.0), "svr__gamma": ("scale", 0.1), "svr__epsilon": (0.1, 0.25)}


def pem_out_of_fold(features: np.ndarray, human: np.ndarray, groups: np.ndarray, *, folds: int = 5) -> np.ndarray:
    """PEM predictions for every candidate by a model trained on the other originals (GroupKFold).

    Cached in var/parabank_scores/ by the hash of the features, targets and grid.
    """
    import hashlib

    from sklearn.model_selection import GroupKFold

    from metrics.core.pem.training import pem_train

    key = hashlib.sha256(features.tobytes() + human.tobytes() + repr(PEM_GRID).encode()).hexdigest()[:16]
    path = CACHE / f"pem-oof-{key}.json"
    if path.exists():
        return np.asarray(json.loads(path.read_text()), dtype=float)
    y = human / 25.0 + 1.0
    out = np.full(len(human), np.nan)
    for k, (_, test) in enumerate(GroupKFold(n_splits=folds).split(features, y, groups)):
        model = pem_train(features, y, groups, test_groups=np.unique(groups[test]), param_grid=PEM_GRID)
        out[test] = model.predict(features[test])
        print(
            f"  pem fold {k + 1}/{folds}: {model.best_params} held-out r={model.test_pearson}",
            file=sys.stderr,
            flush=True,
        )
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out.tolist()))
    return out


def system_level(scores: np.ndarray, item_systems: list[tuple[str, ...]]) -> dict[str, float]:
    """Mean score per system, a candidate counting for each system that produced it."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for s, systems in zip(scores, item_systems):
        for sysid in systems:
            sums[sysid] = sums.get(sysid, 0.0) + float(s)
            counts[sysid] = counts.get(sysid, 0) + 1
    return {k: sums[k] / counts[k] for k in sorted(sums, key=int)}


def _f(x, digits=3) -> str:
    return "n/a" if x is None or (isinstance(x, float) and not math.isfinite(x)) else f"{x:.{digits}f}"


def _p(p) -> str:
    if p is None or not math.isfinite(p):
        return "n/a"
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def build(args) -> str:
    from metrics.core.registry import available_metrics, get_metric
    from metrics.core.stats.correlation import correlation
    from metrics.core.stats.significance import williams_test_scores

    items = load_parabank()
    originals = [i.original for i in items]
    candidates = [i.candidate for i in items]
    human = np.array([i.human for i in items])
    groups = np.array([int(i.ref_id) for i in items])
    item_systems = [i.systems for i in items]

    slugs = args.metric or [cls.slug for cls in available_metrics() if cls.slug != "pem"]
    columns: dict[str, np.ndarray] = {}
    signatures: dict[str, str] = {}
    skipped: dict[str, str] = {}
    for slug in slugs:
        scores, info = metric_scores(slug, originals, candidates, fresh=args.fresh)
        if scores is None:
            skipped[slug] = info
            continue
        sign = 1.0 if get_metric(slug).higher_is_better else -1.0
        columns[slug if sign > 0 else f"−{slug}"] = sign * scores
        signatures[slug] = info
    if not args.no_pem:
        feats = ["pivot-f1", "lm-fluency", "target-f1"]
        if all(f in columns for f in feats):
            x = np.column_stack([columns[f] for f in feats])
            columns["pem (out-of-fold)"] = pem_out_of_fold(x, human, groups)
        else:
            skipped["pem"] = "needs the pivot-f1, lm-fluency and target-f1 features"
    else:
        skipped["pem"] = "--no-pem"

    h_sys = system_level(human, item_systems)
    sys_ids = list(h_sys)
    rows = []
    for name, m in columns.items():
        seg = {
            meth: correlation(human, m, method=meth, groups=groups if meth == "accuracy" else None)
            for meth in SEG_METHODS
        }
        m_sys = system_level(m, item_systems)
        hs = np.array([h_sys[s] for s in sys_ids])
        ms = np.array([m_sys[s] for s in sys_ids])
        sysc = {meth: correlation(hs, ms, method=meth) for meth in SEG_METHODS}
        rows.append((name, seg, sysc, ms))
    rows.sort(key=lambda r: -r[1]["pearson"].statistic)

    lines = [
        "| rank | metric | seg. Pearson | seg. Spearman | seg. Kendall τb | seg. pairwise acc. (within original) "
        "| sys. Pearson | sys. Spearman | sys. Kendall τb | sys. pairwise acc. |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for k, (name, seg, sysc, _) in enumerate(rows, 1):
        lines.append(
            f"| {k} | {name} | "
            + " | ".join(_f(seg[m].statistic) for m in SEG_METHODS)
            + " | "
            + " | ".join(_f(sysc[m].statistic) for m in SEG_METHODS)
            + " |"
        )
    out = [
        f"ParaBank human evaluation: {len(items)} candidates of {len(set(groups))} originals "
        f"({sum(i.n_judgments for i in items)} judgments), {len(sys_ids)} systems. "
        "Human score: mean 0–100 similarity per candidate.",
        "",
        *lines,
        "",
    ]

    # Williams tests against chrF, both levels.
    hs = np.array([h_sys[s] for s in sys_ids])
    by_name = {r[0]: r for r in rows}
    if "chrf" in columns:
        out += [
            "Williams tests against chrF (one-tailed; H1: the better-correlated metric of the pair "
            "correlates better with the humans, Pearson):",
            "",
            "| metric | seg. r − chrF r | seg. p | sys. r − chrF r | sys. p |",
            "|---|---:|---:|---:|---:|",
        ]
        chrf_sys = by_name["chrf"][3]
        for name, seg, sysc, ms in rows:
            if name == "chrf":
                continue
            cells = []
            for hv, a, b, ra, rb in (
                (
                    human,
                    columns[name],
                    columns["chrf"],
                    seg["pearson"].statistic,
                    by_name["chrf"][1]["pearson"].statistic,
                ),
                (hs, ms, chrf_sys, sysc["pearson"].statistic, by_name["chrf"][2]["pearson"].statistic),
            ):
                try:
                    w = williams_test_scores(hv, a, b) if ra >= rb else williams_test_scores(hv, b, a)
                    cells += [f"{ra - rb:+.3f}", _p(w.pvalue)]
                except ValueError as exc:
                    cells += [f"{ra - rb:+.3f}", f"n/a ({exc})"]
            out.append(f"| {name} | " + " | ".join(cells) + " |")
        out.append("")

    # Segment-level Williams matrix: p that the row metric correlates better than the column metric.
    names = [r[0] for r in rows]
    out += [
        "Segment-level Williams test matrix: p-value that the row metric correlates better with the humans "
        "than the column metric (Pearson, one-tailed; only above the diagonal, rows ranked best first).",
        "",
        "| | " + " | ".join(names[1:]) + " |",
        "|---|" + "---:|" * (len(names) - 1),
    ]
    for i, a in enumerate(names[:-1]):
        cells = []
        for j, b in enumerate(names[1:], 1):
            if j <= i:
                cells.append("")
                continue
            try:
                cells.append(_p(williams_test_scores(human, columns[a], columns[b]).pvalue))
            except ValueError:
                cells.append("n/a")
        out.append(f"| {a} | " + " | ".join(cells) + " |")
    out.append("")
    if skipped:
        out += ["Not on the board:", ""] + [f"- `{k}`: {v}" for k, v in sorted(skipped.items())] + [""]
    out += ["Signatures:", ""] + [f"- `{signatures[k]}`" for k in sorted(signatures)] + [""]
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="also write the Markdown here")
    ap.add_argument("--threads", type=int, default=2, help="torch CPU threads for the semantic metrics")
    ap.add_argument("--fresh", action="store_true", help="recompute cached metric scores")
    ap.add_argument("--no-pem", action="store_true", help="leave out the out-of-fold PEM")
    ap.add_argument("--metric", action="append", help="only these metrics (repeatable)")
    args = ap.parse_args(argv)
    if not (PARABANK / "ref.tsv").exists():
        print(f"ParaBank judgments not found in {PARABANK}", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        import torch

        torch.set_num_threads(args.threads)
    except ImportError:
        pass
    text = build(args)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

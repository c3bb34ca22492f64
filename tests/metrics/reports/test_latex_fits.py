"""Issue 12, item 6: the LaTeX tables fit an A4 and a US-letter page.

pdflatex writes "Overfull \\hbox (Npt too wide)" to its log for every line that runs
into the margin; the export must produce none (before: Table 3 ran off by 408 pt).
The data: issue 12's demo scenario with six metrics with long names, so that every
table is as wide as a real study makes it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from metrics.core.stats.report import build_report
from metrics.reports.exports.latex import table_latex, warning_lines
from metrics.reports.exports.tables import report_tables

from ..core.stats.test_robust_summaries import load_fixture

PDFLATEX = shutil.which("pdflatex")
pytestmark = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex is not installed (apt-get install texlive-latex-recommended)"
)

OVERFULL = re.compile(r"^Overfull \\[hv]box \(([\d.]+)pt too (wide|high)\)", re.M)


@lru_cache(maxsize=1)
def demo_result() -> dict:
    frame = load_fixture("demo_judge1_sim3.csv.gz")
    items = (
        frame.loc[frame["criterion"] == "overall"]
        .groupby("item")
        .agg(system=("system", "first"), score=("score", "mean"))
    )
    rng = np.random.default_rng(1)
    import pandas as pd

    names = [
        "bleu",
        "chrf",
        "ter (negated)",
        "lm-fluency",
        "pivot-f1 #12 (stemmed, Bible en-es table)",
        "sentence-embedding-cosine (all-MiniLM-L6-v2)",
    ]
    metrics = pd.concat(
        [
            pd.DataFrame(
                {
                    "item": items.index,
                    "system": items["system"],
                    "metric": name,
                    "score": items["score"] + rng.normal(0, 0.5 + k, len(items)),
                }
            )
            for k, name in enumerate(names)
        ]
    )
    return build_report(frame, metrics, n_boot=50)


def compile_tables(tmp_path: Path, paper: str) -> str:
    body = "".join(f"% {line}\n" for line in warning_lines(demo_result()))
    body += "\n".join(table_latex(t) for t in report_tables(demo_result()))
    (tmp_path / "report.tex").write_text(body, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        f"\\documentclass[{paper}]{{article}}\n\\usepackage[T1]{{fontenc}}\n\\usepackage[utf8]{{inputenc}}\n"
        "\\usepackage{booktabs,tabularx,pdflscape}\n\\begin{document}\n\\input{report}\n\\end{document}\n",
        encoding="utf-8",
    )
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = (tmp_path / "paper.log").read_text(encoding="utf-8", errors="replace")
    assert proc.returncode == 0, log[-3000:]
    return log


@pytest.mark.parametrize("paper", ["a4paper", "letterpaper"])
def test_every_table_fits_the_page_without_an_overfull_box(tmp_path, paper):
    log = compile_tables(tmp_path, paper)
    overfull = OVERFULL.findall(log)
    assert not overfull, [f"{pt}pt too {what}" for pt, what in overfull]


def test_wide_tables_are_landscape_and_narrow_ones_are_not():
    tables = {t.slug: table_latex(t) for t in report_tables(demo_result())}
    assert "\\begin{landscape}" in tables["table1"] and "\\begin{landscape}" in tables["table3"]
    assert "\\begin{landscape}" not in tables["system_ranking"]
    assert all("\\begin{tabularx}{\\linewidth}" in tex for tex in tables.values())

"""The LaTeX export compiles: pdflatex with booktabs, as a paper would use it.

CI installs Debian's texlive-latex-recommended (pdflatex, booktabs); on a machine
without pdflatex these tests are skipped and say so.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path

import pytest

from metrics.reports.exports.latex import report_latex, table_latex
from metrics.reports.exports.tables import report_tables, table_by_slug

pytestmark = pytest.mark.django_db

PDFLATEX = shutil.which("pdflatex")
needs_pdflatex = pytest.mark.skipif(
    PDFLATEX is None, reason="pdflatex is not installed (apt-get install texlive-latex-recommended)"
)

PREAMBLE = "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage[utf8]{inputenc}\n\\usepackage{booktabs,tabularx,pdflscape}\n"


def compile_tex(tmp_path: Path, body: str) -> tuple[int, str, Path]:
    """Write report.tex, \\input it from a minimal paper, run pdflatex; (exit code, log, pdf)."""
    (tmp_path / "report.tex").write_text(body, encoding="utf-8")
    (tmp_path / "paper.tex").write_text(
        PREAMBLE + "\\begin{document}\n\\input{report}\n\\end{document}\n", encoding="utf-8"
    )
    proc = subprocess.run(
        [PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "paper.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (
        (tmp_path / "paper.log").read_text(encoding="utf-8", errors="replace")
        if (tmp_path / "paper.log").exists()
        else proc.stdout
    )
    return proc.returncode, log, tmp_path / "paper.pdf"


def _all_names(result: dict, name: str) -> dict:
    """The report's data with every system name replaced by ``name`` (plus a number)."""
    out = copy.deepcopy(result)
    for k, row in enumerate(out["system_ranking"]["systems"]):
        row["system"] = f"{name} {k}"
    return out


@needs_pdflatex
def test_the_whole_report_compiles_with_pdflatex_and_booktabs(built_report, tmp_path):
    tex = report_latex(built_report)
    code, log, pdf = compile_tex(tmp_path, tex)
    assert code == 0, log[-3000:]
    assert pdf.exists() and pdf.read_bytes().startswith(b"%PDF")
    # Every table became a numbered float with its label: LaTeX wrote one \newlabel per table.
    n_tables = len(report_tables(built_report.result))
    aux = (tmp_path / "paper.aux").read_text()
    assert n_tables == 9 and aux.count("\\newlabel{tab:paraeval-") == n_tables


@needs_pdflatex
@pytest.mark.parametrize(
    "name",
    [
        "a_b & c% $x$ #1 {y} ~z^ \\w <v> |bar|",  # every character LaTeX treats specially
        "\\end{tabular}\\input{/etc/passwd}",  # markup must stay text, never run
        "naïve système — Krippendorff's α ≥ 0.8 – ±1 × 2",  # accented Latin and mapped symbols
        "100% of\tjudges\u00a0agree",  # tab and no-break space
    ],
)
def test_hostile_and_unicode_system_names_compile_and_print_as_text(built_report, tmp_path, name):
    table = table_by_slug(_all_names(built_report.result, name), "system_ranking")
    code, log, pdf = compile_tex(tmp_path, table_latex(table))
    assert code == 0, log[-3000:]
    assert pdf.exists()
    # pdflatex logs every file it opens as "(path": the name's \input did not run.
    assert "(/etc/passwd" not in log


@needs_pdflatex
def test_a_study_name_with_line_breaks_stays_in_the_comment(built_report, tmp_path):
    built_report.study.name = "Study\n\\bad{}\r\u2028name % here"
    code, log, _ = compile_tex(tmp_path, report_latex(built_report))
    assert code == 0, log[-3000:]

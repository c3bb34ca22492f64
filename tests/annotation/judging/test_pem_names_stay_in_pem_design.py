"""PEM's criterion names appear only in PEM's design and PEM's own tables (issue 24).

Every report table, figure, QC test, training rule and form works for any design by
asking the criterion's scale (:mod:`annotation.judging.scales`); code that needs PEM's
names takes them from PEM's design module. This walks the code and templates and fails
on any other literal "adequacy", "fluency", "dissimilarity" or "overall" criterion.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PEM_NAMES = ("adequacy", "fluency", "dissimilarity", "overall")

#: Where PEM's names belong: PEM's ready-made design and the vocabulary it is built from,
#: PEM's tables (Tables 1–3 of the paper) and the simulator of PEM's four criteria.
ALLOWED = {
    "annotation/judging/defaults.py",
    "annotation/judging/enums.py",
    "annotation/judging/protocols/absolute/pem_tables.py",
    "annotation/judging/protocols/absolute/simulation.py",
}
#: The side-by-side protocol's modules belong to the protocol package (issue 24's other half).
PROTOCOL_SIDE = re.compile(r"(^|/)(comparison|compare_[a-z_]+)\.py$")

SCANNED_PY = ("annotation/judging", "metrics/reports")
SCANNED_TEXT = ("templates/judging", "templates/reports", "static/judging", "static/js")


def _is_docstring(node: ast.AST, parents: dict) -> bool:
    parent = parents.get(node)
    if not isinstance(parent, ast.Expr):
        return False
    holder = parents.get(parent)
    return (
        isinstance(holder, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        and holder.body
        and holder.body[0] is parent
    )


def _literal_names(path: Path) -> list[tuple[int, str]]:
    """String literals in code (not docstrings, not comments) that name a PEM criterion."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    hits = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and not _is_docstring(node, parents):
            words = set(re.findall(r"[a-z]+", node.value.lower()))
            if node.value in PEM_NAMES or words & {"adequacy", "fluency", "dissimilarity"}:
                hits.append((node.lineno, node.value))
    return hits


def test_pem_criterion_names_appear_only_in_pems_design_and_tables():
    found = []
    for top in SCANNED_PY:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in ALLOWED or "/migrations/" in rel or PROTOCOL_SIDE.search(rel):
                continue
            found += [f"{rel}:{line}: {text!r}" for line, text in _literal_names(path)]
    word = re.compile(r"\b(adequacy|fluency|dissimilarity)\b|[\"']overall[\"']", re.IGNORECASE)
    for top in SCANNED_TEXT:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in {".html", ".js"} or PROTOCOL_SIDE.search(path.name.replace(".html", ".py")):
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if word.search(line):
                    found.append(f"{path.relative_to(ROOT).as_posix()}:{n}: {line.strip()[:100]}")
    assert not found, "PEM's criterion names outside PEM's design:\n" + "\n".join(found)


def test_the_scan_finds_a_name_where_one_is_written(tmp_path):
    """The scan is not vacuous: a literal criterion name in code is caught, a docstring is not."""
    sample = tmp_path / "m.py"
    sample.write_text('"""About adequacy."""\n\ndef f(x):\n    """fluency"""\n    return x["overall"]\n')
    assert _literal_names(sample) == [(5, "overall")]

"""metrics.core is pure Python: it may not import Django or the apps."""

import ast
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "metrics" / "core"
FORBIDDEN = ("django", "rest_framework", "celery", "annotation", "metrics.models", "metrics.reports", "config")


def imported_modules(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module


def test_metrics_core_imports_nothing_from_django_or_the_apps():
    offenders = []
    files = sorted(CORE.rglob("*.py"))
    assert files, "metrics/core has no modules"
    for path in files:
        for mod in imported_modules(path):
            if any(mod == f or mod.startswith(f + ".") for f in FORBIDDEN):
                offenders.append(f"{path.relative_to(CORE.parent.parent)} imports {mod}")
    assert offenders == []


def test_metrics_core_really_loads_without_django(tmp_path):
    import subprocess
    import sys

    code = (
        "import sys, importlib, pkgutil\n"
        "import metrics.core as c\n"
        "for m in pkgutil.walk_packages(c.__path__, 'metrics.core.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = [m for m in sys.modules if m == 'django' or m.startswith('django.')]\n"
        "assert not bad, bad\n"
    )
    root = Path(__file__).resolve().parent.parent
    proc = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)})
    assert proc.returncode == 0, proc.stderr

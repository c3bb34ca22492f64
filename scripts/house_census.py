"""Count what issue 29 asks to count in the app's code, before and after the house moved by domain.

    .venv/bin/python scripts/house_census.py            # the counts
    .venv/bin/python scripts/house_census.py --list     # and every finding, one a line

- re-export-only ``__init__.py`` files: a package ``__init__`` whose body is a docstring, imports and ``__all__``
  only, and the names it hands on;
- private names imported across modules: ``from x import _y`` (or ``x._y`` through an imported module) where
  ``x`` is another app module, counted for the app and for the tests;
- circles in the import graph of the app's modules (grimp builds the graph, as import-linter does; the strongly
  connected components are found here), a package's ``__init__`` counted as its own module;
- files under 40 lines that hold one helper: a module, not an ``__init__``, with exactly one top-level function or
  class.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
APPS = ("annotation", "metrics", "config")


def app_files() -> list[Path]:
    return sorted(
        p
        for app in APPS
        for p in (ROOT / app).rglob("*.py")
        if "migrations" not in p.parts and "__pycache__" not in p.parts
    )


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def reexport_only(tree: ast.Module) -> list[str] | None:
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        if isinstance(node, ast.ImportFrom):
            names += [a.asname or a.name for a in node.names]
            continue
        if isinstance(node, ast.Import):
            continue
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__all__"]:
            continue
        return None
    return names if names else None


def resolve(current: str, is_package: bool, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = current.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def private_imports(paths: list[Path], known: set[str]) -> list[str]:
    """``from app.module import _name`` and ``module._name`` (module imported from the app) in these files."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        try:
            here = module_name(path)
        except ValueError:
            here = ""
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = resolve(here, path.name == "__init__.py", node)
                if source.split(".")[0] not in APPS:
                    continue
                for alias in node.names:
                    target = f"{source}.{alias.name}"
                    if target in known:
                        aliases[alias.asname or alias.name] = target
                    elif is_private(alias.name) and source != here:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {source} import {alias.name}")
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] in APPS:
                        bound = alias.asname or alias.name.split(".")[0]
                        aliases[bound] = alias.name if alias.asname else bound
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and is_private(node.attr):
                chain = []
                value: ast.expr = node.value
                while isinstance(value, ast.Attribute):
                    chain.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id in aliases:
                    dotted = ".".join([aliases[value.id], *reversed(chain)])
                    if dotted in known and dotted != here:
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {dotted}.{node.attr}")
    return found


def circles() -> list[list[str]]:
    import grimp

    sys.path.insert(0, str(ROOT))
    graph = grimp.build_graph(*APPS, include_external_packages=False)
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(10_000)
    try:  # the limit is put back: a test process shares it (JSON readers rely on it)
        for module in modules:
            if module not in index:
                connect(module)
    finally:
        sys.setrecursionlimit(limit)
    return components


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every finding")
    args = parser.parse_args()
    files = app_files()
    known = {module_name(p) for p in files}

    faces = {}
    small = []
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        if path.name == "__init__.py":
            names = reexport_only(tree)
            if names:
                faces[str(path.relative_to(ROOT))] = names
        else:
            top = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
            lines = len(path.read_text().splitlines())
            if lines < 40 and len(top) == 1 and "management/commands" not in str(path):
                small.append(f"{path.relative_to(ROOT)} ({lines} lines: {top[0].name})")

    app_private = private_imports(files, known)
    test_private = private_imports(sorted((ROOT / "tests").rglob("*.py")), known)
    by_module: dict[str, int] = defaultdict(int)
    for line in app_private:
        by_module[line.split(":")[0]] += 1
    loops = circles()

    print(f"re-export-only __init__ files: {len(faces)}, names handed on: {sum(map(len, faces.values()))}")
    print(
        f"private names imported across app modules: {len(app_private)} in {len(by_module)} modules; "
        f"by tests: {len(test_private)}"
    )
    print(f"circles in the import graph: {len(loops)} (modules in them: {sum(map(len, loops))})")
    print(f"files under 40 lines holding one helper: {len(small)}")
    if args.list:
        for path, names in faces.items():
            print(f"face {path}: {len(names)} names")
        for line in [*app_private, *test_private]:
            print(f"private {line}")
        for loop in loops:
            print("circle " + " <-> ".join(loop))
        for line in small:
            print(f"small {line}")


if __name__ == "__main__":
    main()

"""metrics.core is pure Python: it may not import Django or anything of the project outside itself."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ROOT / "metrics" / "core"
#: What metrics.core may not import besides the project: the web framework and the job queue.
FRAMEWORKS = ("django", "rest_framework", "celery")


def project_packages() -> list[str]:
    """The root packages of the project, as .importlinter names them (``root_packages``)."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter", encoding="utf-8")
    return config["importlinter"]["root_packages"].split()


def imported_modules(path: Path, *, package: str | None = None):
    """The modules ``path`` imports, at module level or inside functions. With ``package`` (the
    dotted package ``path`` is in), relative imports are resolved too; without it they are skipped."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module:
                    yield node.module
            elif package is not None:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                yield f"{base}.{node.module}" if node.module else base


def core_import_offenders(core: Path = CORE) -> list[str]:
    """Each import in a module under ``core`` (metrics/core) of a framework or of a module of the
    project outside metrics.core: which the project's modules are is read from the files (every
    root package of .importlinter), so the list cannot fall behind a new module or app."""
    root = core.parent.parent
    project = tuple(project_packages())
    offenders = []
    for path in sorted(core.rglob("*.py")):
        package = ".".join(path.relative_to(root).parent.parts)
        for mod in imported_modules(path, package=package):
            if mod == "metrics.core" or mod.startswith("metrics.core."):
                continue
            if any(mod == f or mod.startswith(f + ".") for f in (*FRAMEWORKS, *project)):
                offenders.append(f"{path.relative_to(root)} imports {mod}")
    return offenders


def test_metrics_core_imports_nothing_from_django_or_the_apps():
    assert sorted(CORE.rglob("*.py")), "metrics/core has no modules"
    assert core_import_offenders() == []


def test_an_import_of_any_other_module_of_the_project_from_metrics_core_is_named(tmp_path):
    """The check above is not vacuous, and needs no list of the apps' modules: a core module that
    imports the dashboard (absolutely or relatively), a new sibling of core, the metrics package
    itself, config's job plumbing or Django is reported; one that imports core is not."""
    core = tmp_path / "metrics" / "core"
    (core / "stats").mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "stats" / "__init__.py").write_text("")
    (core / "stats" / "fine.py").write_text("from metrics.core.text import tokens\nfrom ..text import tokens\n")
    (core / "stats" / "stray.py").write_text(
        "def late():\n"
        "    from metrics.dashboard.bonus import bonus_rows\n"
        "    from ...newthing import x\n"
        "    from ... import enums\n"
        "    from config.jobs.enums import JobStatus\n"
        "    import django.db\n"
    )
    assert core_import_offenders(core) == [
        "metrics/core/stats/stray.py imports metrics.dashboard.bonus",
        "metrics/core/stats/stray.py imports metrics.newthing",
        "metrics/core/stats/stray.py imports metrics",
        "metrics/core/stats/stray.py imports config.jobs.enums",
        "metrics/core/stats/stray.py imports django.db",
    ]


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
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)},
    )
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------- import contracts


def _lint_imports_command():
    """``lint-imports`` next to this interpreter (the venv), else on PATH; None if not installed."""
    import shutil
    import sys

    here = Path(sys.executable).parent / "lint-imports"
    if here.exists():
        return str(here)
    return shutil.which("lint-imports")


def _run_lint_imports(*args, cwd=ROOT):
    import subprocess

    command = _lint_imports_command()
    if command is None:
        import pytest

        pytest.skip("import-linter is not installed (pip install -r requirements-dev.txt)")
    return subprocess.run([command, "--no-cache", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_import_contracts_are_kept():
    """Every contract in .importlinter holds: the layers of docs/architecture.md."""
    proc = _run_lint_imports()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 broken" in proc.stdout


def test_import_contracts_cover_the_layers_the_design_names():
    """The contracts really are there (an empty .importlinter would pass vacuously)."""
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter", encoding="utf-8")
    contracts = {
        name.split(":", 2)[2]: config[name] for name in config.sections() if name.startswith("importlinter:contract:")
    }
    assert {
        "core-no-django",
        "models-below-logic",
        "logic-below-web",
        "human-side-not-metrics-web",
        "app-layers",
        "protocol-units",
        "config-layers",
        "core-acyclic",
        "jobs-below-the-apps",
    } <= set(contracts)
    assert {contracts[c]["type"] for c in contracts} >= {"forbidden", "layers", "independence", "acyclic_siblings"}
    assert "django" in contracts["core-no-django"]["forbidden_modules"].split()
    assert "annotation.management" in contracts["logic-below-web"]["forbidden_modules"].split()
    assert "config.recovery" in contracts["logic-below-web"]["source_modules"].split()


# --------------------------------------------------------------------------- every module in a layer

APPS = ("annotation", "metrics", "config")


def app_modules(root: Path = ROOT) -> list[str]:
    """Every module of the apps, read from the files: each ``.py`` under annotation/, metrics/
    and config/ (migrations included), a package named by its ``__init__.py``."""
    names = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if "__pycache__" in parts:
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def _contracts():
    import configparser

    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter", encoding="utf-8")
    return {
        name.split(":", 2)[2]: config[name] for name in config.sections() if name.startswith("importlinter:contract:")
    }


def layers_contracts_places() -> tuple[set[str], set[str]]:
    """(containers, layer modules) of every layers contract in .importlinter: a layer of a
    contract with containers is each container plus the layer's name (``annotation`` +
    ``services``), optional or not; a container may be a wildcard (``annotation.judging.protocols.*``:
    every protocol package). The units of the independence contracts whose modules are a
    wildcard (``protocol-units``: every package and module directly under
    ``annotation.judging.protocols``) count as containers: each is a unit of its own, which
    app-layers orders inside."""
    import re

    containers: set[str] = set()
    layers: set[str] = set()
    for contract in _contracts().values():
        if contract.get("type") == "independence":  # the units and the package that holds them
            wildcards = [m for m in contract["modules"].split() if m.endswith(".*")]
            containers.update(wildcards + [m.removesuffix(".*") for m in wildcards])
        if contract.get("type") != "layers":
            continue
        own = contract.get("containers", "").split()
        names = [
            name.strip().strip("()")
            for line in contract["layers"].strip().splitlines()
            for name in re.split(r"[|:]", line)
            if name.strip()
        ]
        containers.update(own)
        if own:
            layers.update(f"{c}.{n}" for c in own for n in names)
        else:
            layers.update(names)
    return containers, layers


def _pattern(name: str, *, descendants: bool):
    """``name`` as a regular expression: ``*`` is one part of a dotted name; with
    ``descendants``, the modules below it match too."""
    import re

    regex = r"[^.]+".join(re.escape(part) for part in name.split("*"))
    return re.compile(regex + (r"(\..+)?" if descendants else ""))


def modules_in_no_layer(modules: list[str]) -> list[str]:
    """The modules that no layers contract places: neither a container nor in a layer (a
    layer spans its package: ``annotation.services.queueing`` is in ``annotation.services``)."""
    containers, layers = layers_contracts_places()
    container_patterns = [_pattern(c, descendants=False) for c in containers]
    layer_patterns = [_pattern(layer, descendants=True) for layer in layers]

    def placed(module: str) -> bool:
        return any(p.fullmatch(module) for p in container_patterns) or any(p.fullmatch(module) for p in layer_patterns)

    return [module for module in modules if not placed(module)]


def test_every_module_of_the_apps_is_in_a_layer():
    """The map cannot fall behind: a new module of annotation, metrics or config must be given
    a layer in .importlinter (or be a sub-app: a container of its own)."""
    modules = app_modules()
    assert len(modules) > 300, modules
    assert {
        "annotation.participation.services",
        "annotation.judging.screening_apis",
        "annotation.judging.protocols.side_by_side.report",
        "metrics.core.sacre.bleu_stats",
        "config.settings",
    } <= set(modules)
    assert modules_in_no_layer(modules) == []


def test_a_module_in_no_layer_is_named():
    """The check above is not vacuous: a module the contracts do not place is reported."""
    strays = [
        "annotation.judging.newthing",
        "annotation.participation.newthing",
        "metrics.newthing.part",
        "config.newthing",
        "annotation.judging.protocols.esa.newthing",
    ]
    assert modules_in_no_layer([*app_modules(), *strays]) == strays


def test_the_layers_contracts_exempt_only_sub_apps_from_exhaustiveness():
    """``exhaustive_ignores`` names sub-apps only: each ignored name, under each container of its
    contract, is missing or a container itself, so it cannot hide a module from the layers."""
    containers, _ = layers_contracts_places()
    modules = set(app_modules())
    layered = [c for c in _contracts().values() if c.get("type") == "layers"]
    assert all(c.get("exhaustive") == "true" for c in layered if c.get("containers"))
    for contract in layered:
        for name in contract.get("exhaustive_ignores", "").split():
            for container in contract.get("containers", "").split():
                module = f"{container}.{name}"
                assert module not in modules or module in containers, module


def test_the_core_contract_forbids_all_of_the_project_outside_metrics_core():
    """``core-no-django`` lists no module of metrics by hand, so it cannot fall behind one: it
    forbids every other root package whole and every child of metrics by wildcard."""
    forbidden = set(_contracts()["core-no-django"]["forbidden_modules"].split())
    assert _contracts()["core-no-django"]["source_modules"].split() == ["metrics.core"]
    assert {"django", "rest_framework", "celery"} <= forbidden
    assert {p for p in project_packages() if p != "metrics"} <= forbidden
    assert {m for m in forbidden if m.startswith("metrics")} == {"metrics.*"}


def _tree_copy(tmp_path):
    """The apps and .importlinter copied under ``tmp_path``, for a contract to be broken there."""
    import shutil

    for name in project_packages():
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__", "migrations"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_import_contracts_catch_metrics_core_importing_a_module_of_metrics_no_list_names(tmp_path):
    """The core contract bites on a module that no list names: metrics.core importing the dashboard
    (the module the hand-written list once missed) or a sub-app of metrics added after the contract."""
    tree = _tree_copy(tmp_path)
    (tree / "metrics" / "newthing").mkdir()
    (tree / "metrics" / "newthing" / "__init__.py").write_text("")
    with open(tree / "metrics" / "core" / "pinc.py", "a", encoding="utf-8") as fh:
        fh.write("\nfrom metrics.dashboard import bonus  # the break\nimport metrics.newthing  # the break\n")
    proc = _run_lint_imports(cwd=tree)
    assert proc.returncode != 0
    assert "metrics.core is not allowed to import metrics.dashboard" in proc.stdout
    assert "metrics.core is not allowed to import metrics.newthing" in proc.stdout


def test_import_contracts_catch_a_service_that_imports_a_view(tmp_path):
    """The contracts fail when a layer is broken: the generation service importing the web layer again."""
    tree = _tree_copy(tmp_path)
    with open(tree / "annotation" / "generation.py", "a", encoding="utf-8") as fh:
        fh.write("\nfrom .views import researcher_study_required  # the break this branch fixed\n")
    proc = _run_lint_imports(cwd=tree)
    assert proc.returncode != 0
    assert "annotation.generation is not allowed to import annotation.views" in proc.stdout


def test_every_kind_of_job_registers_its_requeuer_and_recovery_loads_no_app_code():
    """Each app's ``ready`` registers the service that resends its jobs (config.recovery.requeuer_register):
    the requeue pass finds them all without naming a module by a dotted string or importing app code."""
    from annotation.alignment.services.queueing import jobs_requeue_stale as alignment_requeue
    from annotation.judging.services.queueing import jobs_requeue_stale as opening_requeue
    from annotation.services.queueing import jobs_requeue_stale as import_requeue
    from config.recovery import requeuers
    from metrics.dashboard.services.queueing import plans_requeue_stale
    from metrics.reports.services.queueing import reports_requeue_stale
    from metrics.services.runs import metric_runs_requeue_stale

    registered = dict(requeuers())
    assert registered == {
        import_requeue: "import/generation job(s)",
        opening_requeue: "judging opening(s)",
        alignment_requeue: "alignment scoring/aligner run(s)",
        metric_runs_requeue_stale: "metric run(s)",
        reports_requeue_stale: "report(s)",
        plans_requeue_stale: "plan(s)",
    }
    recovery_imports = set(imported_modules(ROOT / "config" / "recovery.py"))
    # nothing of the apps: the job status is config.jobs', below them
    assert not [m for m in recovery_imports if m.split(".")[0] in ("annotation", "metrics")]
    assert "config.jobs.enums" in recovery_imports
    assert "importlib" not in recovery_imports


def test_ruff_finds_nothing_with_the_agreed_rules():
    """``ruff check`` (ruff.toml) is clean and ``ruff format --check`` changes nothing, as CI requires."""
    import shutil
    import subprocess
    import sys

    import pytest

    ruff = Path(sys.executable).parent / "ruff"
    command = str(ruff) if ruff.exists() else shutil.which("ruff")
    if command is None:
        pytest.skip("ruff is not installed (pip install -r requirements-dev.txt)")
    proc = subprocess.run([command, "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # and the tree is as ``ruff format`` leaves it (make lint checks the same)
    proc = subprocess.run(
        [command, "format", "--check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def house_census():
    """scripts/house_census.py, the counter of issue 29, loaded as a module."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "scripts" / "house_census.py"
    spec = importlib.util.spec_from_file_location("house_census", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_module_imports_a_private_name_of_another():
    """A name another module uses is public: no ``from x import _y`` or ``x._y`` across the
    modules of the apps, from the apps or from the tests (tests patch public names)."""
    census = house_census()
    files = census.app_files()
    known = {census.module_name(p) for p in files}
    tests = sorted((census.ROOT / "tests").rglob("*.py"))
    assert len(files) > 300 and len(tests) > 100
    assert census.private_imports(files, known) == []
    assert census.private_imports(tests, known) == []


def test_a_private_import_across_modules_is_found(tmp_path):
    """The check above is not vacuous: both spellings of a private import are reported."""
    census = house_census()
    known = {census.module_name(p) for p in census.app_files()}
    stray = census.ROOT / "tests" / f"_stray_private_import_{tmp_path.name}.py"
    stray.write_text(
        "from annotation.judging.protocols import registry\n"
        "from annotation.judging.protocols.registry import _loaded\n"
        "registry._REGISTRY.clear()\n"
    )
    try:
        found = census.private_imports([stray], known)
    finally:
        stray.unlink()
    assert [f.split(": ", 1)[1] for f in found] == [
        "from annotation.judging.protocols.registry import _loaded",
        "annotation.judging.protocols.registry._REGISTRY",
    ]


def test_the_import_graph_of_the_apps_has_no_circles():
    """No two modules of the apps import each other, directly or round a circle (a module-level
    or late import alike: grimp sees both). A service that asks for background work imports the
    tasks from its ``queueing`` module; the tasks import only the modules that do the work."""
    assert house_census().circles() == []

"""Docs that run: every shell and Python block of README.md and docs/*.md is executed, in order,
against a fresh demo (one demo database per Markdown file), so a wrong command in the docs fails.

Sybil (pinned in requirements-dev.txt) finds the fenced blocks and the skip markers; this module
says how a block runs. A block runs as the reader would run it, from a sandbox that looks like a
fresh clone after `make run` (every top-level entry of the repository linked in, its own `var/`
through PARAEVAL_VAR_DIR holding a copy of the demo database, and the example files of
docs/examples/ beside it), with the virtualenv NOT on PATH: bare `python manage.py` fails here as
it does on a fresh clone, so the docs must say `.venv/bin/python manage.py` (or `make manage`).

Blocks that cannot run in CI carry a visible marker on the line before them, with the reason:

    <!-- skip: next "serves forever (make run)" -->

(Sybil's skip directive: `skip: start` … `skip: end` skips several.) Fences tagged `sh`, `bash`,
`shell`, `console`, `python` or `http` (API calls: `POST /api/...` and a JSON body, made as the
demo's researcher) are collected; an untagged fence that holds a command fails
`test_every_command_block_is_tagged`, so a new command cannot hide from this test.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import unittest
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sybil import Document
from sybil.parsers.markdown import CodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent.parent
EXAMPLES = ROOT / "docs" / "examples"
SHELL_LANGUAGES = ("sh", "bash", "shell", "console")
# Not linked into the sandbox: the sandbox has its own var/ (and out/, site/ are written there).
NOT_LINKED = {".git", "var", "site", "out", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"}
BLOCK_TIMEOUT_S = 600


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@dataclass
class Sandbox:
    cwd: Path
    env: dict[str, str]
    ran: list[str] = field(default_factory=list)


def _clean_path() -> str:
    """PATH without any virtualenv's bin/: the docs' commands must name the venv themselves."""
    keep = [p for p in os.environ.get("PATH", "").split(os.pathsep)
            if p and not (Path(p).parent / "pyvenv.cfg").exists()]
    return os.pathsep.join(keep)


def _env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "PYTHONPATH"}
           and not k.startswith(("PYTEST_", "PARAEVAL_"))}
    env.update({"PATH": _clean_path(), "PARAEVAL_VAR_DIR": str(var_dir), "PYTHONDONTWRITEBYTECODE": "1",
                "CELERY_TASK_ALWAYS_EAGER": "true"})
    return env


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory, worker_id) -> Path:
    """One migrated demo (`manage.py migrate` + `load_demo`); each Markdown file gets a copy.

    Made once for the whole run: under pytest-xdist every test process would make its own (22 s
    each), so the first one makes it in the run's shared temporary folder, under a file lock,
    and the others wait for it and copy it."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp() if worker_id == "master" else tmp_path_factory.getbasetemp().parent
    var, done = shared / "docs-demo-template", shared / "docs-demo-template.done"
    with FileLock(str(shared / "docs-demo-template.lock")):
        if not done.exists():
            shutil.rmtree(var, ignore_errors=True)
            var.mkdir()
            env = _env(var)
            for args in (["migrate", "--noinput", "-v0"], ["load_demo"]):
                proc = subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], cwd=ROOT, env=env,
                                      capture_output=True, text=True, timeout=600)
                assert proc.returncode == 0, proc.stderr[-3000:]
            done.touch()
    return var


def make_sandbox(base: Path, template: Path) -> Sandbox:
    cwd = base / "clone"
    cwd.mkdir()
    for entry in ROOT.iterdir():
        if entry.name not in NOT_LINKED:
            (cwd / entry.name).symlink_to(entry)
    for example in EXAMPLES.iterdir():
        if example.is_file():
            shutil.copy(example, cwd / example.name)
    var = cwd / "var"
    shutil.copytree(template, var)
    return Sandbox(cwd=cwd, env=_env(var))


def run_shell(example) -> None:
    box: Sandbox = example.namespace["sandbox"]
    source = example.parsed
    box.ran.append(f"{Path(example.path).name}:{example.line}")
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", source], cwd=box.cwd, env=box.env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise AssertionError(
            f"{Path(example.path).name}, line {example.line}: the block exited {proc.returncode}\n"
            f"--- block\n{source}--- stdout (tail)\n{proc.stdout[-2000:]}\n--- stderr (tail)\n{proc.stderr[-3000:]}")


def run_python(example) -> None:
    """A Python block runs as a script from the sandbox with the venv's Python and Django set up."""
    box: Sandbox = example.namespace["sandbox"]
    box.ran.append(f"{Path(example.path).name}:{example.line}")
    prelude = ("import os, sys, django\nsys.path.insert(0, os.getcwd())\n"
               "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'config.settings')\ndjango.setup()\n")
    proc = subprocess.run([sys.executable, "-c", prelude + example.parsed], cwd=box.cwd, env=box.env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, stdin=subprocess.DEVNULL)
    if proc.returncode != 0:
        raise AssertionError(f"{Path(example.path).name}, line {example.line}: the Python block failed\n"
                             f"--- block\n{example.parsed}--- stderr (tail)\n{proc.stderr[-3000:]}")


HTTP_SCRIPT = r"""
import json, os, re, sys, django
sys.path.insert(0, os.getcwd())
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django.setup()
from django.contrib.auth.models import User
from django.test import Client

client = Client(HTTP_HOST="127.0.0.1")
client.force_login(User.objects.get(username=os.environ.get("DOCS_API_USER", "researcher")))
calls = re.split(r"\n(?=(?:GET|POST|PATCH|PUT|DELETE) /)", sys.stdin.read().strip())
for call in calls:
    head, _, body = call.partition("\n")
    method, path = head.split()[:2]
    data = body.strip() or None
    response = getattr(client, method.lower())(path, data=data, content_type="application/json") \
        if data else getattr(client, method.lower())(path)
    print(method, path, response.status_code)
    if response.status_code >= 400:
        sys.exit(f"{method} {path} answered {response.status_code}: {response.content[:1500].decode(errors='replace')}")
"""


def run_http(example) -> None:
    """An `http` block: one or more API calls (`METHOD /path`, then an optional JSON body), made
    as the demo's researcher through Django's test client against the sandbox's database; any
    4xx or 5xx answer fails."""
    box: Sandbox = example.namespace["sandbox"]
    box.ran.append(f"{Path(example.path).name}:{example.line}")
    proc = subprocess.run([sys.executable, "-c", HTTP_SCRIPT], input=example.parsed, cwd=box.cwd, env=box.env,
                          capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S)
    if proc.returncode != 0:
        raise AssertionError(f"{Path(example.path).name}, line {example.line}: an API call failed\n"
                             f"--- block\n{example.parsed}--- output\n{proc.stdout[-2000:]}{proc.stderr[-3000:]}")


PARSERS = [*(CodeBlockParser(language=lang, evaluator=run_shell) for lang in SHELL_LANGUAGES),
           CodeBlockParser(language="python", evaluator=run_python), CodeBlockParser(language="http", evaluator=run_http),
           SkipParser()]


def semantic_extra() -> bool:
    """Is the optional semantic extra (make install-semantic) installed? `skip: next if(not
    semantic_extra, "...")` markers read it."""
    from metrics.core.registry import get_metric

    return getattr(get_metric("embed-cosine"), "unavailable_reason", lambda: None)() is None


def parse(path: Path) -> Document:
    document = Document.parse(str(path), *PARSERS)
    document.namespace["semantic_extra"] = semantic_extra()
    return document


def collected(path: Path) -> list:
    """The runnable blocks of one file (the skip markers are examples too: left out here)."""
    return [e for e in parse(path).examples() if e.region.evaluator in (run_shell, run_python, run_http)]


FILES_WITH_BLOCKS = [p for p in markdown_files() if collected(p)]


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES_WITH_BLOCKS, ids=lambda p: p.name)
def test_every_command_in_the_docs_runs_against_a_fresh_demo(path, demo_template, tmp_path):
    box = make_sandbox(tmp_path, demo_template)
    document = parse(path)
    document.namespace["sandbox"] = box
    skipped = []
    for example in document.examples():
        try:
            example.evaluate()
        except unittest.SkipTest as skip:
            skipped.append(f"line {example.line}: {skip}")
    blocks = collected(path)
    assert len(box.ran) + len(skipped) == len(blocks), (box.ran, skipped)
    print(f"{path.name}: {len(blocks)} blocks, {len(box.ran)} ran, {len(skipped)} skipped {skipped}")


COMMAND = re.compile(r"^\s*(\$ )?(\.venv/bin/|python3? |make |curl |manage\.py |(GET|POST|PATCH|PUT|DELETE) /api/)", re.MULTILINE)
FENCE = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])?[ \t]*```([^\n`]*)\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)


def test_every_command_block_is_tagged():
    """An untagged (or `text`) fence holding a command would escape the run above."""
    hiding = []
    for path in markdown_files():
        for match in FENCE.finditer(path.read_text(encoding="utf-8")):
            lang, body = match.group(1).strip(), match.group(2)
            if lang in ("", "text") and COMMAND.search(body):
                line = path.read_text(encoding="utf-8")[:match.start()].count("\n") + 1
                hiding.append(f"{path.name}:{line}")
    assert hiding == [], "tag these fences ```sh so that the docs test runs them"


def test_the_docs_test_collects_the_command_blocks_and_names_every_skip():
    blocks = {p.name: collected(p) for p in markdown_files()}
    total = sum(len(b) for b in blocks.values())
    assert total >= 30, blocks
    for path in markdown_files():
        text = path.read_text(encoding="utf-8")
        for marker in re.finditer(r"<!--\s*skip:\s*(next|start)(.*?)-->", text):
            assert marker.group(2).strip(), f"{path.name}: a skip marker without its reason"


def test_bare_python_manage_py_fails_in_the_sandbox_as_on_a_fresh_clone(demo_template, tmp_path):
    box = make_sandbox(tmp_path, demo_template)
    bare = subprocess.run(["bash", "-c", "python manage.py check"], cwd=box.cwd, env=box.env,
                          capture_output=True, text=True, timeout=120)
    venv = subprocess.run(["bash", "-c", ".venv/bin/python manage.py check"] if (ROOT / ".venv").exists()
                          else [sys.executable, "manage.py", "check"], cwd=box.cwd, env=box.env,
                          capture_output=True, text=True, timeout=120)
    assert bare.returncode != 0
    assert venv.returncode == 0, venv.stderr[-2000:]

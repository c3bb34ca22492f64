"""docs/architecture.md answers the newcomer's "how do I add a protocol" (issue 39): every file
and name its answer gives exists, and every protocol package has the files it says a package
has, so the answer cannot drift from the code unnoticed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROTOCOLS = ROOT / "annotation" / "judging" / "protocols"
START = "To add a protocol, do what ESA did:"
END = "### Adding a protocol: the conformance suite runs it"


def _answer() -> str:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert START in text and END in text, "docs/architecture.md lost its answer to 'how do I add a protocol'"
    return text[text.index(START) : text.index(END)]


def _quoted(text: str) -> list[str]:
    return re.findall(r"`([^`\s]+)`", text)


def _packages() -> list[Path]:
    return sorted(p for p in PROTOCOLS.iterdir() if (p / "unit.py").exists())


def test_every_path_the_answer_names_exists():
    answer = _answer()
    paths = [q for q in _quoted(answer) if "/" in q and "<name>" not in q and not q.startswith(("http", "judging:"))]
    assert paths, "the answer names no file"
    for path in paths:
        # a template is named as Django finds it ("judging/_entry_page.html", under templates/)
        found = (ROOT / path).exists() or (ROOT / "templates" / path).exists()
        assert found, f"docs/architecture.md's answer names {path}, which does not exist"


def test_every_protocol_package_has_the_modules_the_answer_gives_a_package():
    step_one = _answer().split("\n2. ", 1)[0]
    modules = sorted({q for q in _quoted(step_one) if re.fullmatch(r"[a-z_]+\.py", q)})
    assert {"models.py", "unit.py", "services.py", "views.py", "apis.py", "urls.py", "report.py"} <= set(modules)
    for package in _packages():
        for module in modules:
            assert (package / module).exists(), f"{package.name} has no {module}, which the answer gives every package"
        for folder in ("templates/judging", "static/judging"):
            assert (package / folder / package.name).is_dir(), f"{package.name} has no {folder}/{package.name}/"


def test_every_name_the_answer_gives_is_defined_where_it_says():
    answer = _answer()
    # identifiers: CamelCase classes, CONSTANTS and snake_case functions (not the app label "judging")
    names = {q for q in _quoted(answer) if re.fullmatch(r"[A-Za-z]+_[A-Za-z_]+|[A-Z][A-Za-z]+", q)}
    assert {"JudgingProtocol", "JudgeApiSpec", "submission_store", "judge_page_paths", "BUILTIN_MODULES"} <= names
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "annotation").rglob("*.py"))
    for name in sorted(names):
        assert re.search(rf"\b(class|def)\s+{name}\b|^\s*{name}\s*[:=]", source, re.M), (
            f"docs/architecture.md's answer names {name}, which nothing in annotation/ defines"
        )


def test_protocols_md_names_the_same_files():
    """docs/protocols.md's own answer (the worked package listing) names the modules the
    architecture answer gives every package."""
    text = (ROOT / "docs" / "protocols.md").read_text(encoding="utf-8")
    for module in ("unit.py", "services.py", "views.py", "apis.py", "urls.py", "report.py"):
        assert module in text, f"docs/protocols.md does not name {module}"

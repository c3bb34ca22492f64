"""Protocols are units: nothing outside the registry decides by comparing a protocol's name
(issue 24), and every registered unit answers what the shared code asks of it."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Where protocol names may be compared: the registry and the protocol packages themselves,
#: the stored choices (enums, the model field, migrations).
ALLOWED = (
    "annotation/judging/protocols/",
    "annotation/judging/enums.py",
    "annotation/judging/models.py",
    "/migrations/",
)
#: A protocol-name test in Python or a template: ``protocol ==``/``!=``/``in``, a protocol
#: name in quotes compared, a query on the field, ``Protocol.X`` (the stored choices).
PATTERNS = [
    re.compile(r"""\bprotocol\b["')\]]*\s*(==|!=|\bin\b|\bnot in\b)"""),
    re.compile(r"""(==|!=)\s*["'](comparison|absolute|side_by_side|esa|ranking)["']"""),
    re.compile(r"""["'](comparison|absolute|side_by_side|esa|ranking)["']\s*(==|!=)"""),
    re.compile(r"""\bprotocol(__\w+)?\s*=\s*["']"""),
    re.compile(r"""\bProtocol\.(ABSOLUTE|COMPARISON|ESA|RANKING)\b"""),
]
SCANNED = ("annotation", "metrics", "config", "templates", "static")


def _offenders() -> list[str]:
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".html", ".js", ".txt") or not path.is_file():
                continue
            rel = path.relative_to(ROOT).as_posix()
            if any(a in rel or rel.startswith(a) for a in ALLOWED):
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if any(p.search(line) for p in PATTERNS):
                    found.append(f"{rel}:{n}: {line.strip()}")
    return found


def test_no_code_outside_the_registry_compares_protocol_names():
    assert _offenders() == []


def test_the_check_catches_a_protocol_name_comparison(tmp_path, monkeypatch):
    """The scan is real: each way of testing a protocol's name is caught."""
    for line in (
        'if design.protocol == "comparison":',
        "if design.protocol != Protocol.COMPARISON:",
        'JudgingDesign.objects.filter(study=s, protocol="comparison")',
        '{% if report.result.protocol == "comparison" %}',
        'if result.get("protocol") == "comparison":',
    ):
        assert any(p.search(line) for p in PATTERNS), line


@pytest.mark.django_db
def test_every_registered_unit_is_a_stored_choice_and_answers_the_shared_questions():
    from django.urls import reverse

    from annotation.judging.enums import Protocol
    from annotation.judging.protocols.base import NAVIGATION_KEYS
    from annotation.judging.protocols.registry import protocol_get, protocols_all

    units = protocols_all()
    assert sorted(u.slug for u in units) == sorted(Protocol.values)
    for unit in units:
        assert protocol_get(unit.slug) is unit
        assert reverse(unit.judge_page, kwargs={"study_id": 1})  # a real page
        for _label, url_name in unit.exports:
            assert reverse(url_name, kwargs={"study_id": 1})
        for rtl in (False, True):
            keys = unit.answer_keys(design=None, rtl=rtl) or []
            answer = [k for a in keys for k in a.keys]
            # a key means one thing on a page: no answer key twice, none also a way back or a shared key
            assert len(answer) == len(set(answer)), unit
            assert not set(answer) & (set(unit.back_keys) | set(NAVIGATION_KEYS)), unit
    with pytest.raises(KeyError, match="unknown judging protocol"):
        protocol_get("no-such-protocol")


@pytest.mark.django_db
def test_every_unit_with_screening_answers_the_training_and_attention_questions():
    """Issue 24: the shared training and screening code asks the unit; a unit that says
    ``has_screening`` answers every one of those questions (none is left to the base)."""
    import random

    from annotation.judging.protocols.base import JudgingProtocol
    from annotation.judging.protocols.registry import protocols_all

    methods = (
        "training_columns",
        "training_slugs",
        "training_item_clean",
        "training_answer_clean",
        "training_verdicts",
        "training_correct",
        "training_item_for_judge",
        "attention_draw",
        "attention_score",
    )
    screened = [u for u in protocols_all() if u.has_screening]
    assert {u.slug for u in screened} >= {"absolute", "comparison"}
    for unit in screened:
        for name in methods:
            assert getattr(type(unit), name) is not getattr(JudgingProtocol, name), (unit, name)
        slug, expected = unit.attention_draw(design=None, rng=random.Random(1))
        assert isinstance(slug, str) and isinstance(expected, (int, float))  # AttentionCheck.expected is a number
        assert unit.training_columns(design=None)[0] == "original"


def test_every_unit_declares_its_own_tables_on_the_shared_bases():
    """Issue 39: a protocol's item and judgment tables live in its own package, on the
    judging app's abstract bases, and are the judging app's tables (loaded at start-up,
    today's table names: no data moves)."""
    from django.apps import apps

    from annotation.judging.models import JudgingItemBase, JudgmentBase
    from annotation.judging.protocols.registry import protocols_all

    for unit in protocols_all():
        package = type(unit).__module__.rpartition(".")[0]
        for model, base in ((unit.item_model, JudgingItemBase), (unit.judgment_model, JudgmentBase)):
            assert issubclass(model, base), (unit.slug, model)
            assert not model._meta.abstract, (unit.slug, model)
            assert model.__module__ == f"{package}.models", (unit.slug, model)
            assert apps.get_model("judging", model.__name__) is model
            assert model._meta.db_table == f"judging_{model.__name__.lower()}"
        # The judgment table's item is the unit's item table.
        assert unit.judgment_model._meta.get_field("item").related_model is unit.item_model, unit.slug


def test_every_protocol_package_has_its_tests_in_the_mirrored_folder():
    """Issue 39: a protocol's tests mirror its package, annotation/judging/protocols/<name>/ ->
    tests/annotation/judging/protocols/<name>/, so a protocol's tests are found in one place (the
    conformance suite, tests/conformance/, is the contract over all of them)."""
    from annotation.judging.protocols.registry import protocols_all

    root = Path(__file__).resolve().parent / "annotation" / "judging" / "protocols"
    packages = {
        type(unit).__module__.split(".")[3]
        for unit in protocols_all()
        if type(unit).__module__.startswith("annotation.judging.protocols.")
    }
    assert packages >= {"absolute", "esa", "ranking", "side_by_side"}
    for name in sorted(packages):
        folder = root / name
        assert (folder / "__init__.py").exists(), f"no test package {folder}"
        assert list(folder.glob("test_*.py")), f"no test module in {folder}"


def test_a_protocol_with_a_report_page_of_its_own_computes_it_in_its_package():
    """Issue 39: a protocol's report and its dashboard figures are methods of its unit (no dotted
    paths), whose code is its package's report.py; for the report the base answers None, which is the
    absolute report of metrics.reports."""
    from annotation.judging.protocols.base import JudgingProtocol
    from annotation.judging.protocols.registry import protocols_all

    own = [u for u in protocols_all() if u.report_template]
    assert {u.slug for u in own} >= {"esa", "ranking", "comparison"}
    for unit in own:
        package = type(unit).__module__.rpartition(".")[0]
        for name in ("report_compute", "report_tables", "dashboard_answers"):
            method = getattr(type(unit), name)
            assert callable(method) and method is not getattr(JudgingProtocol, name), (unit.slug, name)
        report = importlib.import_module(f"{package}.report")
        assert report.__file__ and Path(report.__file__).name == "report.py"
    for unit in protocols_all():
        if not unit.report_template:  # the absolute report: the job's default
            assert unit.report_compute(report=None, settings={}) is None
            assert unit.report_tables({}) is None

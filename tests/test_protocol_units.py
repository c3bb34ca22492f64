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


def test_every_protocol_computes_its_report_and_figures_in_its_package():
    """Issue 39: a protocol's report, its tables and its dashboard figures are methods of its unit
    (no dotted paths, no default standing for one protocol's report), whose code is its package's
    report.py; the report job (metrics.reports.services.build) only runs them."""
    from annotation.judging.protocols.base import JudgingProtocol
    from annotation.judging.protocols.registry import protocols_all

    units = protocols_all()
    assert {u.slug for u in units} >= {"absolute", "esa", "ranking", "comparison"}
    for unit in units:
        package = type(unit).__module__.rpartition(".")[0]
        report = importlib.import_module(f"{package}.report")
        assert report.__file__ and Path(report.__file__).name == "report.py"
        for name in ("report_compute", "report_tables", "dashboard_answers"):
            method = getattr(type(unit), name)
            assert callable(method) and method is not getattr(JudgingProtocol, name), (unit.slug, name)
            # the method is written in the unit and hands over to its package's report module
            assert name in vars(type(unit)), (unit.slug, name)
    with pytest.raises(NotImplementedError):
        JudgingProtocol.report_compute(units[0], report=None, settings={})
    with pytest.raises(NotImplementedError):
        JudgingProtocol.report_tables(units[0], {})


#: The template names a unit declares for the shared pages to include.
TEMPLATE_ATTRIBUTES = (
    "instructions_template",
    "report_template",
    "qc_template",
    "training_template",
    "training_items_template",
    "training_feedback_template",
)


def test_every_units_templates_and_static_files_live_in_its_package():
    """Issue 39, item 5: a protocol's templates are its package's ``templates/judging/<name>/``
    and its scripts and styles its ``static/judging/<name>/``; settings find both folders for
    every protocol package, and the project's shared folders hold nothing of it."""
    from django.conf import settings
    from django.template.loader import get_template

    from annotation.judging.protocols.base import JudgingProtocol
    from annotation.judging.protocols.registry import protocols_all

    checked = set()
    for unit in protocols_all():
        module = type(unit).__module__
        if not module.startswith("annotation.judging.protocols."):
            continue  # a test's probe unit
        name = module.split(".")[3]
        folder = ROOT / "annotation" / "judging" / "protocols" / name
        own = [
            getattr(unit, a)
            for a in TEMPLATE_ATTRIBUTES
            if getattr(unit, a) and getattr(unit, a) != getattr(JudgingProtocol, a)
        ]
        assert own, name
        for template in own:
            assert template.startswith(f"judging/{name}/"), (name, template)
            origin = Path(get_template(template).origin.name)
            assert origin.is_relative_to(folder / "templates"), (name, template, origin)
        pages = sorted((folder / "templates").rglob("*.html"))
        assets = sorted(p for p in (folder / "static").rglob("*") if p.is_file())
        assert pages and assets, name
        for path in pages:
            assert path.relative_to(folder / "templates").parts[:2] == ("judging", name), path
        for path in assets:
            assert path.relative_to(folder / "static").parts[:2] == ("judging", name), path
        assert folder / "templates" in settings.TEMPLATES[0]["DIRS"], name
        assert folder / "static" in settings.STATICFILES_DIRS, name
        assert not (ROOT / "templates" / "judging" / name).exists(), name
        assert not (ROOT / "static" / "judging" / name).exists(), name
        checked.add(name)
    assert checked >= {"absolute", "esa", "ranking", "side_by_side"}


def test_every_unit_with_a_page_of_its_own_finds_its_items_for_the_shared_flow():
    """Issue 39, item 3: the judge-page flow (annotation.judging.web.JudgePages) and the next-item
    API (annotation.judging.apis.protocol.judge_api_views) are written once; a protocol with a
    judge page of its own answers how its items are found (next, previous, by token, a check
    drawn among them) and its views call the flow instead of writing it again."""
    import inspect

    from annotation.judging.protocols.base import JudgingProtocol
    from annotation.judging.protocols.registry import protocols_all

    own = [u for u in protocols_all() if u.judge_page != "judging:rate"]
    assert {u.slug for u in own} >= {"comparison", "esa", "ranking"}
    for unit in own:
        for name in ("entry_next", "entry_previous", "entry_for_token", "entry_attention", "answer_submit"):
            assert getattr(type(unit), name) is not getattr(JudgingProtocol, name), (unit.slug, name)
        assert unit.attention_page == unit.judge_page, unit.slug  # its checks are drawn among its items
        package = type(unit).__module__.rpartition(".")[0]
        views = importlib.import_module(f"{package}.views")
        assert views.PAGES.unit is unit, unit.slug
        source = inspect.getsource(views)
        # the flow's steps are the shared ones, not this module's
        for step in ("judge_gate(", "assignment_or_page(", "progress_among_checks(", "end_code_context("):
            assert step not in source, (unit.slug, step)
        # its judge endpoints (next, one entry, submit) are the shared ones, declared for this unit
        served = [
            p.callback.view_class.judge_api
            for p in importlib.import_module(f"{package}.urls").api_urls
            if hasattr(getattr(p.callback, "view_class", None), "judge_api")
        ]
        assert len(served) == 3 and all(spec.unit is unit for spec in served), unit.slug
        apis = inspect.getsource(importlib.import_module(f"{package}.apis"))
        assert "judge_gate(" not in apis and "APIView):" not in apis.split("# --- the researcher")[0], unit.slug


def test_no_module_outside_a_protocols_package_names_its_tables():
    """Issue 39: shared code asks the registry (``item_model``, ``judgment_model``,
    ``items_of_study``, ``judgments_of_study``) and never names a protocol's table; only the
    protocol's own package (and the migrations, which record history) may."""
    from annotation.judging.protocols.registry import protocols_all

    names: dict[str, str] = {}
    for unit in protocols_all():
        module = type(unit).__module__
        if not module.startswith("annotation.judging.protocols."):
            continue  # a test's probe unit
        package = module.split(".")[3]
        for model in (unit.item_model, unit.judgment_model):
            names[model.__name__] = package
    assert {"AssignmentItem", "Judgment", "EsaItem", "RankingJudgment", "ComparisonItem"} <= set(names)
    found = []
    for top in SCANNED:
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix not in (".py", ".html") or not path.is_file() or "migrations" in path.parts:
                continue
            rel = path.relative_to(ROOT).as_posix()
            text = path.read_text(encoding="utf-8")
            for name, package in names.items():
                if rel.startswith(f"annotation/judging/protocols/{package}/"):
                    continue
                if re.search(rf"\b{name}\b", text):
                    found.append(f"{rel}: {name}")
    assert found == []

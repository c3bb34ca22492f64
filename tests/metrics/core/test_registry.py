"""The metric registry: registration, lookup, creation, built-in imports."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from metrics.core import registry
from metrics.core.base.metric import MeanMetric
from metrics.core.base.params import MetricError, Param
from metrics.core.registry import (
    UnknownMetric,
    available_metrics,
    create_metric,
    get_metric,
    register,
    unregister,
)


@pytest.fixture
def toy():
    @register
    class Toy(MeanMetric):
        slug = "zz-toy"
        description = "Number of words in the candidate times a factor."
        params = {"factor": Param("factor", int, 1, "multiplier")}

        def _sentence_values(self, originals, candidates, references):
            return np.array([len(c.split()) * self.param_values["factor"] for c in candidates], dtype=float)

    yield Toy
    unregister("zz-toy")


def test_a_registered_metric_is_found_created_and_scored(toy):
    assert get_metric("zz-toy") is toy
    m = create_metric("zz-toy", {"factor": "3"})
    res = m.score(["a b", "c"], ["x y z", "w"])
    assert res.scores == (9.0, 3.0)
    assert res.corpus == 6.0
    assert toy in available_metrics()


def test_available_metrics_are_sorted_by_slug(toy):
    slugs = [cls.slug for cls in available_metrics()]
    assert slugs == sorted(slugs)


def test_unknown_slug_lists_the_known_ones(toy):
    with pytest.raises(UnknownMetric) as exc:
        get_metric("blue")
    assert isinstance(exc.value, KeyError)
    assert "unknown metric 'blue'" in str(exc.value)
    assert "zz-toy" in str(exc.value)


def test_create_metric_rejects_unknown_params(toy):
    with pytest.raises(MetricError, match="unknown parameter 'facto'.*allowed: factor"):
        create_metric("zz-toy", {"facto": "2"})


def test_a_slug_cannot_be_taken_twice(toy):
    class Other(MeanMetric):
        slug = "zz-toy"
        description = "clash"

        def _sentence_values(self, originals, candidates, references):
            return np.zeros(len(candidates))

    with pytest.raises(ValueError, match="already registered"):
        register(Other)


def test_a_class_without_description_is_refused():
    class Nameless(MeanMetric):
        slug = "zz-nameless"

        def _sentence_values(self, originals, candidates, references):
            return np.zeros(len(candidates))

    with pytest.raises(TypeError):
        register(Nameless)


def test_builtin_import_skips_only_missing_modules(monkeypatch, tmp_path):
    # A module that exists but fails on a missing dependency must not be swallowed.
    pkg = tmp_path / "zzpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "broken.py").write_text("import zz_no_such_dependency\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "BUILTIN_MODULES", ("zzpkg.absent", "zzpkg.broken"))
    with pytest.raises(ModuleNotFoundError) as exc:
        registry.import_builtins()
    assert exc.value.name == "zz_no_such_dependency"
    sys.modules.pop("zzpkg", None)
    sys.modules.pop("zzpkg.broken", None)


@pytest.mark.parametrize("first", ["metrics.core.sacre", "metrics.core.ibleu", "metrics.core.paraphrase_bleu"])
def test_importing_a_builtin_module_first_still_registers_everything(first):
    import subprocess
    from pathlib import Path

    code = (
        f"import {first}\n"
        "from metrics.core.registry import available_metrics\n"
        "print(' '.join(c.slug for c in available_metrics()))\n"
    )
    root = Path(__file__).resolve().parents[3]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    slugs = set(out.stdout.split())
    assert {"bleu", "chrf", "ter", "ibleu", "pinc", "target-f1", "weem4pg", "paraphrase-bleu"} <= slugs

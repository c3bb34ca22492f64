"""``jsonable`` (metrics/core/stats/results.py), the one conversion of results to JSON: what it
gives is what a JSONField stores and a browser's JSON.parse reads."""

import ast
import json
import math
from pathlib import Path

import numpy as np

from metrics.core.stats.results import jsonable

ROOT = Path(__file__).resolve().parents[4]


def test_numpy_values_become_python_and_what_json_cannot_hold_becomes_null():
    value = {
        "n": np.int64(3),
        "x": np.float32(0.5),
        "ok": np.bool_(True),
        "nan": float("nan"),
        "inf": np.float64(math.inf),
        "nested": [np.arange(2), (np.float64(-math.inf), 1.5)],
        7: "key made text",
    }
    out = jsonable(value)
    assert out == {
        "n": 3,
        "x": 0.5,
        "ok": True,
        "nan": None,
        "inf": None,
        "nested": [[0, 1], [None, 1.5]],
        "7": "key made text",
    }
    assert type(out["ok"]) is bool and type(out["n"]) is int
    # Strict JSON (no NaN or Infinity), as PostgreSQL's jsonb and JSON.parse demand.
    assert json.loads(json.dumps(out, allow_nan=False)) == out


def test_the_project_has_one_jsonable():
    """Two functions of this name once handled NaN oppositely (one kept it, which strict JSON refuses)."""
    found = []
    for path in [*ROOT.glob("annotation/**/*.py"), *ROOT.glob("metrics/**/*.py"), *ROOT.glob("config/**/*.py")]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [
            f"{path.relative_to(ROOT)}:{n.lineno}"
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.name == "jsonable"
        ]
    assert len(found) == 1 and found[0].startswith("metrics/core/stats/results.py:"), found

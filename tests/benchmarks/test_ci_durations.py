"""benchmarks/ci_durations.py: a junit file's test times summed by module and folder."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("ci_durations", ROOT / "benchmarks" / "ci_durations.py")
assert spec and spec.loader
ci_durations = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ci_durations)

JUNIT = """<?xml version="1.0"?><testsuites><testsuite name="pytest">
<testcase classname="tests.e2e.test_a" name="t1" time="10.5"/>
<testcase classname="tests.e2e.test_a.TestGroup" name="t2" time="1.5"/>
<testcase classname="tests.metrics.core.test_b" name="t3" time="3"/>
<testcase classname="tests.test_c" name="t4" time="0"/>
</testsuite></testsuites>"""


def test_times_add_up_by_module_class_and_folder(tmp_path, capsys):
    path = tmp_path / "run.xml"
    path.write_text(JUNIT)
    seconds, count, total = ci_durations.totals(path)
    assert seconds == {"tests/e2e/test_a": 12.0, "tests/metrics/core/test_b": 3.0, "tests/test_c": 0.0}
    assert count["tests/e2e/test_a"] == 2 and total == 15.0
    assert ci_durations.folders(seconds) == {"tests/e2e": 12.0, "tests/metrics": 3.0, "tests/test_c": 0.0}
    assert ci_durations.folders(count) == {"tests/e2e": 2, "tests/metrics": 1, "tests/test_c": 1}
    assert ci_durations.main([str(path), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 tests, 15.0 test-seconds")
    assert "| tests/e2e | 12.0 | 80.0 % | 2 |" in out
    assert "| tests/e2e/test_a | 12.0 | 80.0 % | 2 |" in out
    assert "tests/metrics/core/test_b | 3.0 | 20.0 % | 1" not in out  # --top 1 lists one module

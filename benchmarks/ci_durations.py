"""Where a test run's time goes: sum a pytest ``--junitxml`` file's test times by module and by
top-level folder, the slowest first (issue 39, item 8: CI under 25 minutes).

pytest's own ``--durations`` lists single tests; CI's time is decided by which modules and
folders add up, which this prints as a Markdown table::

    .venv/bin/python -m pytest -n 2 --dist worksteal -q --junitxml=var/run.xml
    .venv/bin/python benchmarks/ci_durations.py var/run.xml --top 40

A test's time in the file is its setup, call and teardown together (pytest's default).
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import Counter, defaultdict
from collections.abc import Mapping
from pathlib import Path


def module_of(classname: str) -> str:
    """``tests.e2e.test_x.TestY`` or ``tests.e2e.test_x`` -> ``tests/e2e/test_x``."""
    parts = classname.split(".")
    while parts and parts[-1][:1].isupper():
        parts.pop()
    return "/".join(parts)


def totals(xml_path: Path) -> tuple[dict[str, float], Counter[str], float]:
    """Seconds and test counts per module, and the file's total seconds."""
    seconds: dict[str, float] = defaultdict(float)
    count: Counter[str] = Counter()
    for case in ET.parse(xml_path).iter("testcase"):
        module = module_of(case.get("classname", ""))
        seconds[module] += float(case.get("time") or 0.0)
        count[module] += 1
    return dict(seconds), count, sum(seconds.values())


def folders(per_module: Mapping[str, float], depth: int = 2) -> dict[str, float]:
    """Module figures (seconds or test counts) summed by their first ``depth`` path parts."""
    out: dict[str, float] = defaultdict(float)
    for module, value in per_module.items():
        out["/".join(module.split("/")[:depth])] += value
    return dict(out)


def slowest(seconds: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(seconds.items(), key=lambda kv: -kv[1])


def table(rows: list[tuple[str, float, float]], total: float) -> str:
    lines = ["| where | seconds | share | tests |", "|---|---:|---:|---:|"]
    for name, s, n in rows:
        share = f"{100 * s / total:.1f} %" if total else "n/a"
        lines.append(f"| {name} | {s:,.1f} | {share} | {n:.0f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junitxml", type=Path)
    parser.add_argument("--top", type=int, default=30, help="modules to list (default 30)")
    args = parser.parse_args(argv)
    seconds, count, total = totals(args.junitxml)
    n = sum(count.values())
    print(f"{n} tests, {total:,.1f} test-seconds\n")
    tests_in = folders(count)
    print(table([(f, s, tests_in[f]) for f, s in slowest(folders(seconds))], total))
    print()
    print(table([(m, s, count[m]) for m, s in slowest(seconds)[: args.top]], total))
    return 0


if __name__ == "__main__":
    sys.exit(main())

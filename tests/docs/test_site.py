"""The documentation site builds strictly (every page in the nav, no broken link or anchor),
the README's links resolve, and the tour screenshots the docs show exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_docs_site_builds_with_strict_and_the_app_serves_it_in_chromium(tmp_path, page, settings, live_server):
    """Built strictly, then read through the app at /docs/ (config/docs.py) in Chromium: the
    theme's own inline scripts run by their hashes, nothing breaks the page's policy, and
    nothing is fetched from elsewhere (no web fonts)."""
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-3000:]
    assert (tmp_path / "site" / "metrics" / "index.html").exists()
    settings.PARAEVAL_DOCS_SITE = str(tmp_path / "site")
    elsewhere = []
    page.on("request", lambda r: elsewhere.append(r.url) if not r.url.startswith(live_server.url) else None)
    page.goto("/docs/field-studies/")
    assert "Field studies" in page.locator("h1").first.inner_text()
    page.wait_for_load_state("networkidle")
    assert [u for u in elsewhere if not u.startswith(("data:", "blob:"))] == []
    # (the page fixture fails the test on a JavaScript error or a Content-Security-Policy one)


def test_every_relative_link_in_the_readme_points_to_a_file():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(((?!https?:)[^)#\s]+)", readme)
    assert targets, "the README links to the docs"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert missing == []


def test_the_readme_is_a_short_front_page():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 100


def test_the_tour_screenshots_the_docs_show_exist():
    for page in (ROOT / "docs").glob("*.md"):
        for target in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.name}: {target}"


def test_every_metric_and_statistic_is_defined_in_the_docs():
    from metrics.core.registry import available_metrics

    text = (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    for cls in available_metrics():
        assert f"`{cls.slug}`" in text, cls.slug
    for name in ("Krippendorff", "Fleiss", "Cohen", "Williams test", "AlignPrec", "LB-Precision", "AER",
                 "Mann–Whitney", "Human reference", "pairwise accuracy"):
        assert name in text, name

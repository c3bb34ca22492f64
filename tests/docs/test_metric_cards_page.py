"""docs/metrics-cards.md is generated from the metric cards (`make docs-cards`) and kept up to date."""

from io import StringIO
from pathlib import Path

from django.core.management import call_command

from metrics.core.registry import available_metrics

ROOT = Path(__file__).resolve().parent.parent.parent


def test_the_checked_in_cards_page_matches_the_cards():
    out = StringIO()
    call_command("metrics", "--markdown", stdout=out)
    page = (ROOT / "docs" / "metrics-cards.md").read_text(encoding="utf-8")
    assert page == out.getvalue(), "docs/metrics-cards.md is stale: run `make docs-cards`"


def test_manage_py_metrics_prints_each_card():
    out = StringIO()
    call_command("metrics", stdout=out)
    text = out.getvalue()
    for cls in available_metrics():
        assert f"    Measures: {cls.card.measures}" in text
        assert f"    Range: {cls.card.range}" in text
    assert "    Prepare first: Train a model first" in text  # pem


def test_manage_py_metrics_json_carries_the_card():
    import json

    out = StringIO()
    call_command("metrics", "--json", stdout=out)
    entries = {e["slug"]: e for e in json.loads(out.getvalue())}
    assert entries["weem4pg"]["card"]["direction"] == "higher"
    assert entries["pinc"]["card"]["direction"] == "none"

"""Issue 12, item 2: the report's findings travel with every copy of its numbers —
the page (at the top), the standalone HTML, the JSON export, LaTeX comments, the ZIP's
README and the ``report`` command's output."""

from __future__ import annotations

import io
import json
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command

from metrics.reports.exports.bundle import report_zip
from metrics.reports.exports.csv_json import report_json_text
from metrics.reports.exports.latex import report_latex
from metrics.reports.exports.standalone_html import report_html
from metrics.reports.services.build import report_build
from metrics.reports.services.queueing import report_create
from metrics.reports.services.report_settings import report_settings_clean

pytestmark = pytest.mark.django_db


def _findings(report):
    found = report.result["warnings"]
    # The shared study has 36 genuine items per judge and 3 systems: with min_shared = 30
    # the ICC is fine, but the study is small enough that some finding exists.
    assert found, "the shared study should produce at least one finding"
    return found


def test_warnings_follow_the_contract(built_report):
    for w in built_report.result["warnings"]:
        assert set(w) == {"code", "severity", "message", "subject"}
        assert w["severity"] in ("warning", "info") and isinstance(w["message"], str) and w["message"]
        assert w["subject"] is None or isinstance(w["subject"], str)


def test_every_export_and_the_page_carry_the_findings(client, owner, built_report):
    rebuilt = report_build(
        report_id=report_create(
            study=built_report.study,
            created_by=owner,
            settings={**built_report.settings, "min_shared": 100},
            enqueue=False,
        ).pk
    )
    found = _findings(rebuilt)
    codes = {w["code"] for w in found}
    assert {"judge_little_data", "icc_refused"} <= codes
    first = found[0]["message"]

    client.force_login(owner)
    page = client.get(f"/studies/{rebuilt.study_id}/reports/{rebuilt.pk}/").content.decode()
    assert 'id="report-warnings"' in page and page.index('id="report-warnings"') < page.index('id="t1-h"')
    assert f'data-code="{found[0]["code"]}"' in page

    html = report_html(rebuilt)
    assert 'id="report-warnings"' in html and html.index("report-warnings") < html.index('id="about"')
    assert json.loads(report_json_text(rebuilt))["result"]["warnings"] == found
    tex = report_latex(rebuilt)
    head = tex.split("\n\n")[0]  # the comment block before the first table
    assert all(line.startswith("%") for line in head.splitlines())
    assert f"[{found[0]['code']}]" in head and " ".join(first.split())[:60] in head
    with zipfile.ZipFile(io.BytesIO(report_zip(rebuilt))) as zf:
        readme = next(zf.read(n).decode() for n in zf.namelist() if n.endswith("README.txt"))
    assert f"Findings ({len(found)}):" in readme and f"[{found[-1]['code']}]" in readme


def test_the_report_command_prints_the_findings(tmp_path, judged_study):
    out = StringIO()
    call_command(
        "report", judged_study.name, "--out", str(tmp_path), "--n-boot", "50", "--min-shared", "100", stdout=out
    )
    text = out.getvalue()
    assert "Findings (" in text and "WARNING [icc_refused]" in text
    assert "Fisher-z mean weighted by n-3" in text


@pytest.mark.parametrize("bad", [3, "x", -1, 10**9])
def test_a_bad_min_shared_is_refused_with_the_reason(bad):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as info:
        report_settings_clean({"min_shared": bad})
    assert "min_shared" in info.value.message_dict

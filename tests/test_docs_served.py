"""The documentation at /docs/ (config/docs.py): the Field study page's link to it works on a
plain `make run` (issue 42: it pointed at a docs server on port 8001 that nothing started)."""

from __future__ import annotations

import re

import pytest
from django.test import Client, override_settings

from tests.factories import study_with_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_site(tmp_path):
    with override_settings(PARAEVAL_DOCS_SITE=str(tmp_path / "site")):
        yield tmp_path


def test_the_field_study_pages_link_to_the_docs_leads_to_the_page(researcher, no_site):
    study = study_with_data(owner=researcher)
    client = Client()
    client.force_login(researcher)
    html = client.get(f"/studies/{study.pk}/field/").content.decode()
    href = re.search(r'href="([^"]+)" id="field-docs"', html).group(1)
    assert href == "/docs/field-studies/"
    r = Client().get(href)  # the docs need no account
    assert r.status_code == 200
    text = r.content.decode()
    assert "docs/field-studies.md" in text and "make docs-build" in text
    assert "# Field studies" in text.split("<pre", 1)[1]  # the page's own Markdown, escaped into <pre>


def test_without_a_built_site_only_pages_of_docs_are_shown(no_site):
    client = Client()
    assert client.get("/docs/").status_code == 200  # docs/index.md
    for bad in ("/docs/no-such-page/", "/docs/../config/settings/", "/docs/%2e%2e/README/", "/docs/Field-Studies/"):
        assert client.get(bad).status_code in (400, 404), bad


def test_a_built_site_is_served_as_it_is_and_nothing_outside_it(no_site):
    site = no_site / "site"
    (site / "field-studies").mkdir(parents=True)
    (site / "index.html").write_text("<p>home of the site</p>")
    (site / "field-studies" / "index.html").write_text("<p>built field studies</p>")
    (no_site / "secret.txt").write_text("outside")
    client = Client()
    assert b"home of the site" in b"".join(client.get("/docs/").streaming_content)
    assert b"built field studies" in b"".join(client.get("/docs/field-studies/").streaming_content)
    for bad in ("/docs/../secret.txt", "/docs/%2e%2e/secret.txt", "/docs/nothing/"):
        r = client.get(bad)
        assert r.status_code in (400, 404) and b"outside" not in r.getvalue(), bad


def test_a_built_pages_own_inline_scripts_run_by_their_hash_and_no_other(no_site):
    import base64
    import hashlib

    site = no_site / "site"
    site.mkdir()
    script = "window.__md = 1;"
    (site / "index.html").write_text(
        f'<script>{script}</script><script id="c" type="application/json">{{}}</script><script src="a.js"></script>'
    )
    policy = Client().get("/docs/")["Content-Security-Policy"]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    (script_src,) = [d for d in policy.split("; ") if d.startswith("script-src")]
    assert script_src == f"script-src 'self' 'sha256-{digest}'"
    assert "'unsafe-inline'" not in script_src and "frame-ancestors 'none'" in policy

"""Security basics every page shares: headers, CSRF, login lockout."""

from django.test import Client


def test_pages_send_a_strict_content_security_policy_and_deny_framing(client, db):
    r = client.get("/accounts/login/")
    csp = r["Content-Security-Policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert r["X-Frame-Options"] == "DENY"
    assert r["X-Content-Type-Options"] == "nosniff"


def test_no_page_template_contains_inline_script(db):
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "templates"
    offenders = []
    for path in root.rglob("*.html"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", text):
            offenders.append(f"{path.name}: {m.group(0)}")
        if re.search(r"\son[a-z]+=\"", text) or re.search(r"\sstyle=\"", text):
            offenders.append(f"{path.name}: inline handler or style attribute")
    assert offenders == []


def test_csrf_is_enforced_on_forms(researcher):
    c = Client(enforce_csrf_checks=True)
    c.force_login(researcher)
    r = c.post("/studies/new/", {"name": "x"})
    assert r.status_code == 403


def test_login_is_locked_after_repeated_failures_and_unlocked_when_axes_resets(client, researcher, settings):
    # Was a per-(address, username) cache counter in the login view; django-axes now
    # counts failures for every way in (tests/hardening/test_login_throttling.py).
    from axes.utils import reset

    settings.AXES_FAILURE_LIMIT = 3
    for _ in range(2):
        assert client.post("/accounts/login/", {"username": "rita", "password": "wrong"}).status_code == 200
    assert client.post("/accounts/login/", {"username": "rita", "password": "wrong"}).status_code == 429
    r = client.post("/accounts/login/", {"username": "rita", "password": "pw"})
    assert r.status_code == 429 and b"Too many failed attempts" in r.content
    reset(username="rita")  # what `manage.py axes_reset_username rita` does
    assert client.post("/accounts/login/", {"username": "rita", "password": "pw"}).status_code == 302


def test_signed_in_pages_and_api_answers_are_never_cached(client, researcher, api_client):
    client.force_login(researcher)
    assert "no-store" in client.get("/studies/")["Cache-Control"]
    api_client.force_authenticate(researcher)
    assert "no-store" in api_client.get("/api/studies/")["Cache-Control"]

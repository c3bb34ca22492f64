"""This documentation, served by the app itself at ``/docs/`` (settings.PARAEVAL_DOCS_URL's
default), so that the pages' links to it work on any installation, ``make run`` included.

Where the site is built (``make docs-build`` writes ``site/``) its pages are served as they
are; else each page's Markdown source is shown as text, with a word on how to get the
formatted site. Only names of ``docs/*.md`` and paths inside ``site/`` are served (Django's
``static.serve`` refuses anything outside its folder)."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

from django.conf import settings
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.views.static import serve

from .middleware import DEFAULT_CSP

#: A script MkDocs Material writes into its pages (neither a file nor JSON data).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>(.*?)</script>", re.DOTALL)

#: A page's name as MkDocs writes it in a link: ``field-studies/`` for docs/field-studies.md.
PAGE = re.compile(r"^(?:(?P<name>[a-z0-9][a-z0-9-]*)/?)?$")


def docs_page(request: HttpRequest, path: str = "") -> HttpResponseBase:
    site = Path(settings.PARAEVAL_DOCS_SITE)
    if (site / "index.html").is_file():
        target = path if path and not path.endswith("/") else f"{path}index.html"
        response = serve(request, target, document_root=str(site))
        if target.endswith(".html"):
            response["Content-Security-Policy"] = built_page_policy((site / target).read_text(encoding="utf-8"))
        return response
    match = PAGE.match(path)
    if match is None:
        raise Http404("no such page of the documentation")
    source = Path(settings.BASE_DIR) / "docs" / f"{match['name'] or 'index'}.md"
    if not source.is_file():
        raise Http404("no such page of the documentation")
    return render(request, "docs_source.html", {"name": source.name, "text": source.read_text(encoding="utf-8")})


def built_page_policy(html: str) -> str:
    """The app's policy, with the few inline scripts of this built page allowed by their hash
    (CSP level 2), so that the site's navigation and search work and nothing else inline runs;
    inline styles are allowed on these pages, the project's own, which hold no one's input."""
    hashes = sorted(
        {
            "'sha256-" + base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode() + "'"
            for body in INLINE_SCRIPT.findall(html)
        }
    )
    return DEFAULT_CSP.replace("script-src 'self'", " ".join(["script-src 'self'", *hashes])).replace(
        "style-src 'self'",
        "style-src 'self' 'unsafe-inline'",  # the theme's style attributes (icons, tables)
    )

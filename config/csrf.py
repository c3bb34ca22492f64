"""What a request that fails Django's CSRF check gets.

Django answers 403. On a participant's way in (a join link, a resume link) that 403 hit
the participant themself: two tabs of the consent page, "I agree" pressed in one (which
signs the browser in, and signing in gives the browser a new CSRF secret), then in the
other, whose form still holds the old token. There the browser is sent back to the
same page instead (303 to a GET, which never signs anyone in and changes nothing): it
shows where this browser stands now, usually "continue" to the participant's work. A
forged cross-site POST ends the same way, on a page that did nothing. Every other page
keeps Django's 403.
"""

from __future__ import annotations

import re

from django.http import HttpResponseRedirect
from django.views.csrf import csrf_failure as django_csrf_failure

#: The participant's entry pages, whose only POSTs start or resume a participation.
_ENTRY_PAGES = re.compile(r"^/(join|participate/resume)/[^/]+/$")


def csrf_failure(request, reason: str = ""):
    if request.method == "POST" and _ENTRY_PAGES.match(request.path_info):
        response = HttpResponseRedirect(request.path)
        response.status_code = 303  # See Other: the browser follows with a GET
        return response
    return django_csrf_failure(request, reason)

"""What the people commands share: reading names and printing new accounts' secrets once."""

from __future__ import annotations

import sys
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError
from django.urls import reverse

from annotation.services.people import NewPerson, PeopleError, people_lines


def read_names(names: list[str], path: str | None) -> list[tuple[int, str]]:
    """Names from the command line, or from a file (``-`` is standard input), numbered for messages."""
    if path:
        try:
            text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot read: {exc}") from None
        return people_lines(text)
    return [(n, name.strip()) for n, name in enumerate(names, 1) if name.strip()]


def signin_url(token: str, base_url: str | None) -> str:
    base = (base_url or settings.PARAEVAL_BASE_URL).rstrip("/")
    return base + reverse("annotation:signin_link", kwargs={"token": token})


def refuse(exc: PeopleError) -> CommandError:
    return CommandError("nothing was written:\n" + "\n".join(f"  {i}" for i in exc.issues))


def write_people(stdout, made: list[NewPerson], base_url: str | None) -> None:
    """One tab-separated line per new account: username, email, password or sign-in link."""
    stdout.write("username\temail\tpassword or sign-in link (shown once)")
    for p in made:
        if p.password:
            secret = p.password
        else:
            assert p.signin_token is not None  # without a password, the sign-in link is the secret
            secret = signin_url(p.signin_token, base_url)
        stdout.write(f"{p.username}\t{p.email}\t{secret}")

"""The study a command names: by its name or its id, the same way in every command."""

from __future__ import annotations

from django.core.management.base import CommandError

from annotation.models import Study


def study_from_ref(ref: str) -> Study:
    """The study named ``ref``, else the one numbered ``ref``; a :class:`CommandError` that
    lists some studies otherwise (a mistyped name is the usual cause)."""
    study = Study.objects.filter(name=ref).first()
    if study is None and ref.isdigit():
        study = Study.objects.filter(pk=int(ref)).first()
    if study is None:
        names = list(Study.objects.order_by("pk").values_list("pk", "name")[:10])
        known = "; ".join(f"{pk}: {name}" for pk, name in names) or "there is none yet"
        raise CommandError(f"no study named '{ref}' (give a study's name or id; studies: {known})")
    return study

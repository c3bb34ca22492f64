"""What the alignment pages share: downloads, links as the grid reads them, the grid's data, import errors."""

from __future__ import annotations

from django.http import HttpResponse

from annotation.importing.reading import StudyImportError

from ..models import AlignmentPair


def download(text: str, filename: str, content_type: str) -> HttpResponse:
    response = HttpResponse(text, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def links_dict(alignment) -> dict | None:
    if alignment is None:
        return None
    return {
        "sure": sorted([i, j] for i, j in alignment.sure),
        "possible": sorted([i, j] for i, j in alignment.possible),
    }


def grid_payload(
    *,
    pair: AlignmentPair,
    label: str,
    links: dict,
    automatic,
    readonly: bool,
    revision: int = 0,
    active_seconds: float = 0.0,
    urls: dict | None = None,
    csrf_token: str = "",
) -> dict:
    """What grid.js reads. ``label`` names the pair: the researcher's id on researcher
    pages, the annotator's own pair number on theirs."""
    return {
        "pair": label,
        "tokens1": pair.tokens1,
        "tokens2": pair.tokens2,
        "sure": links["sure"],
        "possible": links["possible"],
        "automatic": links_dict(automatic),
        "readonly": readonly,
        "revision": revision,
        "active_seconds": active_seconds,
        "urls": urls or {},
        "csrf_token": csrf_token,
    }


def import_issues(exc: StudyImportError) -> list[str]:
    return [i.render(exc.filename) for i in exc.issues]

"""The researcher's pair pages and downloads: alignment and pair exports, the pair list, one pair's read-only grid."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotation.web import researcher_study_required, study_context

from .. import exports, selectors
from ..models import AlignmentPair
from ._shared import download, grid_payload, links_dict


@researcher_study_required
@require_GET
def export_alignments(request, study):
    try:
        text, filename, ctype = exports.alignment_export(
            study=study, source=request.GET.get("source", "gold"), fmt=request.GET.get("format", "pharaoh")
        )
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return download(text, filename, ctype)


@researcher_study_required
@require_GET
def export_pairs(request, study, fmt: str):
    try:
        text, filename, ctype = exports.pairs_export(study=study, fmt=fmt)
    except exports.ExportError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    return download(text, filename, ctype)


@researcher_study_required
@require_GET
def pair_list(request, study):
    """Every pair with how many annotators submitted it, paginated."""
    from django.db.models import Count, Q

    from ..enums import AssignmentStatus

    qs = selectors.pairs_for_study(study=study).annotate(
        n_assigned=Count("assignments"),
        n_submitted=Count("assignments", filter=Q(assignments__status=AssignmentStatus.SUBMITTED)),
    )
    page = Paginator(qs, 50).get_page(request.GET.get("page"))
    return render(request, "alignment/pairs.html", study_context(study, page=page))


@researcher_study_required
@require_GET
def pair_view(request, study, pair_id: int):
    """A read-only grid of one pair showing any source: gold, a system, an annotator."""
    pair = get_object_or_404(AlignmentPair, pk=pair_id, study=study)
    sources = exports.alignment_sources(study=study)
    source = request.GET.get("source") or "gold"
    try:
        found, _name = exports.source_alignments(study, source)
    except exports.ExportError:
        found, source = {}, "gold"
    alignment = found.get(pair.pk)
    links = links_dict(alignment) or {"sure": [], "possible": []}
    previous = AlignmentPair.objects.filter(study=study, position__lt=pair.position).order_by("-position").first()
    following = AlignmentPair.objects.filter(study=study, position__gt=pair.position).order_by("position").first()
    return render(
        request,
        "alignment/pair.html",
        study_context(
            study,
            pair=pair,
            sources=sources,
            source=source,
            has_alignment=alignment is not None,
            grid_data=grid_payload(pair=pair, label=pair.external_id, links=links, automatic=None, readonly=True),
            previous=previous,
            following=following,
        ),
    )

"""Proposed spans imported from a file, for an ESA design that pre-fills from one
(``esa_prefill == "imported"``): the import (:func:`esa_proposals_import`, behind
``manage.py import_esa_proposals``, the design page's upload and the API) and the lookup
opening uses (:func:`imported_proposals`). Opening copies them onto each judge's
:class:`~annotation.judging.models.EsaItem` exactly as the aligner's proposals, so what was
proposed and what was kept are both stored and the report's proposal precision counts them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from annotation.models import Candidate, Study

from ...models import EsaProposal, JudgingDesign
from .services import categories_allowed, span_dict


@dataclass(frozen=True)
class EsaProposalSummary:
    candidates: int  # candidates with a line in the file
    spans: int
    replaced: int  # candidates whose earlier proposals the file replaced (a new file replaces them all)


def esa_proposals_import(*, study: Study, data: bytes, filename: str) -> EsaProposalSummary:
    """Store the proposals of ``data`` (:func:`annotation.importing.esa_proposals.parse_esa_proposals_file`)
    for ``study``, replacing any imported before; all or nothing.

    Preconditions, each refused as a :class:`~annotation.importing.reading.StudyImportError`
    that stores nothing: the study is judged with ESA, its design pre-fills from an imported
    file and judging is not open yet (opening copies the proposals; a later file would reach
    only late judges). Every line must name a candidate of the study; offsets are checked
    against its texts and categories against what a judge may keep
    (:func:`~.services.categories_allowed`).
    """
    from annotation.importing.esa_proposals import parse_esa_proposals_file
    from annotation.importing.reading import ImportIssue, StudyImportError

    from ...enums import EsaPrefill
    from .unit import ESA  # here: the unit module imports the services

    design = JudgingDesign.objects.filter(study=study).first()
    if design is None or not ESA.is_protocol_of(study):
        raise StudyImportError(
            filename,
            [ImportIssue("this study is not judged with error span annotation; set its protocol to ESA first")],
        )
    if design.esa_prefill != EsaPrefill.IMPORTED:
        raise StudyImportError(
            filename,
            [
                ImportIssue(
                    "this study's design does not pre-fill from an imported file; set its pre-fill to 'imported' first"
                )
            ],
        )
    if design.is_frozen:
        raise StudyImportError(
            filename,
            [
                ImportIssue(
                    "judging is open: the proposals were copied to the judges' items at opening and cannot change now"
                )
            ],
        )
    rows = Candidate.objects.filter(original__study=study).values_list(
        "id", "original__external_id", "system__name", "original__text", "text"
    )
    pks = {(o, s): pk for pk, o, s, _, _ in rows}
    texts = {(o, s): (ot, ct) for _, o, s, ot, ct in rows}
    parsed = parse_esa_proposals_file(
        data,
        filename=filename,
        texts=texts,
        categories=categories_allowed(design),
        max_bytes=settings.PARAEVAL_IMPORT_MAX_BYTES,
    )
    with transaction.atomic():
        JudgingDesign.objects.select_for_update().filter(pk=design.pk).first()
        if JudgingDesign.objects.filter(pk=design.pk, opened_at__isnull=False).exists():
            raise StudyImportError(filename, [ImportIssue("judging was opened meanwhile; nothing was stored")])
        replaced, _ = EsaProposal.objects.filter(study=study).delete()
        EsaProposal.objects.bulk_create(
            [
                EsaProposal(
                    study=study, candidate_id=pks[(r.original_id, r.system)], spans=[span_dict(s) for s in r.spans]
                )
                for r in parsed.rows
            ]
        )
    return EsaProposalSummary(
        candidates=len(parsed.rows), spans=sum(len(r.spans) for r in parsed.rows), replaced=replaced
    )


def imported_proposals(*, candidate_ids: Iterable[int]) -> dict[int, list[dict]]:
    """Candidate pk → its imported proposals (span dicts), for the candidates that have some."""
    return dict(EsaProposal.objects.filter(candidate_id__in=list(candidate_ids)).values_list("candidate_id", "spans"))

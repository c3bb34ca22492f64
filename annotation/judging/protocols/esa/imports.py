"""Importing into an ESA study, all or nothing: span files of judgments made elsewhere
(:func:`esa_judgments_import`: paraeval's JSON Lines, Appraise's or Pearmut's spans, behind
the unit's :meth:`~.unit.EsaProtocol.judgments_import`, which ``manage.py import_judgments``
and ``import_esa_spans`` ask) and proposed spans for a design that pre-fills from a file
(:func:`esa_proposals_import`, behind ``manage.py import_esa_proposals``, the design page's
upload and the API). Opening copies imported proposals onto each judge's
:class:`~annotation.judging.protocols.esa.models.EsaItem` exactly as the aligner's proposals
(:func:`~.services.imported_proposals`), so what was proposed and what was kept are both
stored and the report's proposal precision counts them."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.models import Candidate, Study

from ...enums import CONTROL_SYSTEM_PREFIX, EsaPrefill, JudgmentSource
from ...models import Assignment, JudgingDesign
from ...services.judgment_import import JudgmentsImported, judges_for_import, judges_refused_issues
from ...tokens import item_token_new
from ..registry import protocol_for_study
from .models import EsaItem, EsaJudgment, EsaProposal
from .parsers import parse_esa_proposals_file, parse_esa_spans_file
from .services import PROPOSAL_CATEGORIES, categories_allowed, span_dict


@dataclass(frozen=True)
class EsaImportSummary(JudgmentsImported):
    controls_skipped: int = 0  # lines of paraeval's control candidates, which a study builds itself

    def describe(self) -> str:
        """What was written, in one sentence (the import command prints it)."""
        return (
            f"{self.rows:,} annotations ({self.revisions:,} revisions) by {self.judges} judges "
            f"({self.judges_created} new imported participants)"
            + (
                f"; {self.controls_skipped:,} annotations of paraeval's controls skipped."
                if self.controls_skipped
                else "."
            )
        )


def is_esa_study(study: Study) -> bool:
    """Whether ``study``'s items are ESA items: asked of the study's unit (the registry), not of
    :data:`~.unit.ESA`, which imports this module for its :meth:`~.unit.EsaProtocol.judgments_import`."""
    return protocol_for_study(study=study).item_model is EsaItem


def judgment_categories(design: JudgingDesign) -> list[str] | None:
    """The categories a span file's spans may carry: what a judge of the study may give
    (:func:`~.services.categories_allowed`) and the aligner's ``addition``/``omission``
    whatever the study's pre-fill, since an export of a study that pre-filled from the aligner
    carries them; any category (None) when the study has no list (severity only)."""
    allowed = categories_allowed(design)
    if not allowed:
        return None
    return [*allowed, *(c for c in PROPOSAL_CATEGORIES if c not in allowed)]


def esa_judgments_import(*, study: Study, data: bytes, filename: str) -> EsaImportSummary:
    """Import an ESA span file (:func:`annotation.judging.protocols.esa.parsers.parse_esa_spans_file`:
    paraeval's JSON Lines, Appraise's or Pearmut's spans) into an ESA study, all or nothing.

    Every line must name a candidate of the study (original id and system); its offsets are
    checked against the study's texts and its categories against the design's and the
    aligner's (:func:`judgment_categories`). Lines of paraeval's control candidates
    (``control:…``, as the export writes them) are skipped and counted: a study builds its
    own controls, so an export imports again as it is, into a fresh study or the same one. Judges: a
    judge of the study with that username, else an imported participant
    (:func:`annotation.judging.services.judgment_import.imported_judge_username`). Each row
    becomes a judgment (source ``import``) on the judge's ESA item of that candidate, added
    (done) to an assignment of the judge if need be; a judge's second row for a candidate,
    or a row for an item the judge had already annotated, is a new revision. Raises
    :class:`~annotation.importing.reading.StudyImportError` with every problem's line and column.
    """
    design = JudgingDesign.objects.filter(study=study).first()
    if design is None or not is_esa_study(study):
        raise StudyImportError(
            filename,
            [ImportIssue("this study is not judged with error span annotation; set its protocol to ESA first")],
        )
    rows = Candidate.objects.filter(original__study=study).values_list(
        "id", "original__external_id", "system__name", "original__text", "text"
    )
    pks = {(o, s): pk for pk, o, s, _, _ in rows}
    texts = {(o, s): (ot, ct) for _, o, s, ot, ct in rows}
    parsed = parse_esa_spans_file(data, filename=filename, texts=texts, categories=judgment_categories(design))
    now = timezone.now()
    with transaction.atomic():
        names = list(dict.fromkeys(r.judge for r in parsed.rows))
        judges, created, refused = judges_for_import(study=study, names=names)
        if refused:
            raise StudyImportError(filename, judges_refused_issues(study, refused))
        assignments = {a.judge_id: a for a in Assignment.objects.filter(study=study, judge__in=judges.values())}
        revisions = 0
        for row in parsed.rows:
            user = judges[row.judge]
            assignment = assignments.get(user.pk)
            if assignment is None:
                assignment = assignments[user.pk] = Assignment.objects.create(
                    study=study, judge=user, seed=0, n_items=0, instructions_seen_at=now
                )
            cand = pks[(row.original_id, row.system)]
            item = EsaItem.objects.filter(assignment=assignment, candidate_id=cand).first()
            if item is None:
                assignment.n_items += 1
                Assignment.objects.filter(pk=assignment.pk).update(n_items=assignment.n_items, updated_at=now)
                item = EsaItem.objects.create(
                    assignment=assignment,
                    candidate_id=cand,
                    position=assignment.n_items,
                    token=item_token_new(),
                    is_control=row.system.startswith(CONTROL_SYSTEM_PREFIX),
                    proposed=[span_dict(s) for s in row.proposed],
                    done_at=now,
                )
            elif item.done_at is None:
                EsaItem.objects.filter(pk=item.pk).update(done_at=now, updated_at=now)
            latest = EsaJudgment.objects.filter(item=item, is_latest=True).first()
            if latest is not None:
                EsaJudgment.objects.filter(pk=latest.pk).update(is_latest=False)
                revisions += 1
            EsaJudgment.objects.create(
                study=study,
                item=item,
                judge=user,
                key=f"import-{item_token_new()}"[:64],
                revision=(latest.revision + 1) if latest else 1,
                is_latest=True,
                spans=[span_dict(s, proposed=s in row.proposed) for s in row.spans],
                score=row.score,
                served_at=now,
                submitted_at=now,
                seconds=row.seconds,
                active_seconds=row.seconds,
                source=JudgmentSource.IMPORT,
            )
    return EsaImportSummary(
        rows=len(parsed.rows),
        judgments=len(parsed.rows),
        revisions=revisions,
        judges=len(judges),
        judges_created=created,
        controls_skipped=parsed.controls_skipped,
    )


@dataclass(frozen=True)
class EsaProposalSummary:
    candidates: int  # candidates with a line in the file
    spans: int
    replaced: int  # candidates whose earlier proposals the file replaced (a new file replaces them all)


def esa_proposals_import_upload(*, study: Study, upload) -> EsaProposalSummary:
    """:func:`esa_proposals_import` of an uploaded file (the design page's and the API's), its
    declared size checked against ``PARAEVAL_IMPORT_MAX_BYTES`` before a byte is read: too large
    is refused as a :class:`~annotation.importing.reading.StudyImportError`, like a bad file."""
    limit = settings.PARAEVAL_IMPORT_MAX_BYTES
    if upload.size > limit:
        raise StudyImportError(upload.name, [ImportIssue(f"the file is {upload.size:,} bytes; the limit is {limit:,}")])
    return esa_proposals_import(study=study, data=upload.read(), filename=upload.name)


def esa_proposals_import(*, study: Study, data: bytes, filename: str) -> EsaProposalSummary:
    """Store the proposals of ``data`` (:func:`annotation.judging.protocols.esa.parsers.parse_esa_proposals_file`)
    for ``study``, replacing any imported before; all or nothing.

    Preconditions, each refused as a :class:`~annotation.importing.reading.StudyImportError`
    that stores nothing: the study is judged with ESA, its design pre-fills from an imported
    file and judging is not open yet (opening copies the proposals; a later file would reach
    only late judges). Every line must name a candidate of the study; offsets are checked
    against its texts and categories against what a judge may keep
    (:func:`~.services.categories_allowed`).
    """
    design = JudgingDesign.objects.filter(study=study).first()
    if design is None or not is_esa_study(study):
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

"""Writes: system alignments (stored, imported from an external aligner, deleted) and paraeval's aligner runs."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import DatabaseError, transaction
from django.utils import timezone

from annotation.alignment.models import links_json
from annotation.importing.reading import ImportIssue, StudyImportError, decode_utf8
from annotation.models import Study
from annotation.services.imports import study_import_lock
from config.jobs.enums import JobStatus
from metrics.core.alignment.io import loads
from metrics.core.alignment.model import FORMATS as ALIGNMENT_FORMATS
from metrics.core.alignment.model import Alignment, FormatError

from .. import selectors
from ..enums import AlignmentSystemKind
from ..models import AlignerRun, AlignmentConfig, AlignmentPair, AlignmentSystem, SystemAlignment

# The logger's name from before the split into modules, so that log filters keep matching.
logger = logging.getLogger("annotation.alignment.services")


@transaction.atomic
def system_alignments_store(
    *,
    study: Study,
    name: str,
    alignments: Mapping[int, Alignment],
    kind: str = AlignmentSystemKind.IMPORTED,
    description: str = "",
    parameters: dict | None = None,
    replace: bool = False,
) -> AlignmentSystem:
    """Store a system's alignments (pair id → Alignment over that pair's tokens).

    Creates the system if needed. An existing system's alignments are replaced
    only with ``replace`` (else ``ValidationError``); a system that pre-fills
    grids keeps doing so with its new links. Concurrent stores into one study
    run one after the other (``study_import_lock``), so a second upload of the
    same name is refused with that message rather than a constraint error.
    """
    name = name.strip()
    study_import_lock(study=study)
    system = AlignmentSystem.objects.filter(study=study, name=name).first()
    if system is not None:
        if not replace:
            raise ValidationError(f"the study already has a system '{name}'; choose another name or replace it")
        if system.kind != kind:
            raise ValidationError(f"system '{name}' is of kind '{system.kind}', not '{kind}'")
        system.description = description or system.description
        system.parameters = parameters or system.parameters
        system.full_clean()
        system.save()
        SystemAlignment.objects.filter(system=system).delete()
    else:
        system = AlignmentSystem(
            study=study, name=name, kind=kind, description=description, parameters=parameters or {}
        )
        system.full_clean()
        system.save()
    pairs = {p.pk: p for p in AlignmentPair.objects.filter(study=study, pk__in=list(alignments))}
    rows = []
    for pid, a in alignments.items():
        pair = pairs.get(pid)
        if pair is None:
            raise ValidationError(f"pair {pid} is not a pair of this study")
        if (
            a.tokens1 is not None
            and a.tokens2 is not None
            and (list(a.tokens1), list(a.tokens2)) != (pair.tokens1, pair.tokens2)
        ):
            raise ValidationError(f"the alignment of pair '{pair.external_id}' is over other tokens than the pair's")
        row = SystemAlignment(system=system, pair=pair, sure=links_json(a.sure), possible=links_json(a.possible))
        row.links_fit(pair)
        rows.append(row)
    SystemAlignment.objects.bulk_create(rows, batch_size=1000)
    return system


def system_alignments_import(
    *,
    study: Study,
    name: str,
    data: bytes,
    filename: str,
    fmt: str,
    description: str = "",
    replace: bool = False,
) -> AlignmentSystem:
    """Import an external aligner's output for all of the study's pairs, all or nothing.

    ``fmt`` is one of ``metrics.core.alignment.FORMATS``. Alignment k (line k of
    Pharaoh, sentence k of NAACL, pair k−1 of CSV/JSON) belongs to the study's
    k-th pair in task order (the order of the pairs export); every link must fit
    its pair's grid and JSON tokens must equal the pair's. Errors raise
    :class:`StudyImportError` with the line and column.
    """
    limit = settings.PARAEVAL_IMPORT_MAX_BYTES
    if len(data) > limit:
        raise StudyImportError(
            filename,
            [ImportIssue(f"the file is {len(data):,} bytes; the limit is {limit:,} (PARAEVAL_IMPORT_MAX_BYTES)")],
        )
    if fmt not in ALIGNMENT_FORMATS:
        raise StudyImportError(
            filename, [ImportIssue(f"unknown alignment format '{fmt}'; use one of {', '.join(ALIGNMENT_FORMATS)}")]
        )
    name = (name or "").strip()
    if not name:
        raise StudyImportError(filename, [ImportIssue("give the system a name")])
    pairs = list(selectors.pairs_for_study(study=study))
    if not pairs:
        raise StudyImportError(filename, [ImportIssue("the study has no alignment pairs yet; import the pairs first")])
    text = decode_utf8(data, filename)
    try:
        alignments = loads(text, fmt, pairs=[(p.tokens1, p.tokens2) for p in pairs])
    except FormatError as exc:
        col = None if exc.column is None else str(exc.column)
        raise StudyImportError(filename, [ImportIssue(exc.message, line=exc.line, column=col)]) from None
    except ValueError as exc:
        raise StudyImportError(filename, [ImportIssue(str(exc))]) from None
    if len(alignments) != len(pairs):
        raise StudyImportError(
            filename, [ImportIssue(f"the file holds {len(alignments)} alignments; the study has {len(pairs)} pairs")]
        )
    try:
        return system_alignments_store(
            study=study,
            name=name,
            alignments={p.pk: a for p, a in zip(pairs, alignments)},
            kind=AlignmentSystemKind.IMPORTED,
            description=description or f"imported from {filename}",
            parameters={"file": filename, "format": fmt},
            replace=replace,
        )
    except ValidationError as exc:
        raise StudyImportError(filename, [ImportIssue(m) for m in exc.messages]) from None


@transaction.atomic
def system_delete(*, system: AlignmentSystem) -> None:
    AlignmentConfig.objects.filter(prefill_system=system).update(prefill_system=None)
    system.delete()


def aligner_run_execute(*, run_id: int) -> AlignerRun:
    """Align every pair and store the system (the worker's side); safe to run twice."""
    from metrics.core.aligner import align

    run = AlignerRun.objects.select_related("study").get(pk=run_id)
    if run.is_finished:
        return run
    pairs = list(selectors.pairs_for_study(study=run.study))
    AlignerRun.objects.filter(pk=run.pk).update(
        status=JobStatus.RUNNING,
        phase="aligning",
        started_at=timezone.now(),
        progress_total=len(pairs),
        progress_done=0,
        error="",
        updated_at=timezone.now(),
    )
    params = {"use_wordnet": run.parameters.get("use_wordnet", True)}
    try:
        out = {}
        for k, pair in enumerate(pairs):
            out[pair.pk] = align(pair.tokens1, pair.tokens2, **params)
            if k % 10 == 0:
                AlignerRun.objects.filter(pk=run.pk).update(progress_done=k, updated_at=timezone.now())
        system = system_alignments_store(
            study=run.study,
            name=run.system_name,
            alignments=out,
            kind=AlignmentSystemKind.ALIGNER,
            description="paraeval's monolingual aligner (metrics.core.aligner)",
            parameters=params,
            replace=True,
        )
    except ValidationError as exc:
        AlignerRun.objects.filter(pk=run.pk).update(
            status=JobStatus.FAILED,
            phase="failed",
            error="; ".join(exc.messages),
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    except DatabaseError:
        raise  # the task retries
    except Exception as exc:
        logger.exception("aligner run %s crashed", run.pk)
        AlignerRun.objects.filter(pk=run.pk).update(
            status=JobStatus.FAILED,
            phase="failed",
            error=f"internal error: {exc!r}",
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
        raise
    else:
        AlignerRun.objects.filter(pk=run.pk).update(
            status=JobStatus.SUCCEEDED,
            phase="done",
            system=system,
            progress_done=len(pairs),
            finished_at=timezone.now(),
            updated_at=timezone.now(),
        )
    run.refresh_from_db()
    return run

"""Writes: importing alignment pairs and groups into a study (all or nothing)."""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import IntegrityError, transaction

from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.models import Study
from annotation.services.imports import CONCURRENT_IMPORT_MESSAGE, study_import_lock

from ..enums import AssignmentStatus
from ..importing import ParsedPairs, parse_pairs_file
from ..models import AlignmentAssignment, AlignmentConfig, AlignmentGroup, AlignmentPair

# The logger's name from before the split into modules, so that log filters keep matching.
logger = logging.getLogger("annotation.alignment.services")


def pairs_import_parsed(*, study: Study, parsed: ParsedPairs, replace: bool = False) -> dict:
    """Write parsed pairs into ``study`` in one transaction: all or nothing.

    Imports into one study run one after the other (``study_import_lock``); a
    unique-constraint race that still slips through is a :class:`StudyImportError`.
    """
    try:
        return _pairs_import_parsed(study=study, parsed=parsed, replace=replace)
    except IntegrityError:
        logger.warning("pairs import into study %s raced another import", study.pk, exc_info=True)
        raise StudyImportError(parsed.filename, [ImportIssue(CONCURRENT_IMPORT_MESSAGE)]) from None


def _pairs_import_parsed(*, study: Study, parsed: ParsedPairs, replace: bool = False) -> dict:
    """Write parsed pairs into ``study`` in one transaction: all or nothing.

    New pairs go after the study's existing ones. A pair id the study already
    has is refused (its line named). A new pair may join an existing group only
    if it shares the group's key sentence. With ``replace`` every pair, group and
    system alignment of the study is deleted first; that is refused once an
    annotator has saved or submitted work.
    """
    with transaction.atomic():
        study_import_lock(study=study)
        if replace:
            worked = (
                AlignmentAssignment.objects.filter(pair__study=study).exclude(status=AssignmentStatus.ASSIGNED).exists()
            )
            if worked:
                raise StudyImportError(
                    parsed.filename,
                    [
                        ImportIssue(
                            "annotators have already saved or submitted alignments in this study; its pairs cannot be replaced"
                        )
                    ],
                )
            AlignmentGroup.objects.filter(study=study).delete()
        existing_ids = set(AlignmentPair.objects.filter(study=study).values_list("external_id", flat=True))
        groups = {g.external_id: g for g in AlignmentGroup.objects.filter(study=study)}
        group_keys: dict[str, list[str]] = {}
        for gid, tokens in AlignmentPair.objects.filter(study=study).values_list("group__external_id", "tokens1"):
            group_keys.setdefault(gid, tokens)
        issues = []
        for p in parsed.pairs:
            if p.external_id in existing_ids:
                issues.append(
                    ImportIssue(
                        f"the study already has a pair '{p.external_id}'; choose another id or replace the study's pairs",
                        line=p.line,
                        column="pair_id",
                    )
                )
            elif p.group_id in group_keys and group_keys[p.group_id] != p.tokens1:
                issues.append(
                    ImportIssue(
                        f"the study's group '{p.group_id}' has another key sentence", line=p.line, column="sentence1"
                    )
                )
            if len(issues) >= 50:
                break
        if issues:
            raise StudyImportError(parsed.filename, issues)

        next_group = AlignmentGroup.objects.filter(study=study).count()
        new_groups: list[AlignmentGroup] = []
        for gid in parsed.group_ids:
            if gid not in groups:
                g = AlignmentGroup(study=study, external_id=gid, position=next_group + len(new_groups))
                g.full_clean(validate_constraints=False)
                new_groups.append(g)
        AlignmentGroup.objects.bulk_create(new_groups)
        groups = {g.external_id: g for g in AlignmentGroup.objects.filter(study=study)}
        last = (
            AlignmentPair.objects.filter(study=study).order_by("-position").values_list("position", flat=True).first()
        )
        start = 0 if last is None else last + 1
        rows = []
        for k, p in enumerate(parsed.pairs):
            row = AlignmentPair(
                study=study,
                group=groups[p.group_id],
                external_id=p.external_id,
                position=start + k,
                text1=p.text1,
                text2=p.text2,
                tokens1=p.tokens1,
                tokens2=p.tokens2,
            )
            row.full_clean(validate_constraints=False, exclude=["group", "study"])
            rows.append(row)
        AlignmentPair.objects.bulk_create(rows, batch_size=1000)
        AlignmentConfig.objects.get_or_create(study=study)
        return {"pairs_added": len(rows), "groups_added": len(new_groups), "replaced": replace, "format": parsed.format}


def pairs_import_file(
    *,
    study: Study,
    data: bytes,
    filename: str,
    fmt: str | None = None,
    pretokenized: bool = False,
    replace: bool = False,
) -> dict:
    """Parse and import a CSV/TSV/JSONL file of pairs or groups (see ``importing``); all or nothing.

    Raises :class:`annotation.importing.StudyImportError` naming every bad line.
    """
    limit = settings.PARAEVAL_IMPORT_MAX_BYTES
    if len(data) > limit:
        raise StudyImportError(
            filename,
            [ImportIssue(f"the file is {len(data):,} bytes; the limit is {limit:,} (PARAEVAL_IMPORT_MAX_BYTES)")],
        )
    parsed = parse_pairs_file(data, filename=filename, fmt=fmt, pretokenized=pretokenized)
    return pairs_import_parsed(study=study, parsed=parsed, replace=replace)

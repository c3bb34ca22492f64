"""Importing rankings collected elsewhere into a ranking study: a ranking file (JSON Lines,
:func:`annotation.judging.protocols.ranking.parsers.parse_rankings_file`), all or nothing, every problem
named with its line and column. The one path behind the unit's
:meth:`~.unit.RankingProtocol.judgments_import`, which ``manage.py import_judgments`` and
``import_rankings`` ask."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.models import Candidate, Original, Study

from ...enums import CONTROL_SYSTEM_PREFIX, JudgmentSource
from ...models import Assignment, JudgingDesign
from ...services.judgment_import import judges_for_import, judges_refused_issues
from ...tokens import item_token_new
from ..registry import protocol_for_study
from .models import RankingItem, RankingJudgment
from .parsers import parse_rankings_file


@dataclass(frozen=True)
class RankingImportSummary:
    rows: int
    rankings: int
    revisions: int  # rankings of a set the judge had ranked before (the file's becomes the latest)
    judges: int
    judges_created: int

    def describe(self) -> str:
        """What was written, in one sentence (the import command prints it)."""
        return (
            f"{self.rows:,} lines, {self.rankings:,} rankings ({self.revisions:,} revisions) by {self.judges} "
            f"judges ({self.judges_created} new imported participants)."
        )


def rankings_import_file(*, study: Study, data: bytes, filename: str) -> RankingImportSummary:
    """Write the rankings of ``data`` into ``study`` (a ranking study), all or nothing.

    Each line ranks 2 to k genuine candidates of one original of the study, by system name
    (:class:`~annotation.importing.StudyImportError` names every line that does not: an
    unknown original or system, too many systems, a control). The judge is the study's
    judge of that username, else an imported participant
    (:func:`~annotation.judging.services.judgment_import.imported_judge_username`, no
    password). Each ranking becomes a set of the judge's assignment (an earlier set of the
    same candidates is revised: the file's ranking becomes the latest; the lines of one judge
    and original with the same candidates but different ``set`` numbers revise or create one
    set each, never the same one), its candidates in
    the order of the file (the screen order of an import is not known), stored with
    ``source=import``.
    """
    # The study's unit is asked what its items are, not imported: the ranking unit imports this
    # module for its judgments_import.
    if protocol_for_study(study=study).item_model is not RankingItem:
        raise StudyImportError(
            filename,
            [ImportIssue(message=("this study is not a ranking study; rankings can only be imported into one"))],
        )
    design = JudgingDesign.objects.get(study=study)
    parsed = parse_rankings_file(data, filename=filename, max_bytes=settings.PARAEVAL_IMPORT_MAX_BYTES)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        originals = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
        pks = {
            (o, s): pk
            for pk, o, s in Candidate.objects.filter(original__study=study).values_list(
                "id", "original__external_id", "system__name"
            )
        }
        issues: list[ImportIssue] = []
        resolved = []
        for row in parsed.rows:
            if row.original_id not in originals:
                issues.append(
                    ImportIssue(
                        f"study '{study.name}' has no original '{row.original_id}'", line=row.line, column="original_id"
                    )
                )
                continue
            names = [s for g in row.groups for s in g]
            unknown = [s for s in names if (row.original_id, s) not in pks or s.startswith(CONTROL_SYSTEM_PREFIX)]
            if unknown:
                issues.append(
                    ImportIssue(
                        f"original '{row.original_id}' has no candidate of system "
                        f"{', '.join(repr(s) for s in unknown)}",
                        line=row.line,
                        column="ranking",
                    )
                )
                continue
            if len(names) > design.ranking_k:
                issues.append(
                    ImportIssue(
                        f"ranks {len(names)} systems; this study ranks at most k = {design.ranking_k}",
                        line=row.line,
                        column="ranking",
                    )
                )
                continue
            resolved.append(row)
        if issues:
            raise StudyImportError(filename, issues)

        names = sorted({r.judge for r in resolved})
        judges, created, refused = judges_for_import(study=study, names=names)
        if refused:
            raise StudyImportError(filename, judges_refused_issues(study, refused))
        now = timezone.now()
        rankings = revisions = 0
        claimed: set[int] = set()  # items a line of this file ranked: another set never lands on them
        # In set order, so that a judge's n-th set of the same candidates revises the n-th such item
        # (re-importing a file revises, never merges) and new items follow the file's set numbers.
        for row in sorted(resolved, key=lambda r: (r.judge, r.original_id, r.set_number)):
            user = judges[row.judge]
            assignment = Assignment.objects.filter(study=study, judge=user).first()
            if assignment is None:
                assignment = Assignment.objects.create(study=study, judge=user, seed=0, n_items=0, joined_late=True)
            ids = [pks[(row.original_id, s)] for g in row.groups for s in g]
            item = next(
                (
                    it
                    for it in RankingItem.objects.filter(
                        assignment=assignment, original_id=originals[row.original_id]
                    ).order_by("position")
                    if it.pk not in claimed and sorted(it.candidates) == sorted(ids)
                ),
                None,
            )
            if item is None:
                position = (
                    RankingItem.objects.filter(assignment=assignment).aggregate(m=Max("position"))["m"] or 0
                ) + 1
                item = RankingItem.objects.create(
                    assignment=assignment,
                    original_id=originals[row.original_id],
                    candidates=ids,
                    position=position,
                    token=item_token_new(),
                    is_control=False,
                    done_at=now,
                )
                assignment.n_items = RankingItem.objects.filter(assignment=assignment).count()
                assignment.save(update_fields=["n_items", "updated_at"])
            elif item.done_at is None:
                RankingItem.objects.filter(pk=item.pk).update(done_at=now, updated_at=now)
            claimed.add(item.pk)
            latest = RankingJudgment.objects.filter(item=item, is_latest=True).first()
            if latest is not None:
                RankingJudgment.objects.filter(pk=latest.pk).update(is_latest=False)
                revisions += 1
            groups = [
                [pks[(row.original_id, s)] for s in g] if len(g) > 1 else pks[(row.original_id, g[0])]
                for g in row.groups
            ]
            scores = {
                str(pks[(row.original_id, s)]): (int(v) if float(v).is_integer() else v) for s, v in row.scores.items()
            }
            RankingJudgment.objects.create(
                study=study,
                item=item,
                judge=user,
                key=f"import-{item_token_new()[:24]}",
                revision=(latest.revision + 1) if latest else 1,
                is_latest=True,
                groups=groups,
                scores=scores,
                served_at=now,
                submitted_at=now,
                seconds=row.seconds,
                source=JudgmentSource.IMPORT,
            )
            rankings += 1
    return RankingImportSummary(
        rows=len(parsed.rows), rankings=rankings, revisions=revisions, judges=len(judges), judges_created=created
    )

"""Importing the absolute protocol's judgments collected elsewhere (the long format of
:mod:`annotation.importing.judgments`, a file, all or nothing): the one path behind the
command, the study page, the API and the background job."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.enums import SystemKind
from annotation.importing.judgments import parse_judgments_file
from annotation.importing.reading import ImportIssue, StudyImportError
from annotation.judging.services.opening import BULK_BATCH, IMPORTED_ASSIGNMENT_SEED
from annotation.models import Candidate, ImportJob, Original, Study, System
from annotation.services.imports import import_job_upload
from config.jobs.enums import JobStatus

from ...enums import JUDGMENTS_JOB_KEY, ImportMode, JudgmentSource
from ...models import Assignment
from ...services.design import design_get_or_create
from ...services.judgment_import import JudgmentsImported, judges_for_import, judges_refused_issues
from ...tokens import item_token_new
from ..registry import protocol_for_design
from .models import AssignmentItem, Judgment


@dataclass(frozen=True)
class JudgmentImportSummary(JudgmentsImported):
    candidates_created: int
    systems_created: int
    mode: str = ImportMode.REFUSE
    skipped: int = 0  # values left out because (judge, item, criterion) already had one (mode "add")
    replaced: int = 0  # values that replaced an earlier latest value (mode "replace")
    controls_skipped: int = 0  # control rows of a tidy export (each study builds its own controls)

    def describe(self) -> str:
        """What was written, in one sentence (the import command prints it)."""
        return (
            f"{self.rows:,} rows, {self.judgments:,} judgments ({self.revisions:,} revisions) by {self.judges} judges "
            f"({self.judges_created} new imported participants); {self.candidates_created:,} candidates and "
            f"{self.systems_created} systems added; {self.replaced:,} values replaced, {self.skipped:,} skipped "
            f"as already there (mode {self.mode})"
            + (f"; {self.controls_skipped:,} control rows skipped." if self.controls_skipped else ".")
        )


def judgments_import_refusal(*, study: Study, filename: str, mode: str) -> None:
    """Raise :class:`~annotation.importing.reading.StudyImportError` if no judgments file can be
    imported into ``study`` with ``mode`` (checks that read no file: also before a job is queued)."""
    if mode not in ImportMode.values:
        raise StudyImportError(
            filename,
            [ImportIssue(message=(f"unknown import mode {mode!r}; choose one of {', '.join(ImportMode.values)}"))],
        )
    unit = protocol_for_design(design_get_or_create(study=study))  # the scales the file is parsed against
    if not unit.imports_judgments:
        raise StudyImportError(
            filename,
            [
                ImportIssue(
                    message=(f"this study's protocol is {unit.name}; absolute judgments cannot be imported into it")
                )
            ],
        )


def judgments_import_parsed(
    *, study: Study, parsed, mode: str = ImportMode.REFUSE, check_only: bool = False
) -> JudgmentImportSummary | None:
    """Write parsed judgments (:func:`annotation.importing.parse_judgments_file`) into
    ``study``, all or nothing; :class:`~annotation.importing.StudyImportError` names
    every row that cannot be matched.

    Candidates: ``system``/``systems`` name the study's candidates of that original
    (with ``candidate`` text too, a missing one is added, under a new imported system
    if need be); the text alone matches every candidate of the original with that
    text. A row naming several systems gives each of their candidates the judgment.
    Judges: a judge of the study with that username is used; any other name becomes
    an imported participant (:func:`imported_judge_username`, no password). Each
    judge gets an assignment holding the judged items (done), marked as an import.
    Rows of one judge and candidate form one judgment until a criterion repeats or
    the ``judgment`` id changes, which starts a new revision (the latest counts, as
    on the judge's page); file order decides which is latest. Every judgment is stored with ``source=import``.

    Values already in the study (from the judge's page, the API or an earlier import)
    are never hidden: each new revision carries forward the latest value of every
    criterion the file does not give, so there is exactly one latest value per
    (judge, item, criterion). Where the file gives a value for a (judge, item,
    criterion) that already has one, ``mode`` decides (:class:`~annotation.judging.enums.ImportMode`):
    ``refuse`` (the default) refuses the file naming each such row, ``add`` skips those
    values and adds the rest, ``replace`` makes the file's value the latest.
    """
    judgments_import_refusal(study=study, filename=parsed.filename, mode=mode)
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).first()
        originals = dict(Original.objects.filter(study=study).values_list("external_id", "id"))
        systems = dict(System.objects.filter(study=study).values_list("name", "id"))
        system_kinds = dict(System.objects.filter(study=study).values_list("name", "kind"))
        by_system: dict[tuple[int, str], int] = {}
        by_text: dict[tuple[int, str], list[int]] = {}
        cand_text: dict[int, str] = {}
        for cand_pk, cand_oid, sname, text in Candidate.objects.filter(original__study=study).values_list(
            "id", "original_id", "system__name", "text"
        ):
            by_system[(cand_oid, sname)] = cand_pk
            by_text.setdefault((cand_oid, text.strip()), []).append(cand_pk)
            cand_text[cand_pk] = text
        issues: list[ImportIssue] = []
        new_systems: list[str] = []
        new_cands: dict[tuple[int, str], str] = {}  # (original pk, system) -> text
        resolved: list[tuple] = []  # (row, [candidate key]) where a key is a pk or ("new", oid, system)
        for row in parsed.rows:
            if len(issues) >= 50:
                break
            oid = originals.get(row.original_id)
            if oid is None:
                issues.append(
                    ImportIssue(
                        f"study '{study.name}' has no original '{row.original_id}'", line=row.line, column="original_id"
                    )
                )
                continue
            keys: list = []
            if row.systems:
                for name in row.systems:
                    pk = by_system.get((oid, name))
                    if pk is not None:
                        if row.candidate and cand_text[pk].strip() != row.candidate:
                            issues.append(
                                ImportIssue(
                                    f"system '{name}' has another candidate for original '{row.original_id}'",
                                    line=row.line,
                                    column="candidate",
                                )
                            )
                        keys.append(pk)
                    elif name in system_kinds and system_kinds[name] != SystemKind.IMPORTED:
                        issues.append(
                            ImportIssue(f"system '{name}' is not an imported system", line=row.line, column="system")
                        )
                    elif row.candidate:
                        known = new_cands.setdefault((oid, name), row.candidate)
                        if known != row.candidate:
                            issues.append(
                                ImportIssue(
                                    f"system '{name}' is given two different candidates for original '{row.original_id}'",
                                    line=row.line,
                                    column="candidate",
                                )
                            )
                        if name not in systems and name not in new_systems:
                            new_systems.append(name)
                        keys.append(("new", oid, name))
                    else:
                        issues.append(
                            ImportIssue(
                                f"original '{row.original_id}' has no candidate of system '{name}' (give the candidate "
                                "text to add it)",
                                line=row.line,
                                column="systems" if len(row.systems) > 1 else "system",
                            )
                        )
            else:
                keys = list(by_text.get((oid, row.candidate), []))
                if not keys:
                    issues.append(
                        ImportIssue(
                            f"original '{row.original_id}' has no candidate with this text (give a system to add it)",
                            line=row.line,
                            column="candidate",
                        )
                    )
            resolved.append((row, keys))
        if issues:
            raise StudyImportError(parsed.filename, issues)
        if check_only:  # every row matched: nothing to report, nothing written
            return None

        System.objects.bulk_create(
            [
                System(study=study, name=n, kind=SystemKind.IMPORTED, description="Added by a judgments import.")
                for n in new_systems
            ]
        )
        systems = dict(System.objects.filter(study=study).values_list("name", "id"))
        Candidate.objects.bulk_create(
            [Candidate(original_id=oid, system_id=systems[name], text=text) for (oid, name), text in new_cands.items()],
            batch_size=BULK_BATCH,
        )
        new_pk = {
            (oid, name): pk
            for pk, oid, name in Candidate.objects.filter(
                original__study=study, system__name__in={n for _, n in new_cands}
            ).values_list("id", "original_id", "system__name")
            if (oid, name) in new_cands
        }

        # Judges: the study's own judges by username, else imported participants.
        names = list(dict.fromkeys(r.judge for r, _ in resolved))
        judges, created_judges, refused = judges_for_import(study=study, names=names)
        if refused:
            raise StudyImportError(parsed.filename, judges_refused_issues(study, refused))

        # Group rows into judgments per (judge, candidate): a repeated criterion starts a revision.
        current: dict[tuple[int, int], dict] = {}
        judgments: list[tuple[int, int, dict]] = []  # (user pk, candidate pk, {values, lines, seconds}) in file order
        for row, keys in resolved:
            user = judges[row.judge]
            for key in keys:
                cand = new_pk[(key[1], key[2])] if isinstance(key, tuple) else key
                j = current.get((user.pk, cand))
                if j is None or row.criterion in j["values"] or j["id"] != row.judgment:
                    j = {"values": {}, "lines": {}, "seconds": None, "id": row.judgment}
                    current[(user.pk, cand)] = j
                    judgments.append((user.pk, cand, j))
                j["values"][row.criterion] = row.value
                j["lines"][row.criterion] = row.line
                if row.seconds is not None:
                    j["seconds"] = row.seconds

        # What the study already holds for these judges and candidates: the latest values.
        before: dict[tuple[int, int], dict] = {}
        for judge_pk, cand_pk, values in Judgment.objects.filter(
            study=study, is_latest=True, judge__in=judges.values(), item__candidate_id__in={c for _, c, _ in judgments}
        ).values_list("judge_id", "item__candidate_id", "values"):
            before[(judge_pk, cand_pk)] = dict(values)
        skipped = replaced = 0
        if before:
            name_of = {u.pk: n for n, u in judges.items()}
            clashes: list[ImportIssue] = []
            for user_pk, cand, j in judgments:
                old = before.get((user_pk, cand))
                if not old:
                    continue
                for crit in [c for c in j["values"] if c in old]:
                    if mode == ImportMode.ADD:
                        del j["values"][crit]
                        skipped += 1
                    elif mode == ImportMode.REPLACE:
                        replaced += 1
                    elif len(clashes) < 50:
                        clashes.append(
                            ImportIssue(
                                f"judge '{name_of[user_pk]}' already has a {crit} value for this item "
                                f"({old[crit]}); import with mode 'replace' to revise it or 'add' to skip it",
                                line=j["lines"][crit],
                                column="criterion",
                            )
                        )
            if clashes:
                raise StudyImportError(parsed.filename, clashes)
            judgments = [t for t in judgments if t[2]["values"]]

        now = timezone.now()
        assignments = {a.judge_id: a for a in Assignment.objects.filter(study=study, judge__in=judges.values())}
        for user in judges.values():
            if user.pk not in assignments:
                # In a draft, opening adds the judge's planned items to this assignment (its seed says so).
                assignments[user.pk] = Assignment.objects.create(
                    study=study, judge=user, seed=IMPORTED_ASSIGNMENT_SEED, n_items=0, instructions_seen_at=now
                )
        items = {
            (i.assignment.judge_id, i.candidate_id): i
            for i in AssignmentItem.objects.filter(assignment__in=assignments.values()).select_related("assignment")
        }
        new_items = []
        next_pos = {a.pk: a.n_items for a in assignments.values()}
        for user_pk, cand, _j in judgments:
            if (user_pk, cand) not in items:
                a = assignments[user_pk]
                next_pos[a.pk] += 1
                item = AssignmentItem(
                    assignment=a, candidate_id=cand, position=next_pos[a.pk], token=item_token_new(), done_at=now
                )
                items[(user_pk, cand)] = item
                new_items.append(item)
        AssignmentItem.objects.bulk_create(new_items, batch_size=BULK_BATCH)
        for a in assignments.values():
            if next_pos[a.pk] != a.n_items:
                Assignment.objects.filter(pk=a.pk).update(n_items=next_pos[a.pk], updated_at=now)
        # Only the items this file judges are done now and get a new latest revision; every
        # other item of these judges (in an open study, the rest of their assignment, controls
        # included) keeps its state and its latest judgment.
        touched = {items[(user_pk, cand)].pk for user_pk, cand, _j in judgments}
        AssignmentItem.objects.filter(pk__in=touched, done_at__isnull=True).update(done_at=now, updated_at=now)
        latest_rev = dict(Judgment.objects.filter(item__in=touched, is_latest=True).values_list("item_id", "revision"))
        Judgment.objects.filter(item_id__in=latest_rev, is_latest=True).update(is_latest=False)
        last_index: dict[int, int] = {}
        for idx, (user_pk, cand, _j) in enumerate(judgments):
            last_index[items[(user_pk, cand)].pk] = idx
        revision = dict(latest_rev)
        rows = []
        revisions = 0
        carried = {items[k].pk: v for k, v in before.items() if k in items}
        for idx, (user_pk, cand, j) in enumerate(judgments):
            item = items[(user_pk, cand)]
            rev = revision.get(item.pk, 0) + 1
            revision[item.pk] = rev
            revisions += rev > 1
            # A revision keeps the criteria the file does not give at the values the study
            # held before this import; within one file each row is a whole judgment, as on
            # the judge's page (a worker's later row counts as it is, blanks included).
            values = {**carried.get(item.pk, {}), **j["values"]}
            rows.append(
                Judgment(
                    study=study,
                    item=item,
                    judge_id=user_pk,
                    key=f"import-{item_token_new()[:24]}",
                    revision=rev,
                    is_latest=last_index[item.pk] == idx,
                    served_at=now,
                    submitted_at=now,
                    seconds=j["seconds"],
                    source=JudgmentSource.IMPORT,
                    values=values,
                )
            )
        Judgment.objects.bulk_create(rows, batch_size=BULK_BATCH)
        return JudgmentImportSummary(
            rows=len(parsed.rows),
            judgments=len(rows),
            revisions=revisions,
            judges_created=created_judges,
            judges=len(judges),
            candidates_created=len(new_cands),
            systems_created=len(new_systems),
            mode=mode,
            skipped=skipped,
            replaced=replaced,
            controls_skipped=parsed.controls_skipped,
        )


def judgments_import_file(
    *, study: Study, data: bytes, filename: str, fmt: str | None = None, mode: str = ImportMode.REFUSE
) -> JudgmentImportSummary:
    """Parse (against the study's design) and write a judgments file: the one path behind
    the command, the study page and the API. :class:`StudyImportError` on any problem."""
    design = design_get_or_create(study=study)
    try:
        parsed = parse_judgments_file(
            data, filename=filename, criteria=design.criteria, fmt=fmt, max_bytes=settings.PARAEVAL_IMPORT_MAX_BYTES
        )
    except StudyImportError as exc:
        # Every problem at once: the rows with wrong values are matched against the study too, so
        # unknown originals and systems are not left for a second round (issue 28).
        partial = getattr(exc, "parsed", None)
        if partial is None or not (partial.rows or partial.rows_to_match):
            raise
        partial.rows = sorted(partial.rows + partial.rows_to_match, key=lambda r: r.line)
        try:
            judgments_import_parsed(study=study, parsed=partial, check_only=True)
        except StudyImportError as matching:
            exc.issues = sorted(exc.issues + matching.issues, key=lambda i: i.line or 0)
        raise StudyImportError(filename, exc.issues) from None
    summary = judgments_import_parsed(study=study, parsed=parsed, mode=mode)
    assert summary is not None
    return summary


def judgments_import_job_run(*, job_id: int) -> ImportJob:
    """Run a queued judgments import (the worker's side of
    :func:`~annotation.judging.services.queueing.judgments_import_start`): parse and write the
    job's upload, all or nothing, as :func:`judgments_import_file` does in a request.

    Safe to run twice: a finished job is left alone, and the rows are written in the
    transaction that marks the job succeeded, under the job's row lock, so a second run that
    got past the first check finds the job finished and writes nothing. A refused file fails
    the job with every problem (line and column); nothing is written then.
    """
    job = ImportJob.objects.select_related("study").get(pk=job_id)
    if job.is_finished:
        return job
    request = dict((job.summary or {}).get(JUDGMENTS_JOB_KEY) or {})
    now = timezone.now()
    ImportJob.objects.filter(pk=job.pk).update(
        status=JobStatus.RUNNING, phase="reading and writing", started_at=now, error="", updated_at=now
    )
    try:
        data = import_job_upload(job=job)
        with transaction.atomic():
            locked = ImportJob.objects.select_for_update().get(pk=job.pk)
            if locked.is_finished:
                return locked  # another run finished it meanwhile
            summary = judgments_import_file(
                study=job.study,
                data=data,
                filename=job.filename,
                fmt=job.format or None,
                mode=request.get("mode") or ImportMode.REFUSE,
            )
            now = timezone.now()
            ImportJob.objects.filter(pk=job.pk).update(
                status=JobStatus.SUCCEEDED,
                phase="done",
                upload=b"",
                summary={JUDGMENTS_JOB_KEY: request, **asdict(summary)},
                row_count=summary.rows,
                progress_done=summary.rows,
                progress_total=summary.rows,
                finished_at=now,
                updated_at=now,
            )
    except StudyImportError as exc:
        now = timezone.now()
        ImportJob.objects.filter(pk=job.pk).update(
            status=JobStatus.FAILED,
            phase="failed",
            error=exc.describe(),
            upload=b"",
            finished_at=now,
            updated_at=now,
        )
    job.refresh_from_db()
    return job

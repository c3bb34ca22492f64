# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Writes: alignment tasks, system alignments, annotators' drafts and submissions, scoring runs.

Views, APIs, tasks, the demo and commands call these; none of them writes a
model directly.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.enums import JobStatus
from annotation.importing import ImportIssue, StudyImportError, decode_utf8
from annotation.models import Study
from annotation.services import CONCURRENT_IMPORT_MESSAGE, job_enqueue, study_import_lock
from metrics.core.alignment import FORMATS as ALIGNMENT_FORMATS
from metrics.core.alignment import Alignment, FormatError, loads
from metrics.core.alignment_scoring import (
    SCORING_VERSION,
    LinkScores,
    align_counts,
    align_scores,
    annotator_agreement,
    link_counts,
    link_scores,
    paraphrase_scores,
    phrase_pairs,
    read_paraphrase_table,
)
from metrics.core.text import TOKENIZER_VERSION

from . import selectors
from .enums import AlignmentSystemKind, AssignmentStatus, ScoringKind
from .importing import ParsedPairs, parse_pairs_file
from .models import (
    AlignerRun,
    AlignmentAssignment,
    AlignmentConfig,
    AlignmentGroup,
    AlignmentPair,
    AlignmentSystem,
    ScoringRun,
    SystemAlignment,
)

logger = logging.getLogger(__name__)

#: Paraphrase tables up to this size are checked in the request (errors shown at once);
#: larger ones are read by the worker, whose run then reports the errors.
TABLE_CHECK_IN_REQUEST_BYTES = 2 * 1024 * 1024


class AssignmentConflict(Exception):
    """The draft changed since the browser loaded it (another tab saved newer work)."""

    def __init__(self, current_revision: int):
        self.current_revision = current_revision
        super().__init__(gettext("this pair was saved elsewhere (revision %(revision)s); reload to continue")
                         % {"revision": current_revision})


class AssignmentClosed(Exception):
    """The assignment is submitted; its alignment can no longer change."""


def _links_json(links: Iterable[tuple[int, int]]) -> list[list[int]]:
    return [[i, j] for i, j in sorted(links)]


# ============================================================================ settings

@transaction.atomic
def alignment_config_update(
    *, study: Study, annotators_per_pair: int | None = None, prefill_system: AlignmentSystem | None = None,
    clear_prefill: bool = False,
) -> AlignmentConfig:
    """Change the study's k and pre-fill system.

    A new pre-fill system is also copied into every assignment nobody has
    touched yet (revision 0), so that annotators start from it.
    """
    config, _ = AlignmentConfig.objects.select_for_update().get_or_create(study=study)
    if annotators_per_pair is not None:
        config.annotators_per_pair = annotators_per_pair
    if prefill_system is not None:
        if prefill_system.study_id != study.pk:
            raise ValidationError("the pre-fill system belongs to another study")
        config.prefill_system = prefill_system
    elif clear_prefill:
        config.prefill_system = None
    config.full_clean()
    config.save()
    untouched = AlignmentAssignment.objects.filter(pair__study=study, revision=0, status=AssignmentStatus.ASSIGNED)
    if prefill_system is not None or clear_prefill:
        by_pair = {}
        if config.prefill_system_id:
            by_pair = {r.pair_id: r for r in SystemAlignment.objects.filter(system_id=config.prefill_system_id)}
        batch = []
        for a in untouched:
            row = by_pair.get(a.pair_id)
            a.sure, a.possible = (row.sure, row.possible) if row else ([], [])
            a.prefill_system_id = config.prefill_system_id
            batch.append(a)
        AlignmentAssignment.objects.bulk_update(batch, ["sure", "possible", "prefill_system"], batch_size=500)
    return config


# ============================================================================ tasks (pairs)

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
            worked = AlignmentAssignment.objects.filter(pair__study=study).exclude(status=AssignmentStatus.ASSIGNED).exists()
            if worked:
                raise StudyImportError(parsed.filename, [ImportIssue(
                    "annotators have already saved or submitted alignments in this study; its pairs cannot be replaced")])
            AlignmentGroup.objects.filter(study=study).delete()
        existing_ids = set(AlignmentPair.objects.filter(study=study).values_list("external_id", flat=True))
        groups = {g.external_id: g for g in AlignmentGroup.objects.filter(study=study)}
        group_keys: dict[str, list[str]] = {}
        for gid, tokens in AlignmentPair.objects.filter(study=study).values_list("group__external_id", "tokens1"):
            group_keys.setdefault(gid, tokens)
        issues = []
        for p in parsed.pairs:
            if p.external_id in existing_ids:
                issues.append(ImportIssue(f"the study already has a pair '{p.external_id}'; choose another id or replace the study's pairs",
                                          line=p.line, column="pair_id"))
            elif p.group_id in group_keys and group_keys[p.group_id] != p.tokens1:
                issues.append(ImportIssue(f"the study's group '{p.group_id}' has another key sentence", line=p.line, column="sentence1"))
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
        last = AlignmentPair.objects.filter(study=study).order_by("-position").values_list("position", flat=True).first()
        start = 0 if last is None else last + 1
        rows = []
        for k, p in enumerate(parsed.pairs):
            row = AlignmentPair(study=study, group=groups[p.group_id], external_id=p.external_id, position=start + k,
                                text1=p.text1, text2=p.text2, tokens1=p.tokens1, tokens2=p.tokens2)
            row.full_clean(validate_constraints=False, exclude=["group", "study"])
            rows.append(row)
        AlignmentPair.objects.bulk_create(rows, batch_size=1000)
        AlignmentConfig.objects.get_or_create(study=study)
        return {"pairs_added": len(rows), "groups_added": len(new_groups), "replaced": replace, "format": parsed.format}


def pairs_import_file(
    *, study: Study, data: bytes, filename: str, fmt: str | None = None, pretokenized: bool = False, replace: bool = False,
) -> dict:
    """Parse and import a CSV/TSV/JSONL file of pairs or groups (see ``importing``); all or nothing.

    Raises :class:`annotation.importing.StudyImportError` naming every bad line.
    """
    limit = settings.PARAEVAL_IMPORT_MAX_BYTES
    if len(data) > limit:
        raise StudyImportError(filename, [ImportIssue(f"the file is {len(data):,} bytes; the limit is {limit:,} (PARAEVAL_IMPORT_MAX_BYTES)")])
    parsed = parse_pairs_file(data, filename=filename, fmt=fmt, pretokenized=pretokenized)
    return pairs_import_parsed(study=study, parsed=parsed, replace=replace)


# ============================================================================ system alignments

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
        system = AlignmentSystem(study=study, name=name, kind=kind, description=description, parameters=parameters or {})
        system.full_clean()
        system.save()
    pairs = {p.pk: p for p in AlignmentPair.objects.filter(study=study, pk__in=list(alignments))}
    rows = []
    for pid, a in alignments.items():
        pair = pairs.get(pid)
        if pair is None:
            raise ValidationError(f"pair {pid} is not a pair of this study")
        if a.tokens1 is not None and a.tokens2 is not None and (list(a.tokens1), list(a.tokens2)) != (
                pair.tokens1, pair.tokens2):
            raise ValidationError(f"the alignment of pair '{pair.external_id}' is over other tokens than the pair's")
        row = SystemAlignment(system=system, pair=pair, sure=_links_json(a.sure), possible=_links_json(a.possible))
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
        raise StudyImportError(filename, [ImportIssue(f"the file is {len(data):,} bytes; the limit is {limit:,} (PARAEVAL_IMPORT_MAX_BYTES)")])
    if fmt not in ALIGNMENT_FORMATS:
        raise StudyImportError(filename, [ImportIssue(f"unknown alignment format '{fmt}'; use one of {', '.join(ALIGNMENT_FORMATS)}")])
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
        raise StudyImportError(filename, [ImportIssue(f"the file holds {len(alignments)} alignments; the study has {len(pairs)} pairs")])
    try:
        return system_alignments_store(
            study=study, name=name, alignments={p.pk: a for p, a in zip(pairs, alignments)},
            kind=AlignmentSystemKind.IMPORTED, description=description or f"imported from {filename}",
            parameters={"file": filename, "format": fmt}, replace=replace)
    except ValidationError as exc:
        raise StudyImportError(filename, [ImportIssue(m) for m in exc.messages]) from None


@transaction.atomic
def system_delete(*, system: AlignmentSystem) -> None:
    AlignmentConfig.objects.filter(prefill_system=system).update(prefill_system=None)
    system.delete()


def aligner_run_create(*, study: Study, user: User | None, system_name: str = "paraeval-aligner", use_wordnet: bool = True) -> AlignerRun:
    """Queue paraeval's aligner (``metrics.core.aligner.align``) over every pair of the study.

    The worker writes (or rewrites) the aligner system ``system_name``; a system
    of that name that is not an aligner system is refused (``ValidationError``).
    """
    system_name = system_name.strip()
    if not AlignmentPair.objects.filter(study=study).exists():
        raise ValidationError("the study has no alignment pairs yet")
    other = AlignmentSystem.objects.filter(study=study, name=system_name).exclude(kind=AlignmentSystemKind.ALIGNER).first()
    if other is not None:
        raise ValidationError(f"system '{system_name}' is an {other.get_kind_display().lower()} system; choose another name")
    with transaction.atomic():
        run = AlignerRun(study=study, created_by=user, system_name=system_name,
                         parameters={"use_wordnet": bool(use_wordnet)}, phase="queued")
        run.full_clean()
        run.save()
        from .tasks import aligner_run_task

        transaction.on_commit(lambda: job_enqueue(aligner_run_task, run.pk))
    return run


def aligner_run_execute(*, run_id: int) -> AlignerRun:
    """Align every pair and store the system (the worker's side); safe to run twice."""
    from metrics.core.aligner import align

    run = AlignerRun.objects.select_related("study").get(pk=run_id)
    if run.is_finished:
        return run
    pairs = list(selectors.pairs_for_study(study=run.study))
    AlignerRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, phase="aligning", started_at=timezone.now(),
                                                progress_total=len(pairs), progress_done=0, error="", updated_at=timezone.now())
    params = {"use_wordnet": run.parameters.get("use_wordnet", True)}
    try:
        out = {}
        for k, pair in enumerate(pairs):
            out[pair.pk] = align(pair.tokens1, pair.tokens2, **params)
            if k % 10 == 0:
                AlignerRun.objects.filter(pk=run.pk).update(progress_done=k, updated_at=timezone.now())
        system = system_alignments_store(
            study=run.study, name=run.system_name, alignments=out, kind=AlignmentSystemKind.ALIGNER,
            description="paraeval's monolingual aligner (metrics.core.aligner)", parameters=params, replace=True)
    except ValidationError as exc:
        AlignerRun.objects.filter(pk=run.pk).update(status=JobStatus.FAILED, phase="failed", error="; ".join(exc.messages),
                                                    finished_at=timezone.now(), updated_at=timezone.now())
    except DatabaseError:
        raise  # the task retries
    except Exception as exc:
        logger.exception("aligner run %s crashed", run.pk)
        AlignerRun.objects.filter(pk=run.pk).update(status=JobStatus.FAILED, phase="failed", error=f"internal error: {exc!r}",
                                                    finished_at=timezone.now(), updated_at=timezone.now())
        raise
    else:
        AlignerRun.objects.filter(pk=run.pk).update(status=JobStatus.SUCCEEDED, phase="done", system=system, progress_done=len(pairs),
                                                    finished_at=timezone.now(), updated_at=timezone.now())
    run.refresh_from_db()
    return run


# ============================================================================ assignments

@transaction.atomic
def assignments_create(*, study: Study, annotators: Iterable[User] | None = None) -> dict:
    """Give each pair of the study up to k annotators (k from the study's settings); idempotent.

    ``annotators`` defaults to the study's annotator members. Pairs are handed
    out in task order to the annotators with the fewest assignments so far
    (ties by username), never twice to one person. New assignments start from
    the pre-fill system's alignment. Returns counts, including the pairs still
    short of k because the study has fewer than k annotators.
    """
    config = selectors.alignment_config_get(study=study)
    k = config.annotators_per_pair
    people = sorted(annotators if annotators is not None else selectors.annotators_of_study(study=study), key=lambda u: u.username)
    if not people:
        raise ValidationError("the study has no annotators; add people with the role 'annotator' first")
    existing: dict[int, set[int]] = {}
    load: Counter[int] = Counter()
    for pid, uid in AlignmentAssignment.objects.filter(pair__study=study).values_list("pair_id", "annotator_id"):
        existing.setdefault(pid, set()).add(uid)
        load[uid] += 1
    prefill = {}
    if config.prefill_system_id:
        prefill = {r.pair_id: r for r in SystemAlignment.objects.filter(system_id=config.prefill_system_id)}
    order = {u.pk: n for n, u in enumerate(people)}
    new, short = [], 0
    for pair in AlignmentPair.objects.filter(study=study).order_by("position"):
        have = existing.get(pair.pk, set())
        need = k - len(have)
        if need <= 0:
            continue
        candidates = sorted((u for u in people if u.pk not in have), key=lambda u: (load[u.pk], order[u.pk]))
        chosen = candidates[:need]
        short += need > len(chosen)
        for u in chosen:
            load[u.pk] += 1
            row = prefill.get(pair.pk)
            new.append(AlignmentAssignment(
                pair=pair, annotator=u, prefill_system_id=config.prefill_system_id,
                sure=list(row.sure) if row else [], possible=list(row.possible) if row else []))
    AlignmentAssignment.objects.bulk_create(new, batch_size=1000)
    return {"created": len(new), "pairs_short": short, "annotators_per_pair": k, "annotators": len(people)}


def assignment_open(*, assignment: AlignmentAssignment) -> AlignmentAssignment:
    """Record the first time the annotator opened the pair (server clock)."""
    if assignment.opened_at is None:
        now = timezone.now()
        AlignmentAssignment.objects.filter(pk=assignment.pk, opened_at__isnull=True).update(opened_at=now, updated_at=now)
        assignment.refresh_from_db()
    return assignment


def links_limit(pair: AlignmentPair) -> int:
    """Most links one annotator may store on ``pair``: one per grid cell (sure and possible are
    disjoint), and never more than ``PARAEVAL_ALIGNMENT_MAX_LINKS`` (a draft is stored and
    re-validated on every autosave, so its size is the cost of a request)."""
    return min(len(pair.tokens1) * len(pair.tokens2), settings.PARAEVAL_ALIGNMENT_MAX_LINKS)


def links_count_check(pair: AlignmentPair, n_links: int) -> None:
    """Raise ``ValidationError`` when ``n_links`` exceeds :func:`links_limit` — before any
    coordinate is looked at, so that a million-link draft costs no more than counting it."""
    limit = links_limit(pair)
    if n_links > limit:
        n1, n2 = len(pair.tokens1), len(pair.tokens2)
        raise ValidationError(
            f"{n_links:,} links is too many for pair {pair.external_id}: its {n1}×{n2} grid takes at most "
            f"{limit:,} (one per cell; at most {settings.PARAEVAL_ALIGNMENT_MAX_LINKS:,} per pair)"
        )


def _validated_links(assignment: AlignmentAssignment, sure, possible) -> tuple[list, list]:
    links_count_check(assignment.pair, len(sure) + len(possible))
    probe = AlignmentAssignment(sure=sure, possible=possible)
    probe.clean_fields(exclude=[f.name for f in AlignmentAssignment._meta.fields if f.name not in ("sure", "possible")])
    probe.links_fit(assignment.pair)
    return _links_json({tuple(x) for x in sure}), _links_json({tuple(x) for x in possible})


def _active(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValidationError("active_seconds must be a number") from None
    if not math.isfinite(v) or v < 0 or v > 7 * 24 * 3600:
        raise ValidationError("active_seconds must be between 0 and one week")
    return v


def _locked(assignment: AlignmentAssignment, revision: int) -> AlignmentAssignment:
    locked = AlignmentAssignment.objects.select_for_update().select_related("pair").get(pk=assignment.pk)
    if locked.status == AssignmentStatus.SUBMITTED:
        raise AssignmentClosed(gettext("this pair is already submitted"))
    if revision != locked.revision:
        raise AssignmentConflict(locked.revision)
    return locked


@transaction.atomic
def assignment_draft_save(
    *, assignment: AlignmentAssignment, sure: list, possible: list, revision: int, active_seconds: float,
) -> AlignmentAssignment:
    """Autosave: store the draft links if ``revision`` is the stored one; return the new revision.

    Raises :class:`AssignmentConflict` when another tab saved in between,
    :class:`AssignmentClosed` once submitted, ``ValidationError`` for links
    outside the grid. Active seconds never go down (the page counts on from the
    stored value).
    """
    locked = _locked(assignment, revision)
    locked.sure, locked.possible = _validated_links(locked, sure, possible)
    locked.active_seconds = max(locked.active_seconds, _active(active_seconds))
    locked.revision += 1
    locked.status = AssignmentStatus.IN_PROGRESS
    locked.draft_saved_at = timezone.now()
    if locked.opened_at is None:
        locked.opened_at = locked.draft_saved_at
    locked.full_clean(validate_constraints=False)
    locked.save()
    return locked


@transaction.atomic
def assignment_submit(
    *, assignment: AlignmentAssignment, sure: list, possible: list, revision: int, active_seconds: float,
) -> AlignmentAssignment:
    """Submit the final alignment: it becomes this annotator's gold for the pair and is frozen.

    Timing: ``server_seconds`` = submission time − first opening (server clock).
    """
    locked = _locked(assignment, revision)
    now = timezone.now()
    locked.sure, locked.possible = _validated_links(locked, sure, possible)
    locked.active_seconds = max(locked.active_seconds, _active(active_seconds))
    locked.revision += 1
    locked.status = AssignmentStatus.SUBMITTED
    locked.submitted_at = now
    if locked.opened_at is None:
        locked.opened_at = now
    locked.server_seconds = (now - locked.opened_at).total_seconds()
    locked.full_clean(validate_constraints=False)
    locked.save()
    return locked


# ============================================================================ scoring

def _check_scoring_params(max_len, min_prob) -> None:
    if not isinstance(max_len, int) or not 1 <= max_len <= 10:
        raise ValidationError("the maximum phrase length must be between 1 and 10 words")
    if not (isinstance(min_prob, (int, float)) and 0.0 <= min_prob <= 1.0):
        raise ValidationError("the minimum probability must be between 0 and 1")


def scoring_run_create(
    *,
    study: Study,
    user: User | None,
    kind: str,
    system: AlignmentSystem | None = None,
    table_data: bytes | None = None,
    table_filename: str = "",
    max_len: int = 5,
    min_prob: float = 0.0,
    use_possible: bool = True,
) -> ScoringRun:
    """Queue a scoring run for a Celery worker (sent after the transaction commits).

    ``kind`` system needs ``system`` (scored against the gold: the annotators'
    submitted alignments); paraphrases needs ``table_data`` (``phrase<TAB>paraphrase
    [<TAB>probability]``); agreement needs pairs with two or more submitted
    alignments. Raises ``ValidationError`` when the run cannot work, and
    :class:`StudyImportError` for a paraphrase table with bad lines.
    """
    _check_scoring_params(max_len, min_prob)
    gold_pairs = selectors.submitted_alignments(study=study)
    if kind in (ScoringKind.SYSTEM, ScoringKind.PARAPHRASES) and not gold_pairs:
        raise ValidationError("no pair has a submitted alignment yet: the gold is empty")
    label = ""
    if kind == ScoringKind.SYSTEM:
        if system is None or system.study_id != study.pk:
            raise ValidationError("choose a system of this study")
        label = system.name
    elif kind == ScoringKind.PARAPHRASES:
        if not table_data:
            raise ValidationError("upload a paraphrase table")
        table_filename = table_filename or "paraphrases.tsv"
        if len(table_data) > settings.PARAEVAL_IMPORT_MAX_BYTES:
            raise ValidationError(f"the table is {len(table_data):,} bytes; the limit is {settings.PARAEVAL_IMPORT_MAX_BYTES:,}")
        if len(table_data) <= TABLE_CHECK_IN_REQUEST_BYTES:
            _read_table(table_data, table_filename)
        label = table_filename
    elif kind == ScoringKind.AGREEMENT:
        if not any(len(by) >= 2 for by in gold_pairs.values()):
            raise ValidationError("no pair has been submitted by two annotators yet")
        label = "annotators"
    else:
        raise ValidationError(f"unknown scoring kind '{kind}'")
    params = {"max_len": max_len, "min_prob": float(min_prob), "use_possible": bool(use_possible)}
    with transaction.atomic():
        run = ScoringRun(study=study, created_by=user, kind=kind, system=system if kind == ScoringKind.SYSTEM else None,
                         label=label[:255], parameters=params, phase="queued")
        if kind == ScoringKind.PARAPHRASES:
            run.table_file.save(table_filename, ContentFile(table_data), save=False)
        run.full_clean(exclude=["table_file"])
        run.save()
        from .tasks import scoring_run_task

        transaction.on_commit(lambda: job_enqueue(scoring_run_task, run.pk))
    return run


def _read_table(data: bytes, filename: str):
    text = decode_utf8(data, filename)
    try:
        return read_paraphrase_table(text)
    except FormatError as exc:
        raise StudyImportError(filename, [ImportIssue(exc.message, line=exc.line, column=None if exc.column is None else str(exc.column))]) from None


def _update(run_id: int, **fields) -> None:
    ScoringRun.objects.filter(pk=run_id).update(**fields, updated_at=timezone.now())


def _nan_none(x):
    return None if isinstance(x, float) and math.isnan(x) else x


def _ratio(a: int, b: int):
    return a / b if b else None


def scoring_run_execute(*, run_id: int) -> ScoringRun:
    """Compute a queued run's scores and store them (the worker's side).

    Safe to run twice: a finished run is left alone, and a rerun writes the same
    results. Bad input (e.g. a paraphrase table with a bad line) fails the run
    with the error stored for the results page.
    """
    run = ScoringRun.objects.select_related("study", "system").get(pk=run_id)
    if run.is_finished:
        return run
    _update(run.pk, status=JobStatus.RUNNING, phase="loading", started_at=timezone.now(), error="")
    try:
        if run.kind == ScoringKind.SYSTEM:
            results, signature = _score_system(run)
        elif run.kind == ScoringKind.PARAPHRASES:
            results, signature = _score_paraphrases(run)
        else:
            results, signature = _score_agreement(run)
    except (StudyImportError, ValueError, ValidationError) as exc:
        message = exc.describe() if isinstance(exc, StudyImportError) else "; ".join(getattr(exc, "messages", [str(exc)]))
        _update(run.pk, status=JobStatus.FAILED, phase="failed", error=message, finished_at=timezone.now())
    except DatabaseError:
        raise  # the database went away: the task retries (see tasks.py), the run stays unfinished
    except Exception as exc:  # keep the page honest about crashes, then let Celery log them
        logger.exception("scoring run %s crashed", run.pk)
        _update(run.pk, status=JobStatus.FAILED, phase="failed", error=f"internal error: {exc!r}", finished_at=timezone.now())
        raise
    else:
        _update(run.pk, status=JobStatus.SUCCEEDED, phase="done", results=results, signature=signature[:255],
                finished_at=timezone.now())
    run.refresh_from_db()
    return run


def _progress(run: ScoringRun, done: int, total: int, phase: str) -> None:
    _update(run.pk, progress_done=done, progress_total=total, phase=phase)


def _link_dict(scores: LinkScores) -> dict:
    return {"link_precision": _nan_none(scores.precision), "link_recall": _nan_none(scores.recall),
            "link_f1": _nan_none(scores.f1), "aer": _nan_none(scores.aer)}


def _score_system(run: ScoringRun) -> tuple[dict, str]:
    """Link scores, AlignPrec/AlignRecall, a breakdown by phrase length, and per-pair rows."""
    if run.system is None:
        raise ValueError("the system of this run was deleted")
    p = run.parameters
    max_len, use_possible = p.get("max_len", 5), p.get("use_possible", True)
    gold = selectors.gold_alignments(study=run.study)
    test = selectors.system_alignments(system=run.system)
    pairs = [pair for pair in selectors.pairs_for_study(study=run.study) if pair.pk in gold]
    scored = [pair for pair in pairs if pair.pk in test]
    if not scored:
        raise ValueError(f"system '{run.system.name}' has no alignment for any pair with a gold alignment")
    total = len(scored)
    per_pair, by_len = [], {n: [0, 0, 0] for n in range(1, max_len + 1)}
    for k, pair in enumerate(scored):
        g, t = gold[pair.pk], test[pair.pk]
        lc = link_counts(g, t)
        ac = align_counts(g, t, max_len=max_len, use_possible=use_possible)
        ls = LinkScores.from_counts(lc, 1)
        pm = phrase_pairs(g, max_len=max_len, use_possible=use_possible)
        ps = phrase_pairs(t, max_len=max_len, use_possible=use_possible)
        # ParaMetric's Table 3 sorts paraphrases by the length of the phrase in
        # sentence 1; AlignPrec/AlignRecall by length follow the same rule.
        for pp in ps:
            by_len[pp.end1 - pp.start1][0] += 1
        for pp in pm:
            by_len[pp.end1 - pp.start1][1] += 1
        for pp in ps & pm:
            by_len[pp.end1 - pp.start1][2] += 1
        per_pair.append({
            "pair_id": pair.external_id, "group_id": pair.group.external_id, "len1": len(pair.tokens1), "len2": len(pair.tokens2),
            "n_test": lc.n_test, "n_sure": lc.n_sure, "n_possible": lc.n_possible, "test_sure": lc.test_sure,
            "test_possible": lc.test_possible, **_link_dict(ls),
            "pp_system": ac.n_system, "pp_manual": ac.n_manual, "pp_common": ac.n_common,
            "align_prec": _ratio(ac.n_common, ac.n_system), "align_recall": _ratio(ac.n_common, ac.n_manual),
        })
        if k % 25 == 0:
            _progress(run, k, total, "scoring pairs")
    _progress(run, total, total, "corpus scores")
    golds, tests = [gold[pair.pk] for pair in scored], [test[pair.pk] for pair in scored]
    link = link_scores(golds, tests)
    align = align_scores(golds, tests, max_len=max_len, use_possible=use_possible)
    summary = {
        **_link_dict(link),
        "align_prec": _nan_none(align.align_prec), "align_recall": _nan_none(align.align_recall), "align_f1": _nan_none(align.f1),
        "n_pairs": len(scored), "n_pairs_without_system": len(pairs) - len(scored), "n_pairs_with_gold": len(pairs),
    }
    by_length = [{"length": n, "pp_system": c[0], "pp_manual": c[1], "pp_common": c[2],
                  "align_prec": _ratio(c[2], c[0]), "align_recall": _ratio(c[2], c[1])} for n, c in by_len.items()]
    link_sig = f"link-aer|gold:annotators-combined|tok:{TOKENIZER_VERSION}|v:{SCORING_VERSION}"
    results = {
        "kind": run.kind, "system": run.system.name, "summary": summary,
        "link_counts": link.counts.to_dict(), "align_counts": align.counts.to_dict(),
        "by_length": by_length, "per_pair": per_pair,
        "signatures": {"link": link_sig, "align": align.signature},
    }
    return results, align.signature


def _score_paraphrases(run: ScoringRun) -> tuple[dict, str]:
    """LB-Precision and Rel-Recall of the uploaded table against the groups' gold."""
    p = run.parameters
    with run.table_file.open("rb") as fh:
        data = fh.read()
    _progress(run, 0, 1, "reading the table")
    table = _read_table(data, run.label)
    gold = selectors.gold_alignments(study=run.study)
    groups, pair_count = [], 0
    current: list[Alignment] = []
    current_gid = None
    for pair in selectors.pairs_for_study(study=run.study).order_by("group__position", "position"):
        if pair.group_id != current_gid:
            if current:
                groups.append(current)
            current, current_gid = [], pair.group_id
        if pair.pk in gold:
            current.append(gold[pair.pk])
            pair_count += 1
    if current:
        groups.append(current)
    _progress(run, 0, 1, "scoring")
    scores = paraphrase_scores(groups, table, max_len=p.get("max_len", 5), min_prob=p.get("min_prob", 0.0),
                               use_possible=p.get("use_possible", True))
    d = scores.to_dict()
    summary = {k: d[k] for k in ("lb_precision", "rel_recall", "n_posited", "n_correct", "n_reference", "n_groups")}
    summary |= {"n_pairs": pair_count, "n_table_entries": len(table)}
    results = {"kind": run.kind, "table": run.label, "summary": summary, "by_length": d["by_length"],
               "signatures": {"paraphrases": scores.signature}}
    return results, scores.signature


def _score_agreement(run: ScoringRun) -> tuple[dict, str]:
    """Per pair of annotators (and pooled): link P/R/F1/AER with the first as gold, Cohen's kappa over cells."""
    subs = selectors.submitted_alignments(study=run.study)
    names = dict(User.objects.filter(alignment_assignments__pair__study=run.study).values_list("id", "username").distinct())
    pairs = {pair.pk: pair for pair in selectors.pairs_for_study(study=run.study) if len(subs.get(pair.pk, {})) >= 2}
    if not pairs:
        raise ValueError("no pair has been submitted by two annotators yet")
    by_people: dict[tuple[int, int], tuple[list, list]] = {}
    for pid in sorted(pairs, key=lambda x: pairs[x].position):
        people = sorted(subs[pid], key=lambda uid: names.get(uid, ""))
        for x in range(len(people)):
            for y in range(x + 1, len(people)):
                a, b = by_people.setdefault((people[x], people[y]), ([], []))
                a.append(subs[pid][people[x]])
                b.append(subs[pid][people[y]])
    rows, all_a, all_b = [], [], []
    for n, ((ua, ub), (la, lb)) in enumerate(sorted(by_people.items(), key=lambda kv: (names[kv[0][0]], names[kv[0][1]]))):
        ag = annotator_agreement(la, lb)
        rows.append({"annotator_a": names[ua], "annotator_b": names[ub], **_agreement_dict(ag)})
        all_a += la
        all_b += lb
        _progress(run, n + 1, len(by_people), "annotator pairs")
    pooled = annotator_agreement(all_a, all_b)
    signature = f"agreement|kappa:cells-none/sure/possible|tok:{TOKENIZER_VERSION}|v:{SCORING_VERSION}"
    results = {"kind": run.kind, "summary": {**_agreement_dict(pooled), "n_pairs_distinct": len(pairs),
                                             "n_annotator_pairs": len(rows)},
               "annotator_pairs": rows, "signatures": {"agreement": signature}}
    return results, signature


def _agreement_dict(ag) -> dict:
    return {**_link_dict(ag.link), "kappa": _nan_none(ag.kappa), "kappa_linked": _nan_none(ag.kappa_linked),
            "observed": _nan_none(ag.observed), "n_pairs": ag.n_pairs, "n_cells": ag.n_cells}


def jobs_requeue_stale(*, stale_after=None, queued_after=None) -> int:
    """Send queued (and, with ``stale_after``, stalled running) scoring and aligner runs again.

    Each is a resent message: it runs only if it can claim its run (``config.recovery``).
    """
    from config.recovery import job_resend, jobs_to_resend

    from .tasks import aligner_run_task, scoring_run_task

    n = sum(job_resend(scoring_run_task, pk, stale_after=stale_after)
            for pk in jobs_to_resend(ScoringRun, stale_after=stale_after, queued_after=queued_after))
    return n + sum(job_resend(aligner_run_task, pk, stale_after=stale_after)
                   for pk in jobs_to_resend(AlignerRun, stale_after=stale_after, queued_after=queued_after))

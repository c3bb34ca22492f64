# Over 400 lines: this session's feature work (protocols, screening, field studies, speed) landed here; splitting it along its seams is issue 17's remaining step, done once so code moves only once.
"""Reads for judging: a judge's items (blinded), progress, the canonical judgments
frame, exclusions, QC and exports.

What a judge receives is built only by :func:`item_next_for_judge`,
:func:`item_for_judge` and :func:`item_previous_for_judge` as :class:`JudgeItem`
values, which hold texts, positions and opaque tokens — never a system, a control
kind, an expected score or a database id.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import groupby, islice

import numpy as np
import pandas as pd
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Count, Max, Q

from annotation.enums import Role, StudyStatus, SystemKind
from annotation.models import Original, Study
from metrics.core.stats.qc import judge_qc as _judge_qc
from metrics.core.stats.results import JudgeQC

from .enums import CONTROL_KIND_OF_SYSTEM_KIND
from .errors import ItemNotFound
from .models import Assignment, AssignmentItem, ComparisonItem, ComparisonJudgment, JudgeExclusion, JudgingDesign, Judgment
from .tokens import serve_stamp_make

#: Straight-lining: one value for at least this share of a criterion's scores, among
#: judges with at least this many scores (the QC page and :func:`judge_qc` agree).
STRAIGHTLINE_THRESHOLD = 0.9
STRAIGHTLINE_MIN_SCORES = 10

JUDGMENT_FRAME_COLUMNS = ("judge", "item", "original", "system", "is_control", "control_kind", "criterion", "score",
                          "seconds", "submitted_at")


# --- the judge's side -------------------------------------------------------------------

@dataclass(frozen=True)
class JudgeItem:
    """One item as a judge sees it. Safe to render or serialise for the judge."""

    token: str
    position: int
    total: int
    done: int
    original: str
    paraphrase: str
    scores: dict[str, int | float] | None  # the latest values when the item was rated before
    revision: int  # how many times it was rated (0: not yet)
    previous_token: str | None
    serve_stamp: str
    # Document context (when the design shows it): the originals just before and after
    # this one in the same document, in import order. ``context_shown`` says whether the
    # design shows context at all, so the page can say "no context for this item".
    context_shown: bool = False
    context_before: tuple[str, ...] = ()
    context_after: tuple[str, ...] = ()

    @property
    def is_revision(self) -> bool:
        return self.revision > 0

    @property
    def has_context(self) -> bool:
        return bool(self.context_before or self.context_after)


#: Sentences of context on each side of an item's original.
CONTEXT_SENTENCES = 2


def original_context(original: Original) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The texts of up to :data:`CONTEXT_SENTENCES` originals before and after ``original``
    in its document (same study and ``document``, by import position); empty without a document."""
    if not original.document:
        return (), ()
    same = Original.objects.filter(study_id=original.study_id, document=original.document)
    before = list(same.filter(position__lt=original.position).order_by("-position")
                  .values_list("text", flat=True)[:CONTEXT_SENTENCES])
    after = list(same.filter(position__gt=original.position).order_by("position")
                 .values_list("text", flat=True)[:CONTEXT_SENTENCES])
    return tuple(reversed(before)), tuple(after)


def design_for_study(*, study: Study) -> JudgingDesign | None:
    return JudgingDesign.objects.filter(study=study).first()


def study_is_comparison(*, study: Study) -> bool:
    """Whether the study is judged side by side (:mod:`.comparison`) rather than absolutely."""
    return JudgingDesign.objects.filter(study=study, protocol="comparison").exists()


def assignment_for_judge(*, study: Study, judge: User) -> Assignment | None:
    return Assignment.objects.filter(study=study, judge=judge).first()


def assignment_done_count(*, assignment: Assignment) -> int:
    return AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=False).count()


def _items_with_texts():
    return AssignmentItem.objects.select_related("candidate__original").defer(
        "candidate__created_at", "candidate__updated_at", "candidate__original__reference")


def _judge_item(item: AssignmentItem, *, assignment: Assignment, done: int) -> JudgeItem:
    """``item`` must come from :func:`_items_with_texts` (its texts are loaded with it)."""
    latest = Judgment.objects.filter(item=item, is_latest=True).first() if item.done_at is not None else None
    previous = None
    if item.position > 1:
        previous = AssignmentItem.objects.filter(assignment=assignment, position=item.position - 1).values_list(
            "token", flat=True).first()
    cand = item.candidate
    shown = bool(JudgingDesign.objects.filter(study_id=assignment.study_id, show_context=True).exists())
    before, after = original_context(cand.original) if shown else ((), ())
    return JudgeItem(
        token=item.token, position=item.position, total=assignment.n_items, done=done,
        original=cand.original.text, paraphrase=cand.text,
        scores=latest.scores if latest else None, revision=latest.revision if latest else 0,
        previous_token=previous, serve_stamp=serve_stamp_make(item.token),
        context_shown=shown, context_before=before, context_after=after,
    )


def item_next_for_judge(*, assignment: Assignment) -> JudgeItem | None:
    """The first item in the judge's order not yet rated (None when all are rated).

    This is the resume point: it lives in the database, so a reload or another
    device continues exactly here.
    """
    item = _items_with_texts().filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
    if item is None:
        return None
    return _judge_item(item, assignment=assignment, done=assignment_done_count(assignment=assignment))


# --- the judge's hot path ---------------------------------------------------------------
#
# ``items/next`` and the submit are what every judge calls every few seconds. Building
# and compiling an ORM query costs 0.5–2.5 ms of CPU (more than PostgreSQL spends
# answering it), so the reads below are fixed SQL strings, portable between
# PostgreSQL and SQLite and written once per process from the models' table names.
# Each one is one round trip. Their results equal the ORM selectors' above (the tests
# of the judging API pin the answers and the number of queries).

_HOT_SQL: dict[str, str] = {}


def _hot_sql(name: str) -> str:
    if not _HOT_SQL:
        from annotation.models import Candidate, StudyMembership

        t = {"study": Study._meta.db_table, "member": StudyMembership._meta.db_table,
             "assignment": Assignment._meta.db_table, "item": AssignmentItem._meta.db_table,
             "design": JudgingDesign._meta.db_table, "candidate": Candidate._meta.db_table,
             "original": Original._meta.db_table}
        _HOT_SQL["study"] = (
            "SELECT s.*, EXISTS(SELECT 1 FROM {member} a WHERE a.study_id = s.id AND a.user_id = %s AND a.role = %s)"
            " AS judge_also_annotates FROM {study} s WHERE s.id = %s AND EXISTS(SELECT 1 FROM {member} m"
            " WHERE m.study_id = s.id AND m.user_id = %s AND m.role = %s)").format(**t)
        # The assignment once it is the judge's: built late for them, or the design is frozen
        # (the rule of services.assignment_ensure_for_judge, which handles every other case).
        _HOT_SQL["assignment"] = (
            "SELECT a.* FROM {assignment} a WHERE a.study_id = %s AND a.judge_id = %s AND (a.joined_late OR"
            " EXISTS(SELECT 1 FROM {design} g WHERE g.study_id = a.study_id AND g.opened_at IS NOT NULL))").format(**t)
        _HOT_SQL["next"] = (
            "SELECT i.token, i.position, c.text, o.text, o.id, o.document, o.position,"
            " (SELECT COUNT(*) FROM {item} d WHERE d.assignment_id = i.assignment_id AND d.done_at IS NOT NULL),"
            " (SELECT p.token FROM {item} p WHERE p.assignment_id = i.assignment_id AND p.position = i.position - 1),"
            " EXISTS(SELECT 1 FROM {design} g WHERE g.study_id = %s AND g.show_context)"
            " FROM {item} i JOIN {candidate} c ON c.id = i.candidate_id JOIN {original} o ON o.id = c.original_id"
            " WHERE i.assignment_id = %s AND i.done_at IS NULL ORDER BY i.position LIMIT 1").format(**t)
        _HOT_SQL["done"] = "SELECT COUNT(*) FROM {item} WHERE assignment_id = %s AND done_at IS NOT NULL".format(**t)
    return _HOT_SQL[name]


def study_for_judge(*, study_id: int, judge: User) -> Study | None:
    """The study if ``judge`` is one of its judges, else None; one query. The study's
    ``judge_also_annotates`` says whether the account is also an annotator of it
    (:func:`annotation.selectors.user_role_conflict`: such an account is held out)."""
    rows = list(Study.objects.raw(_hot_sql("study"), [judge.pk, Role.ANNOTATOR.value, study_id, judge.pk, Role.JUDGE.value]))
    if not rows:
        return None
    study = rows[0]
    study.judge_also_annotates = bool(study.judge_also_annotates)
    return study


def assignment_ready_for_judge(*, study: Study, judge: User) -> Assignment | None:
    """The judge's assignment if it exists and is theirs to judge (built late for them,
    or the study's opening has finished); else None, and
    ``services.assignment_ensure_for_judge`` decides (and may build it). One query."""
    rows = list(Assignment.objects.raw(_hot_sql("assignment"), [study.pk, judge.pk]))
    return rows[0] if rows else None


def assignment_done_count_fast(*, assignment: Assignment) -> int:
    """:func:`assignment_done_count` without building an ORM query (the submit's answer)."""
    with connection.cursor() as cursor:
        cursor.execute(_hot_sql("done"), [assignment.pk])
        return cursor.fetchone()[0]


def item_next_for_judge_fast(*, assignment: Assignment) -> JudgeItem | None:
    """:func:`item_next_for_judge` in one query: the item, its texts, the judge's done
    count, the token before it and whether the design shows context (the context
    itself, when shown, is read as :func:`original_context` does)."""
    with connection.cursor() as cursor:
        cursor.execute(_hot_sql("next"), [assignment.study_id, assignment.pk])
        row = cursor.fetchone()
    if row is None:
        return None
    token, position, paraphrase, original, original_id, document, original_position, done, previous, shown = row
    shown = bool(shown)
    before, after = original_context(Original(pk=original_id, study_id=assignment.study_id, document=document,
                                              position=original_position)) if shown else ((), ())
    return JudgeItem(
        token=token, position=position, total=assignment.n_items, done=done, original=original,
        paraphrase=paraphrase, scores=None, revision=0, previous_token=previous if position > 1 else None,
        serve_stamp=serve_stamp_make(token), context_shown=shown, context_before=before, context_after=after)


def _own_item(*, study: Study, judge: User, token: str) -> tuple[AssignmentItem, Assignment]:
    item = (_items_with_texts().select_related("assignment")
            .filter(token=token, assignment__study=study, assignment__judge=judge).first()
            if isinstance(token, str) else None)
    if item is None:
        raise ItemNotFound("There is no such item in your assignment for this study.")
    return item, item.assignment


def item_for_judge(*, study: Study, judge: User, token: str) -> JudgeItem:
    """One item of this judge's assignment (to revise it). :class:`ItemNotFound` otherwise."""
    item, assignment = _own_item(study=study, judge=judge, token=token)
    return _judge_item(item, assignment=assignment, done=assignment_done_count(assignment=assignment))


def item_previous_for_judge(*, study: Study, judge: User, token: str | None = None) -> JudgeItem | None:
    """The item before ``token`` — or, without a token, before the resume point (the
    last item when all are rated). None at the start of the order."""
    if token is not None:
        item, assignment = _own_item(study=study, judge=judge, token=token)
        position = item.position - 1
    else:
        assignment = assignment_for_judge(study=study, judge=judge)
        if assignment is None:
            raise ItemNotFound("You have no assignment in this study.")
        nxt = AssignmentItem.objects.filter(assignment=assignment, done_at__isnull=True).order_by("position").first()
        position = (nxt.position if nxt else assignment.n_items + 1) - 1
    if position < 1:
        return None
    prev = _items_with_texts().get(assignment=assignment, position=position)
    return _judge_item(prev, assignment=assignment, done=assignment_done_count(assignment=assignment))


def studies_for_judge(*, judge: User) -> list[dict]:
    """The judge's studies with their status and the judge's progress, open ones first."""
    studies = Study.objects.filter(memberships__user=judge, memberships__role=Role.JUDGE).distinct()
    assignments = {a.study_id: a for a in Assignment.objects.filter(judge=judge)}
    done = dict(AssignmentItem.objects.filter(assignment__judge=judge, done_at__isnull=False)
                .values("assignment__study_id").annotate(n=Count("id")).values_list("assignment__study_id", "n"))
    # Side-by-side studies count answered pairs instead (a study has one kind or the other).
    done |= dict(ComparisonItem.objects.filter(assignment__judge=judge, done_at__isnull=False)
                 .values("assignment__study_id").annotate(n=Count("id")).values_list("assignment__study_id", "n"))
    rows = []
    for s in studies:
        a = assignments.get(s.pk)
        rows.append({"study": s, "is_open": s.status == StudyStatus.OPEN, "assignment": a,
                     "done": done.get(s.pk, 0), "total": a.n_items if a else 0})
    rows.sort(key=lambda r: (not r["is_open"], r["study"].name))
    return rows


# --- the researcher's side --------------------------------------------------------------

def study_has_judgments(*, study: Study) -> bool:
    return (Judgment.objects.filter(study=study).exists()
            or ComparisonJudgment.objects.filter(study=study).exists())


def study_progress(*, study: Study) -> dict:
    """Per judge: done/total and last submission; per system: items and latest judgments.

    Returns ``{"judges": [...], "systems": [...], "done": n, "total": n, "judgments": n,
    "revisions": n, "status": str}``.
    """
    judges = []
    excluded = judges_excluded(study=study)
    per_assignment = (
        Assignment.objects.filter(study=study).select_related("judge")
        .annotate(done=Count("items", filter=Q(items__done_at__isnull=False)))
        .order_by("judge__username"))
    last = dict(Judgment.objects.filter(study=study).values("judge_id").annotate(t=Max("submitted_at"))
                .values_list("judge_id", "t"))
    # Side-by-side studies count answered pairs (their assignments hold pairs, not items).
    cmp_done = dict(ComparisonItem.objects.filter(assignment__study=study, done_at__isnull=False)
                    .values("assignment_id").annotate(n=Count("id")).values_list("assignment_id", "n"))
    for a in per_assignment:
        a.done += cmp_done.get(a.pk, 0)
        judges.append({"judge": a.judge.username, "done": a.done, "total": a.n_items,
                       "percent": int(100 * a.done / a.n_items) if a.n_items else 0,
                       "last_submitted_at": last.get(a.judge_id), "excluded": a.judge.username in excluded,
                       "joined_late": a.joined_late})
    assigned_users = {a.judge_id for a in per_assignment}
    waiting = list(User.objects.filter(study_memberships__study=study, study_memberships__role=Role.JUDGE)
                   .exclude(pk__in=assigned_users).distinct().order_by("username").values_list("username", flat=True))
    assigned = dict(AssignmentItem.objects.filter(assignment__study=study).values("candidate__system__name")
                    .annotate(n=Count("id")).values_list("candidate__system__name", "n"))
    rated = dict(Judgment.objects.filter(study=study, is_latest=True).values("item__candidate__system__name")
                 .annotate(n=Count("id")).values_list("item__candidate__system__name", "n"))
    systems = []
    for name, kind in study.systems.order_by("kind", "name").values_list("name", "kind"):
        systems.append({"system": name, "kind": kind, "is_control": kind in SystemKind.control_kinds(),
                        "assigned": assigned.get(name, 0), "rated": rated.get(name, 0)})
    totals = Judgment.objects.filter(study=study).aggregate(n=Count("id"), latest=Count("id", filter=Q(is_latest=True)))
    return {
        "status": study.status,
        "judges": judges,
        "judges_without_assignment": waiting,
        "systems": systems,
        "done": sum(j["done"] for j in judges),
        "total": sum(j["total"] for j in judges),
        "judgments": totals["latest"],
        "revisions": totals["n"] - totals["latest"],
    }


def _frame_queryset(study: Study):
    """One row per latest judgment, in the frame's order (judge, candidate): username,
    candidate id, original's external id, system name and kind, the values map,
    seconds, submitted_at."""
    return (Judgment.objects.filter(study=study, is_latest=True)
            .order_by("judge__username", "item__candidate_id")
            .values_list("judge__username", "item__candidate_id", "item__candidate__original__external_id",
                         "item__candidate__system__name", "item__candidate__system__kind",
                         "values", "seconds", "submitted_at"))


#: Rows fetched per database round trip by the CSV exports, which stream: their memory
#: does not grow with the study.
EXPORT_CHUNK_SIZE = 2_000


def _export_rows(study: Study) -> Iterator[tuple]:
    """The latest judgments, by judge then item, read in chunks (for the tidy export);
    screened-out judges' judgments are kept apart (not exported)."""
    return (
        Judgment.objects.filter(study=study, is_latest=True).exclude(item__assignment__screened_out_at__isnull=False)
        .order_by("judge__username", "item__candidate_id")
        .values_list("judge__username", "item__candidate_id", "item__candidate__original__external_id",
                     "item__candidate__system__name", "item__candidate__system__kind",
                     "values", "seconds", "submitted_at", "revision", "active_seconds")
        .iterator(chunk_size=EXPORT_CHUNK_SIZE))


#: Judgments read per database round trip by :func:`judgments_frame` (bounds its
#: transient Python objects: one tuple and a few strings per judgment in a chunk).
FRAME_CHUNK_SIZE = 20_000


def _missing_like_pandas() -> object:
    """What pandas puts for a None among strings after inferring the column and casting
    it back to object: None under pandas 2, NaN under pandas 3's string inference. The
    frame was first built by ``from_records``, so its ``control_kind`` holds this value
    for non-controls in a frame that also has controls (and None in one without)."""
    return pd.DataFrame.from_records([("x",), (None,)], columns=["k"]).astype(object)["k"].iloc[1]


class _Codes(dict):
    """Value → dense integer code, in order of first appearance."""

    def codes(self, values) -> np.ndarray:
        get = self.setdefault
        return np.fromiter((get(v, len(self)) for v in values), dtype=np.int64, count=len(values))

    def values_array(self) -> np.ndarray:
        out = np.empty(len(self), dtype=object)
        out[:] = list(self)
        return out


def _object_series(values: np.ndarray) -> pd.Series:
    # dtype=object explicitly: pandas 3 would otherwise infer its own string dtype.
    return pd.Series(values, dtype=object, copy=False)


def judgments_frame(*, study: Study, include_excluded_judges: bool = False) -> pd.DataFrame:
    """The study's judgments in the canonical tidy shape (``metrics.core.stats.data``).

    One row per (judge, item, criterion) from each item's *latest* revision, with
    columns ``judge`` (username), ``item`` (str of the candidate's id: the same item
    for every judge), ``original`` (the original's external id), ``system`` (system
    name), ``is_control`` (bool), ``control_kind`` ("identical"/"random"/"unigram";
    missing for other systems: None, or NaN under pandas 3 when the frame has
    controls), ``criterion`` (slug), ``score`` (int), ``seconds`` (float, server time
    from serving to submitting), ``submitted_at`` (aware datetime). Judges excluded
    by a researcher are left out unless ``include_excluded_judges``. Sorted by judge,
    item, criterion order.

    Built column-wise: the rows are read in chunks of :data:`FRAME_CHUNK_SIZE` from one
    query into typed arrays (strings as codes into their distinct values), then spread
    over the criteria; string columns hold references to one Python string per
    distinct value, not one per row.
    """
    excluded = set() if include_excluded_judges else judges_excluded(study=study)
    qs = _frame_queryset(study)
    if excluded:
        qs = qs.exclude(judge__username__in=excluded)
    judges, originals, systems = _Codes(), _Codes(), _Codes()
    # Per judgment: its codes, then how many criteria it has values for (a page or API
    # judgment has all of them; an imported one may lack some), so the per-judgment
    # columns are repeated by that count instead of a fixed four.
    parts: dict[str, list] = {"judge": [], "cand": [], "original": [], "system": [], "crit": [], "score": [],
                              "n": [], "seconds": [], "submitted_at": []}
    order = study_criteria_slugs(study=study)
    rank = {c: i for i, c in enumerate(order)}
    rows = iter(qs.iterator(chunk_size=FRAME_CHUNK_SIZE))
    while chunk := list(islice(rows, FRAME_CHUNK_SIZE)):
        cols = list(zip(*chunk))
        del chunk
        n = len(cols[0])
        parts["judge"].append(judges.codes(cols[0]))
        parts["cand"].append(np.fromiter(cols[1], dtype=np.int64, count=n))
        parts["original"].append(originals.codes(cols[2]))
        parts["system"].append(systems.codes(list(zip(cols[3], cols[4]))))
        crit, score, counts = [], [], np.empty(n, dtype=np.int64)
        for i, values in enumerate(cols[5]):
            for c in values:
                if c not in rank:  # a value for a criterion no longer in the design: kept, after the others
                    rank[c] = len(rank)
            present = sorted(values, key=rank.__getitem__)
            counts[i] = len(present)
            for c in present:
                crit.append(rank[c])
                score.append(values[c])
        parts["crit"].append(np.array(crit, dtype=np.int64))
        parts["score"].append(np.array(score, dtype=np.float64))
        parts["n"].append(counts)
        parts["seconds"].append(np.array([np.nan if v is None else v for v in cols[6]], dtype=np.float64))
        # The same inference from_records applies to a column of aware datetimes.
        parts["submitted_at"].append(pd.Series(cols[7], dtype=None))
        del cols
    if not parts["judge"] or not sum(len(c) for c in parts["crit"]):
        frame = pd.DataFrame.from_records([], columns=list(JUDGMENT_FRAME_COLUMNS))
        return frame.astype({"judge": object, "item": object, "original": object, "system": object,
                             "is_control": bool, "control_kind": object, "criterion": object, "score": "int64",
                             "seconds": "float64"})
    repeats = np.concatenate(parts.pop("n"))

    def per_row(name: str) -> np.ndarray:
        return np.repeat(np.concatenate(parts.pop(name)), repeats)

    cand_ids, cand_codes = np.unique(np.concatenate(parts.pop("cand")), return_inverse=True)
    item_names = np.empty(len(cand_ids), dtype=object)
    item_names[:] = [str(c) for c in cand_ids.tolist()]
    system_kinds = [CONTROL_KIND_OF_SYSTEM_KIND.get(kind) for _name, kind in systems]
    system_names = np.empty(len(systems), dtype=object)
    system_names[:] = [name for name, _kind in systems]
    system_is_control = np.array([k is not None for k in system_kinds], dtype=bool)
    missing = _missing_like_pandas() if system_is_control.any() else None
    system_control_kind = np.empty(len(systems), dtype=object)
    system_control_kind[:] = [missing if k is None else k for k in system_kinds]
    system_codes = per_row("system")
    submitted = pd.concat(parts.pop("submitted_at"), ignore_index=True)
    criteria = np.empty(len(rank), dtype=object)
    criteria[:] = sorted(rank, key=rank.get)
    scores = np.concatenate(parts.pop("score"))
    columns = {
        "judge": _object_series(judges.values_array()[per_row("judge")]),
        "item": _object_series(item_names[np.repeat(cand_codes, repeats)]),
        "original": _object_series(originals.values_array()[per_row("original")]),
        "system": _object_series(system_names[system_codes]),
        "is_control": pd.Series(system_is_control[system_codes], copy=False),
        "control_kind": _object_series(system_control_kind[system_codes]),
        "criterion": _object_series(criteria[np.concatenate(parts.pop("crit"))]),
        # Whole numbers (points, categories, whole slider values) stay int64 as before.
        "score": pd.Series(scores.astype(np.int64) if np.all(np.mod(scores, 1) == 0) else scores, copy=False),
        "seconds": pd.Series(per_row("seconds"), copy=False),
        "submitted_at": submitted.repeat(repeats).reset_index(drop=True),
    }
    del system_codes, submitted, cand_codes
    return pd.DataFrame(columns, columns=list(JUDGMENT_FRAME_COLUMNS), copy=False)


def study_criteria(*, study: Study) -> list[dict]:
    """The study's criteria with their scales (PEM's four on 1–5 when it has no design)."""
    design = design_for_study(study=study)
    if design is None:
        from .defaults import default_criteria

        return default_criteria()
    return design.criteria


def study_criteria_slugs(*, study: Study) -> list[str]:
    return [c["slug"] for c in study_criteria(study=study)]


def study_control_expected(*, study: Study) -> dict[str, dict[str, int | float]]:
    """Expected value per control kind and criterion, from the design (PEM's defaults if none).

    Criteria whose expected value is unknown (a non-PEM criterion nobody filled in) are
    left out: their controls are judged, but QC and the human reference have no fixed
    value for them there."""
    design = design_for_study(study=study)
    if design is None:
        from .defaults import default_expected_scores

        return default_expected_scores()
    return {k: {c: v for c, v in scores.items() if v is not None} for k, scores in design.expected_scores.items()}


def judges_excluded(*, study: Study) -> set[str]:
    """Usernames of judges whose latest exclusion decision is 'excluded', and of judges
    screened out (training, attention checks, automatic QC: never counted)."""
    state: dict[str, bool] = {}
    for username, excluded in (JudgeExclusion.objects.filter(study=study)
                               .order_by("judge__username", "-created_at", "-id")
                               .values_list("judge__username", "excluded")):
        state.setdefault(username, excluded)
    return {u for u, e in state.items() if e} | judges_screened_out_names(study=study)


def judges_screened_out_names(*, study: Study) -> set[str]:
    return set(Assignment.objects.filter(study=study, screened_out_at__isnull=False)
               .values_list("judge__username", flat=True))


def judge_exclusion_history(*, study: Study) -> list[JudgeExclusion]:
    return list(JudgeExclusion.objects.filter(study=study).select_related("judge", "decided_by")
                .order_by("-created_at", "-id"))


def judgments_fingerprint(*, study: Study) -> str:
    """A short hash that changes whenever a judgment is added or revised, a judge is
    excluded or re-included, or the controls' expected scores change.

    Reports built from :func:`judgments_frame` store it and compare to know they are stale.
    """
    j = Judgment.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    e = JudgeExclusion.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    parts = {"judgments": [j["n"], j["last"]], "exclusions": [e["n"], e["last"]],
             "expected": study_control_expected(study=study)}
    c = ComparisonJudgment.objects.filter(study=study).aggregate(n=Count("id"), last=Max("id"))
    if c["n"]:  # only side-by-side studies: absolute studies keep their fingerprints
        parts["comparisons"] = [c["n"], c["last"]]
    screened = sorted(judges_screened_out_names(study=study))
    if screened:  # only when there are some, so earlier fingerprints stay valid
        parts["screened_out"] = screened
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def judge_qc(*, study: Study) -> list[dict]:
    """Quality control per judge (``metrics.core.stats.qc.judge_qc``) with exclusion state.

    Every judge with an assignment appears, including excluded ones (so the
    researcher can re-include them). Returns dicts ``{"judge", "excluded", "qc"}``
    where ``qc`` is a :class:`JudgeQC` or None for a judge who has rated nothing.
    """
    design = design_for_study(study=study)
    alpha = design.qc_alpha if design else 0.05
    frame = judgments_frame(study=study, include_excluded_judges=True)
    results: dict[str, JudgeQC] = {}
    if len(frame):
        results = {r.judge: r for r in _judge_qc(
            frame, control_expected=study_control_expected(study=study), alpha=alpha,
            straightline_threshold=STRAIGHTLINE_THRESHOLD, min_scores_for_straightlining=STRAIGHTLINE_MIN_SCORES)}
    excluded = judges_excluded(study=study)
    screened = {u: (rule, reason) for u, rule, reason in Assignment.objects.filter(
        study=study, screened_out_at__isnull=False).values_list(
        "judge__username", "screened_out_rule", "screened_out_reason")}
    names = sorted(set(Assignment.objects.filter(study=study).values_list("judge__username", flat=True)) | set(results))
    return [{"judge": n, "excluded": n in excluded, "qc": results.get(n),
             "screened_out": screened.get(n)} for n in names]


# --- exports ------------------------------------------------------------------------------

TIDY_EXPORT_COLUMNS = ("study", "judge", "item", "original_id", "system", "is_control", "control_kind", "criterion",
                       "score", "seconds", "active_seconds", "submitted_at", "revision", "judge_excluded")


def _iso(dt: datetime | None) -> str:
    return dt.isoformat() if dt else ""


def export_tidy_rows(*, study: Study) -> Iterator[list]:
    """Header, then one row per judge × item × criterion the judgment has a value for
    (latest revisions, every judge), criteria in the design's order.

    Streams: judgments are read from the database in chunks as the rows are written."""
    excluded = judges_excluded(study=study)
    order = study_criteria_slugs(study=study)
    yield list(TIDY_EXPORT_COLUMNS)
    for (judge, cand, original, system, kind, values, seconds, submitted_at, rev, active) in _export_rows(study):
        control_kind = CONTROL_KIND_OF_SYSTEM_KIND.get(kind, "")
        for crit in order:
            if crit not in values:
                continue
            yield [study.name, judge, cand, original, system, str(bool(control_kind)).lower(), control_kind, crit,
                   values[crit], "" if seconds is None else f"{seconds:.3f}",
                   "" if active is None else f"{active:.3f}", _iso(submitted_at), rev, str(judge in excluded).lower()]


def export_wide_rows(*, study: Study) -> Iterator[list]:
    """Header, then one row per item: its texts and a column ``judge:criterion`` per
    judge × criterion of the design (empty where that judge gave the item no value).

    Streams: judgments are read in item order, in chunks, and each item's row is
    written once its judgments have been read."""
    latest = Judgment.objects.filter(study=study, is_latest=True).exclude(
        item__assignment__screened_out_at__isnull=False)  # screened-out judges are kept apart
    judges = sorted(set(latest.values_list("judge__username", flat=True).distinct()))
    order = study_criteria_slugs(study=study)
    yield ["study", "item", "original_id", "system", "is_control", "control_kind", "original", "candidate",
           *[f"{j}:{c}" for j in judges for c in order]]
    rows = (latest.order_by("item__candidate__original__position", "item__candidate__original__external_id",
                            "item__candidate__system__name", "item__candidate_id", "judge__username")
            .values_list("item__candidate_id", "judge__username", "values",
                         "item__candidate__original__external_id", "item__candidate__system__name",
                         "item__candidate__system__kind", "item__candidate__original__text", "item__candidate__text")
            .iterator(chunk_size=EXPORT_CHUNK_SIZE))
    for cand, group in groupby(rows, key=lambda r: r[0]):
        scores: dict[str, dict] = {}
        for r in group:
            scores[r[1]] = r[2]
            external_id, system, kind, original_text, candidate_text = r[3:]
        control_kind = CONTROL_KIND_OF_SYSTEM_KIND.get(kind, "")
        cells = []
        for j in judges:
            values = scores.get(j, {})
            cells.extend(values.get(c, "") for c in order)
        yield [study.name, cand, external_id, system, str(bool(control_kind)).lower(), control_kind,
               original_text, candidate_text, *cells]

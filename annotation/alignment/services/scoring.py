"""Writes: scoring runs (a system against the gold, a paraphrase table, annotator agreement).

The request queues a run (:func:`~.queueing.scoring_run_create`); the worker computes and
stores its results (:func:`scoring_run_execute`) with ``metrics.core.alignment_scoring``.
"""

from __future__ import annotations

import logging
import math

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import DatabaseError
from django.utils import timezone

from annotation.importing.reading import ImportIssue, StudyImportError, decode_utf8
from config.jobs.enums import JobStatus
from metrics.core.alignment.model import Alignment, FormatError
from metrics.core.alignment_scoring._shared import SCORING_VERSION
from metrics.core.alignment_scoring.agreement import annotator_agreement
from metrics.core.alignment_scoring.links import LinkScores, link_counts, link_scores
from metrics.core.alignment_scoring.paraphrases import paraphrase_scores, read_paraphrase_table
from metrics.core.alignment_scoring.phrases import align_counts, align_scores, phrase_pairs
from metrics.core.text import TOKENIZER_VERSION

from .. import selectors
from ..enums import ScoringKind
from ..models import ScoringRun

# The logger's name from before the split into modules, so that log filters keep matching.
logger = logging.getLogger("annotation.alignment.services")


def read_phrase_table(data: bytes, filename: str):
    text = decode_utf8(data, filename)
    try:
        return read_paraphrase_table(text)
    except FormatError as exc:
        raise StudyImportError(
            filename, [ImportIssue(exc.message, line=exc.line, column=None if exc.column is None else str(exc.column))]
        ) from None


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
        message = (
            exc.describe() if isinstance(exc, StudyImportError) else "; ".join(getattr(exc, "messages", [str(exc)]))
        )
        _update(
            run.pk, status=JobStatus.FAILED, phase="failed", error=message, table_data=b"", finished_at=timezone.now()
        )
    except DatabaseError:
        raise  # the database went away: the task retries (see tasks.py), the run stays unfinished
    except Exception as exc:  # keep the page honest about crashes, then let Celery log them
        logger.exception("scoring run %s crashed", run.pk)
        _update(
            run.pk,
            status=JobStatus.FAILED,
            phase="failed",
            error=f"internal error: {exc!r}",
            table_data=b"",
            finished_at=timezone.now(),
        )
        raise
    else:
        _update(
            run.pk,
            status=JobStatus.SUCCEEDED,
            phase="done",
            table_data=b"",
            results=results,
            signature=signature[:255],
            finished_at=timezone.now(),
        )
    run.refresh_from_db()
    return run


def _progress(run: ScoringRun, done: int, total: int, phase: str) -> None:
    _update(run.pk, progress_done=done, progress_total=total, phase=phase)


def _link_dict(scores: LinkScores) -> dict:
    return {
        "link_precision": _nan_none(scores.precision),
        "link_recall": _nan_none(scores.recall),
        "link_f1": _nan_none(scores.f1),
        "aer": _nan_none(scores.aer),
    }


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
        per_pair.append(
            {
                "pair_id": pair.external_id,
                "group_id": pair.group.external_id,
                "len1": len(pair.tokens1),
                "len2": len(pair.tokens2),
                "n_test": lc.n_test,
                "n_sure": lc.n_sure,
                "n_possible": lc.n_possible,
                "test_sure": lc.test_sure,
                "test_possible": lc.test_possible,
                **_link_dict(ls),
                "pp_system": ac.n_system,
                "pp_manual": ac.n_manual,
                "pp_common": ac.n_common,
                "align_prec": _ratio(ac.n_common, ac.n_system),
                "align_recall": _ratio(ac.n_common, ac.n_manual),
            }
        )
        if k % 25 == 0:
            _progress(run, k, total, "scoring pairs")
    _progress(run, total, total, "corpus scores")
    golds, tests = [gold[pair.pk] for pair in scored], [test[pair.pk] for pair in scored]
    link = link_scores(golds, tests)
    align = align_scores(golds, tests, max_len=max_len, use_possible=use_possible)
    summary = {
        **_link_dict(link),
        "align_prec": _nan_none(align.align_prec),
        "align_recall": _nan_none(align.align_recall),
        "align_f1": _nan_none(align.f1),
        "n_pairs": len(scored),
        "n_pairs_without_system": len(pairs) - len(scored),
        "n_pairs_with_gold": len(pairs),
    }
    by_length = [
        {
            "length": n,
            "pp_system": c[0],
            "pp_manual": c[1],
            "pp_common": c[2],
            "align_prec": _ratio(c[2], c[0]),
            "align_recall": _ratio(c[2], c[1]),
        }
        for n, c in by_len.items()
    ]
    link_sig = f"link-aer|gold:annotators-combined|tok:{TOKENIZER_VERSION}|v:{SCORING_VERSION}"
    results = {
        "kind": run.kind,
        "system": run.system.name,
        "summary": summary,
        "link_counts": link.counts.to_dict(),
        "align_counts": align.counts.to_dict(),
        "by_length": by_length,
        "per_pair": per_pair,
        "signatures": {"link": link_sig, "align": align.signature},
    }
    return results, align.signature


def _score_paraphrases(run: ScoringRun) -> tuple[dict, str]:
    """LB-Precision and Rel-Recall of the uploaded table against the groups' gold."""
    p = run.parameters
    data = _table_bytes(run)
    _progress(run, 0, 1, "reading the table")
    table = read_phrase_table(data, run.label)
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
    scores = paraphrase_scores(
        groups,
        table,
        max_len=p.get("max_len", 5),
        min_prob=p.get("min_prob", 0.0),
        use_possible=p.get("use_possible", True),
    )
    d = scores.to_dict()
    summary = {k: d[k] for k in ("lb_precision", "rel_recall", "n_posited", "n_correct", "n_reference", "n_groups")}
    summary |= {"n_pairs": pair_count, "n_table_entries": len(table)}
    results = {
        "kind": run.kind,
        "table": run.label,
        "summary": summary,
        "by_length": d["by_length"],
        "signatures": {"paraphrases": scores.signature},
    }
    return results, scores.signature


def _table_bytes(run: ScoringRun) -> bytes:
    """The uploaded table: from the run's row, or (a run queued before tables travelled in the database)
    from MEDIA_ROOT, which a worker on another machine may not have: then the run fails saying so."""
    if run.table_data:
        return bytes(run.table_data)  # PostgreSQL hands a memoryview
    if not run.table_file:
        raise ValueError("the paraphrase table is missing; upload it again")
    try:
        with run.table_file.open("rb") as fh:
            return fh.read()
    except OSError as exc:
        logger.warning("scoring run %s: table %s not readable on this worker: %s", run.pk, run.table_file.name, exc)
        raise ValueError(
            f"the uploaded table is not readable on this worker ({exc.strerror or type(exc).__name__}): this run "
            "keeps its file under MEDIA_ROOT of the machine that took it, and such uploads must be on storage "
            "every worker shares (MEDIA_ROOT); upload the table again (a new upload travels with its run in the "
            "database)"
        ) from None


def _score_agreement(run: ScoringRun) -> tuple[dict, str]:
    """Per pair of annotators (and pooled): link P/R/F1/AER with the first as gold, Cohen's kappa over cells."""
    subs = selectors.submitted_alignments(study=run.study)
    names = dict(
        User.objects.filter(alignment_assignments__pair__study=run.study).values_list("id", "username").distinct()
    )
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
    for n, ((ua, ub), (la, lb)) in enumerate(
        sorted(by_people.items(), key=lambda kv: (names[kv[0][0]], names[kv[0][1]]))
    ):
        ag = annotator_agreement(la, lb)
        rows.append({"annotator_a": names[ua], "annotator_b": names[ub], **_agreement_dict(ag)})
        all_a += la
        all_b += lb
        _progress(run, n + 1, len(by_people), "annotator pairs")
    pooled = annotator_agreement(all_a, all_b)
    signature = f"agreement|kappa:cells-none/sure/possible|tok:{TOKENIZER_VERSION}|v:{SCORING_VERSION}"
    results = {
        "kind": run.kind,
        "summary": {**_agreement_dict(pooled), "n_pairs_distinct": len(pairs), "n_annotator_pairs": len(rows)},
        "annotator_pairs": rows,
        "signatures": {"agreement": signature},
    }
    return results, signature


def _agreement_dict(ag) -> dict:
    return {
        **_link_dict(ag.link),
        "kappa": _nan_none(ag.kappa),
        "kappa_linked": _nan_none(ag.kappa_linked),
        "observed": _nan_none(ag.observed),
        "n_pairs": ag.n_pairs,
        "n_cells": ag.n_cells,
    }

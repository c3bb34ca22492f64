"""The cached snapshot of a dashboard: computed by the worker, served as it is.

A poll (:func:`~.queueing.dashboard_poll`) only compares the study's version stamp with the
snapshot's and, when they differ, queues one refresh (:func:`dashboard_refresh`, in the
worker). The heavy answers, and the judges' QC
rows with them, are recomputed at most every ``PARAEVAL_DASHBOARD_ANSWERS_SECONDS`` (30 s by
default); the counts at every refresh, and
a refresh starts at most every ``PARAEVAL_DASHBOARD_REFRESH_SECONDS`` (5 s by default), and
after a long refresh only once the study's refreshes have used no more than
``PARAEVAL_DASHBOARD_DUTY`` of the time (:func:`refresh_rest`): with hundreds of judges the
version moves several times a second, and a worker refreshing without pause competes with
the judges' requests for the same cores and database.

A poll whose answer has not changed since the poller's last one costs no snapshot at all:
:func:`dashboard_etag` names an answer by the stamps it is made of, and the API answers
``304 Not Modified`` to a poll that sends that name back (``If-None-Match``, which browsers
send by themselves for a response marked ``Cache-Control: no-cache``). The poll reads the
dashboard row without its snapshot (hundreds of KiB at 500 judges: the QC row of every
judge); only a changed answer loads it.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import datetime, timedelta
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from annotation.adaptive.selectors import adaptive_summary
from annotation.judging.protocols.absolute.frame import judgments_frames_shared
from annotation.models import Study
from metrics.core.stats.results import jsonable

from .. import selectors
from ..models import Dashboard
from .figures import study_answers

#: Polls of one study share its version stamp for this long (20 open dashboards: one stamp).
VERSION_TTL_SECONDS = 2.0


def _answers_every() -> float:
    return float(settings.PARAEVAL_DASHBOARD_ANSWERS_SECONDS)


def _encoded(value) -> str:
    """``value`` as the JSON text the API sends."""
    return json.dumps(jsonable(value), cls=DjangoJSONEncoder, separators=(",", ":"), ensure_ascii=False)


def dashboard_get_or_create(*, study: Study) -> Dashboard:
    dashboard, _ = Dashboard.objects.get_or_create(study=study)
    return dashboard


def dashboard_version_cached(*, study: Study) -> str:
    key = f"paraeval:dashboard-version:{study.pk}"
    found = cache.get(key)
    if found is not None:
        return found
    version = selectors.dashboard_version(study=study)
    cache.set(key, version, timeout=VERSION_TTL_SECONDS)
    return version


def _refresh_every() -> float:
    return float(settings.PARAEVAL_DASHBOARD_REFRESH_SECONDS)


def refresh_rest(*, dashboard: Dashboard) -> timedelta:
    """How long a snapshot rests before a poll may queue the next refresh: the interval, or
    longer after a long refresh, so that one study's refreshes take at most the duty share of
    the time (``PARAEVAL_DASHBOARD_DUTY``) of the worker and database the judges share."""
    wall = dashboard.refresh_wall_seconds or 0.0
    duty = min(max(float(settings.PARAEVAL_DASHBOARD_DUTY), 0.01), 1.0)
    return timedelta(seconds=max(_refresh_every(), wall * (1.0 / duty - 1.0)))


#: The page's shortest and longest wait between two polls (seconds).
POLL_MIN_SECONDS, POLL_MAX_SECONDS = 3, 30


def poll_after_seconds(*, dashboard: Dashboard, current: bool) -> int:
    """When a poll's answer may next change, in whole seconds: when a refresh is queued or
    scheduled (:func:`dashboard_refresh_round`), its start plus one refresh's wall time; else
    the snapshot's rest when it is resting or current (no refresh can land before), else about
    one refresh's wall time.

    Sent with every poll (``Paraeval-Poll-After``), so that the page and scripts wait as long as
    nothing can change instead of polling every 3 s: at 500 judges a snapshot rests 5–10 s, and
    a page that is watched is asked back once per refresh, when its result is there.
    """
    wall = max(float(dashboard.refresh_wall_seconds or 0.0), 1.0)
    now = timezone.now()
    queued, taken = dashboard.refresh_queued_at, dashboard.snapshot_at
    wait = wall
    if queued is not None and (taken is None or queued > taken):
        wait = (queued - now).total_seconds() + wall
    elif taken is not None:
        until = (taken + refresh_rest(dashboard=dashboard) - now).total_seconds()
        wait = max(until + wall, wall) if current else max(until, wall)
    return int(min(max(round(wait), POLL_MIN_SECONDS), POLL_MAX_SECONDS))


def answers_due(dashboard: Dashboard, version: str) -> bool:
    if dashboard.answers_version == version:
        return False
    return dashboard.answers_at is None or timezone.now() - dashboard.answers_at >= timedelta(seconds=_answers_every())


def dashboard_etag(*, dashboard: Dashboard) -> str:
    """The name of a poll's answer (an HTTP entity tag): it changes when the snapshot, the
    settings or the plan change, and only then.

    Neither the study's version nor whether the snapshot is current is part of it: with hundreds
    of judges the version moves several times a second, and each refresh would be sent twice,
    once when the study moved past it (only ``current`` differs) and once refreshed, although
    nothing the page draws changed in between. Whether the answer is current travels in a
    header of every answer, ``304`` included (:func:`dashboard_poll_headers`).
    """
    parts = (
        dashboard.snapshot_version,
        dashboard.snapshot_at,
        dashboard.updated_at,
        dashboard.plan_at,
        dashboard.item_rate,
        dashboard.currency,
    )
    return '"' + hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:32] + '"'


def dashboard_poll_headers(*, dashboard: Dashboard, version: str) -> dict[str, str]:
    """The headers of every poll's answer, ``304`` included: its ``ETag``; ``Paraeval-Current``,
    whether the snapshot was computed at the study's version now (``true``/``false``, as the
    body's ``current``; a ``304`` has no body to say it); ``Paraeval-Poll-After``, when the
    answer may next change (poll again no sooner); never stored, always revalidated."""
    current = dashboard.snapshot_version == version
    return {
        "ETag": dashboard_etag(dashboard=dashboard),
        "Cache-Control": "private, no-cache",
        "Paraeval-Current": "true" if current else "false",
        "Paraeval-Poll-After": str(poll_after_seconds(dashboard=dashboard, current=current)),
    }


def dashboard_answer(*, dashboard: Dashboard, version: str) -> dict[str, object]:
    """A poll's answer as values (the browsable API's; the JSON one is :func:`dashboard_answer_bytes`)."""
    return {
        "version": version,
        "current": dashboard.snapshot_version == version,
        "snapshot": dashboard.snapshot or None,
        "plan": dashboard.plan or {},
        "item_rate": str(dashboard.item_rate),
        "currency": dashboard.currency,
    }


#: Snapshots this web process read last (a few studies' worth): see :func:`_stored_snapshot`.
_READ: OrderedDict[tuple, tuple[str, dict]] = OrderedDict()
_READ_LOCK = threading.Lock()
_READ_STUDIES = 8


def _stored_snapshot(dashboard: Dashboard) -> tuple[str, dict]:
    """The snapshot text and plan that a poll deferred, read once per web process for each
    version of them.

    Twenty dashboards open on one study ask for the same snapshot after each refresh (and
    again when the study moves on and it is no longer current): PostgreSQL read and
    decompressed the same hundreds of KiB twenty times or more, at the judges' priority.
    Every write of the text or the plan also moves ``updated_at`` (the refresh, the settings,
    the planner), so the key below names one version of them.
    """
    key = (
        dashboard.pk,
        dashboard.study_id,
        dashboard.updated_at,
        dashboard.snapshot_at,
        dashboard.snapshot_version,
        dashboard.plan_at,
    )
    with _READ_LOCK:
        found = _READ.get(key)
        if found is not None:
            _READ.move_to_end(key)
            return found
    dashboard.refresh_from_db(fields=["snapshot_text", "plan"])
    found = (dashboard.snapshot_text, dashboard.plan or {})
    with _READ_LOCK:
        _READ[key] = found
        while len(_READ) > _READ_STUDIES:
            _READ.popitem(last=False)
    return found


def dashboard_answer_bytes(*, dashboard: Dashboard, version: str) -> bytes:
    """A poll's answer as JSON bytes, equal to :func:`dashboard_answer` encoded: the snapshot
    goes in as the text the worker stored, so that a poll decodes and encodes only the small
    fields around it."""
    snapshot_text, plan = _stored_snapshot(dashboard)
    text = snapshot_text or "null"
    head = json.dumps({"version": version, "current": dashboard.snapshot_version == version}, separators=(",", ":"))
    tail = json.dumps(
        {"plan": plan, "item_rate": str(dashboard.item_rate), "currency": dashboard.currency},
        cls=DjangoJSONEncoder,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return (head[:-1] + ',"snapshot":' + text + "," + tail[1:]).encode()


#: A dashboard is watched while a poll came this recently (a page polls at least every 30 s).
WATCHED_FOR = timedelta(seconds=POLL_MAX_SECONDS + 5)


def dashboard_refresh_round(*, study: Study, mark: datetime | None) -> datetime | None:
    """One round of a watched study's refreshes (the worker's side): refresh if the study moved
    (or the answers are due), then, while a page polls, schedule the next round at the end of
    the snapshot's rest. Returns when the next round is to start (None: no next round).

    A poll queues a refresh only when none is queued or scheduled, and a watched study's
    rounds follow each other on the worker's own clock; so the pages need not poll to start
    one (at 500 judges, two polls in three did only that) and are asked back once per round,
    when its result is there (:func:`poll_after_seconds`). Nobody watching, the rounds stop
    and the next poll queues one again.

    ``mark`` is the ``refresh_queued_at`` the round was queued under: a round whose mark is no
    longer the dashboard's was superseded and does nothing, and the next mark is claimed by a
    conditional update, so that a study has one line of rounds however they were queued.
    ``mark=None`` refreshes once, outside any line (a message queued before rounds existed).
    """
    dashboard = dashboard_get_or_create(study=study)
    if mark is not None and dashboard.refresh_queued_at != mark:
        return None
    version = selectors.dashboard_version(study=study)
    if not dashboard.snapshot_text or dashboard.snapshot_version != version or answers_due(dashboard, version):
        dashboard = dashboard_refresh(study=study)
    if mark is None:
        return None
    now = timezone.now()
    watched = dashboard.viewed_at is not None and now - dashboard.viewed_at <= WATCHED_FOR
    following = now + refresh_rest(dashboard=dashboard) if watched else None
    if not Dashboard.objects.filter(pk=dashboard.pk, refresh_queued_at=mark).update(refresh_queued_at=following):
        return None  # a poll's refresh took over meanwhile
    return following


@contextmanager
def serial_queries() -> Iterator[None]:
    """PostgreSQL runs the queries inside without parallel workers, then as before.

    A parallel plan (``Gather``) starts more PostgreSQL processes for the length of a query, at
    the normal CPU priority whatever the worker's own: a refresh that runs in a low-priority
    worker would take that many more of the judges' cores. One process per refresh is the
    ceiling the dashboards' pool promises (docs/deployment.md). Session-level ``SET`` (not a
    transaction's ``SET LOCAL``), so that a refresh holds no transaction open for its length;
    ``RESET`` afterwards gives the worker's connection back its configured value.
    """
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("SET max_parallel_workers_per_gather = 0")
    try:
        yield
    except BaseException:
        # The refresh failed: its error is the one to raise. A connection it broke (or a
        # transaction it aborted) cannot take the RESET, and is closed or rolled back with
        # its settings; on a healthy one the RESET is still worth trying.
        with suppress(DatabaseError):
            _parallel_reset()
        raise
    _parallel_reset()


def _parallel_reset() -> None:
    with connection.cursor() as cursor:
        cursor.execute("RESET max_parallel_workers_per_gather")


def dashboard_refresh(*, study: Study, force_answers: bool = False) -> Dashboard:
    """Recompute the snapshot (the worker's side), its queries run serially (:func:`serial_queries`)."""
    with serial_queries():
        return _refresh(study=study, force_answers=force_answers)


def _refresh(*, study: Study, force_answers: bool) -> Dashboard:
    """Recompute the snapshot (the worker's side): the live figures always, the answers when
    the version moved and the last ones are older than the interval (or ``force_answers``).

    The version is read first, so data arriving meanwhile makes the snapshot stale, never lost.
    The snapshot is written only if the rate and currency it was computed with are still the
    dashboard's: a rate saved while a refresh runs makes that refresh compute the live figures
    again (its answers do not depend on the rate), instead of writing an old projection over
    the save's request for a new one.
    """
    started, wall_started = time.process_time(), time.monotonic()
    dashboard = dashboard_get_or_create(study=study)
    version = selectors.dashboard_version(study=study)
    fields: dict[str, object] = {}
    previous = dashboard.snapshot  # decoded once
    answers = previous.get("answers")
    qc = previous.get("qc")
    if force_answers or answers is None or qc is None or answers_due(dashboard, version):
        with judgments_frames_shared():  # the QC and the answers from one read of the judgments
            answers = study_answers(study)
            qc = selectors.dashboard_qc(study=study)
        fields.update(answers_version=version, answers_at=timezone.now())
    for _ in range(3):
        live = selectors.dashboard_live(study=study, rate=dashboard.item_rate, currency=dashboard.currency, qc=qc)
        snapshot_text = _encoded(
            {
                **live,
                "answers": answers,
                "adaptive": adaptive_summary(study=study),
                "version": version,
                "computed_at": timezone.now(),
                "answers_at": fields.get("answers_at", dashboard.answers_at),
                "answers_current": fields.get("answers_version", dashboard.answers_version) == version,
            }
        )
        written = Dashboard.objects.filter(
            pk=dashboard.pk, item_rate=dashboard.item_rate, currency=dashboard.currency
        ).update(
            snapshot_text=snapshot_text,
            snapshot_version=version,
            snapshot_at=timezone.now(),
            compute_seconds=round(time.process_time() - started, 3),
            refresh_wall_seconds=round(time.monotonic() - wall_started, 3),
            updated_at=timezone.now(),
            **fields,
        )
        if written:
            break
        dashboard.refresh_from_db()  # the rate or currency changed meanwhile: compute with the new ones
    cache.delete(f"paraeval:dashboard-version:{study.pk}")
    dashboard.refresh_from_db()
    return dashboard


@transaction.atomic
def dashboard_settings_update(*, study: Study, item_rate: object = None, currency: str | None = None) -> Dashboard:
    """Set the per-item rate (≥ 0, a decimal) and the currency code; ``ValidationError`` otherwise."""
    dashboard = Dashboard.objects.select_for_update().get(pk=dashboard_get_or_create(study=study).pk)
    if item_rate is not None:
        try:
            dashboard.item_rate = Decimal(str(item_rate))
        except (InvalidOperation, ValueError):
            raise ValidationError({"item_rate": ["Enter a number, e.g. 0.12."]}) from None
        if not dashboard.item_rate.is_finite():
            raise ValidationError({"item_rate": ["Enter a number, e.g. 0.12."]})
    if currency is not None:
        dashboard.currency = currency.strip().upper()
        if not dashboard.currency.isalpha() or not 1 <= len(dashboard.currency) <= 8:
            raise ValidationError({"currency": ["Use a currency code of letters, e.g. GBP or USD."]})
    dashboard.full_clean()
    dashboard.snapshot_version = ""  # the projection changes: the next poll refreshes
    # Only these fields: a refresh writing the snapshot meanwhile is not overwritten with the old one.
    dashboard.save(update_fields=["item_rate", "currency", "snapshot_version", "updated_at"])
    return dashboard

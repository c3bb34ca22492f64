"""python manage.py judging STUDY {status,open,close,reopen,reset}

A study's judging from scripts, through the services the Design and Progress pages use:
open it (controls and every judge's list; ``--background`` hands a large study to a worker,
as the page does), close it to new judgments, reopen it, reset an opened study back to a
draft while nobody has judged (``--yes``), or print where it stands."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from annotation.judging.errors import JudgingError
from annotation.judging.selectors.progress import study_progress
from annotation.judging.services.opening import study_judging_close, study_judging_reopen, study_judging_reset
from annotation.judging.services.queueing import study_judging_open_start
from annotation.management.studies import study_from_ref
from config.jobs.enums import JobStatus

ACTIONS = ("status", "open", "close", "reopen", "reset")


class Command(BaseCommand):
    help = (
        "Open a study for judging, close it, reopen it, reset it to a draft (before any judgment), or print where "
        "its judging stands: what the Design and Progress pages do."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's name or id")
        parser.add_argument("action", choices=ACTIONS, help="what to do (status: print the progress)")
        parser.add_argument(
            "--background",
            action="store_true",
            help="open: hand the opening to a worker (as the page does for large studies) instead of now",
        )
        parser.add_argument("--yes", action="store_true", help="reset: yes, delete the judges' lists and the controls")

    def handle(self, *args, **opts):
        study = study_from_ref(opts["study"])
        action = opts["action"]
        try:
            if action == "open":
                job = study_judging_open_start(study=study, background=opts["background"])
                if job.status == JobStatus.SUCCEEDED:
                    s = job.summary or {}
                    self.stdout.write(
                        f"opened '{study.name}': {s.get('controls_created', 0)} controls; {s.get('judges', 0)} judges, "
                        f"{s.get('assignment_items', 0)} items in their lists"
                    )
                else:
                    self.stdout.write(
                        f"queued the opening of '{study.name}' (open job {job.pk}): a worker opens it; "
                        f"`judging {study.pk} status` says when it is open"
                    )
            elif action == "close":
                study_judging_close(study=study)
                self.stdout.write(f"closed '{study.name}': no new judgments; `judging {study.pk} reopen` reopens it")
            elif action == "reopen":
                study_judging_reopen(study=study)
                self.stdout.write(f"reopened '{study.name}'")
            elif action == "reset":
                if not opts["yes"]:
                    raise CommandError(
                        f"reset deletes the judges' lists and the controls of '{study.name}' and makes it a draft "
                        "again (refused once anyone has judged): pass --yes to do it"
                    )
                study_judging_reset(study=study)
                self.stdout.write(f"reset '{study.name}' to a draft: its design can change again")
            else:
                self._status(study)
        except JudgingError as exc:
            raise CommandError(str(exc)) from None

    def _status(self, study) -> None:
        study.refresh_from_db()
        p = study_progress(study=study)
        share = f"{100 * p['done'] / p['total']:.0f} %" if p["total"] else "—"
        self.stdout.write(
            f"'{study.name}' (id {study.pk}): {study.status}; {len(p['judges'])} judges, "
            f"{p['done']} of {p['total']} items done ({share}); {p['judgments']} judgments"
        )
        for j in p["judges"]:
            flags = " (excluded)" if j["excluded"] else ""
            self.stdout.write(f"  {j['judge']:<20} {j['done']:>6} / {j['total']:<6}{flags}")

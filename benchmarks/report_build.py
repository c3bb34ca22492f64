"""Time a study report as the worker builds it: database → statistics → figures → exports.

``benchmarks/report_scale.py`` times ``build_report`` alone on an in-memory frame; this
times what the Report tab costs end to end on a real database: a study of
ORIGINALS × (4 systems + 3 controls) items, opened for judging and filled by JUDGES
simulated judges through the judging models (``simulate_judges``), with a BLEU run,
then ``report_build`` (read judgments and metric scores, ``build_report``, five
figures, save) and every export (ZIP of JSON, LaTeX, HTML, CSVs, SVGs), and the
judgments' tidy and wide CSV exports.

Usage::

    .venv/bin/python benchmarks/report_build.py [--originals 3000] [--judges 10] [--n-boot 1000]
        [--database-url postgres://…] [--no-fresh]

Runs in a fresh temporary var/ directory (SQLite file unless ``--database-url``);
prints one line per phase with wall and CPU seconds, the resident memory when the
phase started, the phase's own peak (Linux: the high-water mark is reset before each
phase through ``/proc/self/clear_refs``, so an earlier phase's peak does not hide a
later one) and the process's peak so far. Then, unless ``--no-fresh``, reading the
frame, ``report_build`` and the two judgments CSV exports are timed each in a fresh child process on the same
study (imports done first), where memory the earlier phases freed but the allocator
kept cannot hide what the step itself needs.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _status_mib(field: str) -> float | None:
    """``VmRSS`` or ``VmHWM`` of this process in MiB (None off Linux)."""
    try:
        with open("/proc/self/status") as fh:
            m = re.search(rf"^{field}:\s+(\d+) kB", fh.read(), re.M)
    except OSError:
        return None
    return int(m.group(1)) / 1024 if m else None


def _reset_peak() -> bool:
    """Reset the process's resident high-water mark (Linux ≥ 4.0); False if impossible."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


class Timer:
    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float]] = []
        self.peak = 0.0  # MiB, the largest phase peak (ru_maxrss follows the reset high-water mark)

    def __call__(self, label: str):
        timer = self

        class _Block:
            def __enter__(self):
                self.start_rss = _status_mib("VmRSS")
                self.reset = _reset_peak()
                self.wall, self.cpu = time.perf_counter(), time.process_time()

            def __exit__(self, *exc):
                row = (label, time.perf_counter() - self.wall, time.process_time() - self.cpu)
                timer.rows.append(row)
                phase_peak = _status_mib("VmHWM") if self.reset else None
                timer.peak = max(timer.peak, phase_peak or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
                so_far = timer.peak
                mem = f"peak RSS so far {so_far:6.0f} MiB"
                if phase_peak is not None and self.start_rss is not None:
                    mem = (
                        f"RSS at start {self.start_rss:6.0f} MiB, phase peak {phase_peak:6.0f} MiB "
                        f"(+{phase_peak - self.start_rss:.0f}), {mem}"
                    )
                print(f"{row[0]:<48} {row[1]:8.1f} s wall {row[2]:8.1f} s CPU   {mem}", flush=True)

        return _Block()


def child(step: str, study_id: int, n_boot: int | None) -> None:
    """One step in a fresh process (``--child``): the study and database come from the
    parent through ``--study`` and the environment."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from annotation.judging.protocols.absolute.models import Judgment
    from annotation.judging.protocols.absolute.report import report_judgment_inputs
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill  # noqa: F401  (imports before measuring)
    from annotation.models import Study
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create

    study = Study.objects.get(pk=study_id)
    Judgment.objects.filter(study=study).exists()  # the connection is open before measuring
    timer = Timer()
    if step == "frame":
        with timer("fresh process: read the judgments frame"):
            report_judgment_inputs(study=study)
    elif step in ("export-tidy", "export-wide"):
        from annotation.judging.exports import csv_lines
        from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows

        rows = export_tidy_rows if step == "export-tidy" else export_wide_rows
        with timer(f"fresh process: judgments CSV, {step[7:]} (streamed)"), open(os.devnull, "w") as sink:
            size = sum(sink.write(line) for line in csv_lines(rows(study=study)))
        print(f"  {size / 2**20:.1f} MiB of CSV", flush=True)
    else:
        report = report_create(study=study, settings={"n_boot": n_boot}, enqueue=False)
        with timer("fresh process: report_build"):
            report = report_build(report_id=report.pk)
        assert report.status == "succeeded", report.error


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--originals", type=int, default=3000)
    parser.add_argument("--judges", type=int, default=10)
    parser.add_argument("--n-boot", type=int, default=None)
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--no-fresh", action="store_true", help="skip the fresh-process measurements")
    parser.add_argument("--child", choices=["frame", "report", "export-tidy", "export-wide"], help=argparse.SUPPRESS)
    parser.add_argument("--study", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.study, args.n_boot)
        return

    var = tempfile.mkdtemp(prefix="paraeval-bench-report-")
    os.environ["PARAEVAL_VAR_DIR"] = var
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    if args.database_url:
        os.environ["DATABASE_URL"] = args.database_url
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from annotation.judging.protocols.absolute.report import report_judgment_inputs
    from annotation.judging.protocols.absolute.simulation import simulated_judges_fill
    from annotation.judging.selectors.qc import judgments_fingerprint
    from annotation.judging.services.opening import study_judging_open
    from annotation.models import Candidate, Original, System
    from annotation.services.studies import study_create
    from metrics.reports.exports.bundle import report_zip
    from metrics.reports.services.build import report_build
    from metrics.reports.services.queueing import report_create
    from metrics.services.runs import metric_run_create
    from metrics.services.worker import metric_run_execute

    call_command("migrate", verbosity=0)
    timer = Timer()
    owner = User.objects.create_user("bench")
    with timer("study data (bulk insert)"):
        study = study_create(name=f"bench-{int(time.time())}", owner=owner)
        systems = System.objects.bulk_create(
            [System(study=study, name=n) for n in ("human1", "human2", "machine1", "machine2")]
        )
        originals = Original.objects.bulk_create(
            [
                Original(
                    study=study,
                    external_id=f"o{i:06d}",
                    text=f"the original sentence number {i} says what it says",
                    position=i,
                )
                for i in range(args.originals)
            ],
            batch_size=5000,
        )
        Candidate.objects.bulk_create(
            [
                Candidate(original=o, system=s, text=f"sentence {o.position} of {s.name} says it {k} times over")
                for o in originals
                for k, s in enumerate(systems)
            ],
            batch_size=5000,
        )
    with timer("open judging (controls)"):
        study_judging_open(study=study)
        study.refresh_from_db()
    with timer(f"simulate {args.judges} judges"):
        summary = simulated_judges_fill(study=study, n_judges=args.judges, seed=1)
    n_items = summary.items
    print(
        f"  {summary.judgments_created:,} judgments = {summary.judgments_created * 4:,} scores on {n_items:,} items",
        flush=True,
    )
    with timer("BLEU run (in-process)"):
        run = metric_run_create(study=study, metric="bleu", enqueue=False)
        metric_run_execute(run_id=run.pk)
    with timer("read the judgments frame (alone)"):
        report_judgment_inputs(study=study)
    report = report_create(study=study, settings={"n_boot": args.n_boot}, enqueue=False)
    with timer("report_build (read, statistics, figures, save)"):
        report = report_build(report_id=report.pk)
    assert report.status == "succeeded", report.error
    with timer("exports (ZIP of everything)"):
        data = report_zip(report)
    print(f"  ZIP {len(data) / 2**20:.1f} MiB; judgments fingerprint {judgments_fingerprint(study=study)}")
    print(
        f"peak RSS {timer.peak:.0f} MiB; "
        f"n_boot {report.result['settings']['n_boot']}; database {report._state.db} "
        f"({'PostgreSQL' if args.database_url else 'SQLite file'})",
        flush=True,
    )
    if not args.no_fresh:
        from django.db import connections

        connections.close_all()
        for step in ("frame", "report", "export-tidy", "export-wide"):
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", step, "--study", str(study.pk)]
            if args.n_boot is not None:
                cmd += ["--n-boot", str(args.n_boot)]
            # cwd: Celery's Django fixup puts the working directory first on sys.path.
            subprocess.run(cmd, check=True, cwd=ROOT, env=dict(os.environ))


if __name__ == "__main__":
    main()

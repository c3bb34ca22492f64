import pytest
from django.core.management import CommandError, call_command

from annotation.demo import DEMO_STUDY_NAME
from annotation.models import Candidate, Original, Study


def test_import_study_command_imports_and_reports(researcher, tmp_path, capsys):
    f = tmp_path / "d.tsv"
    f.write_text("original_id\toriginal\thuman\n1\tHello there.\tHi there.\n", encoding="utf-8")
    call_command("import_study", str(f), "--study", "CLI study", "--create", "--owner", researcher.username)
    study = Study.objects.get(name="CLI study")
    assert Candidate.objects.filter(original__study=study).count() == 1
    assert "1 candidates" in capsys.readouterr().out


def test_import_study_command_fails_with_line_numbers_and_writes_nothing(researcher, tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("original_id,original,system,candidate\n1,a,s,b\n2,,s,c\n", encoding="utf-8")
    with pytest.raises(CommandError) as info:
        call_command("import_study", str(f), "--study", "X", "--create", "--owner", researcher.username)
    assert "d.csv, line 3, column 'original': empty text" in str(info.value)
    assert Original.objects.count() == 0


def test_import_study_command_exits_non_zero_for_unknown_study(db, tmp_path, capsys, monkeypatch):
    """As ``manage.py`` runs it (``execute_from_command_line``): the refusal on stderr and a
    non-zero exit status, in this process on the test database (a subprocess would need a
    migrated database of its own: 14 s on an idle machine, a minute on a loaded one). The
    command would close the database connections as it ends, the test's own among them."""
    from django.core.management import execute_from_command_line
    from django.db import connections

    monkeypatch.setattr(connections, "close_all", lambda: None)

    f = tmp_path / "d.csv"
    f.write_text("original_id,original,system,candidate\n1,a,s,b\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exited:
        execute_from_command_line(["manage.py", "import_study", str(f), "--study", "nope"])
    assert exited.value.code not in (0, None)
    assert "no study named 'nope'" in capsys.readouterr().err
    assert not Study.objects.filter(name="nope").exists()


def test_load_demo_creates_accounts_and_the_300_verse_study_once(db, capsys):
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "judge1" in out and "researcher-demo" in out
    study = Study.objects.get(name=DEMO_STUDY_NAME)
    assert Original.objects.filter(study=study).count() == 300
    assert Candidate.objects.filter(original__study=study, system__name="human").count() == 300
    call_command("load_demo")
    assert Study.objects.filter(name=DEMO_STUDY_NAME).count() == 1
    assert "Already loaded" in capsys.readouterr().out


def test_requeue_jobs_resends_every_kind_of_queued_work(researcher, capsys):
    from annotation.services.queueing import study_import_file
    from annotation.services.studies import study_create

    study = study_create(name="Requeue", owner=researcher)
    study_import_file(
        study=study, data=b"original_id,original,system,candidate\n1,a,s,b\n", filename="q.csv", background=True
    )
    call_command("requeue_jobs")
    out = capsys.readouterr().out
    assert "requeued 1 import/generation job(s)" in out
    for what in ("alignment scoring/aligner run(s)", "metric run(s)", "report(s)"):
        assert what in out


def test_requeue_jobs_resends_work_stuck_running_after_its_worker_died(researcher, capsys):
    from datetime import timedelta

    from django.utils import timezone

    from annotation.models import ImportJob
    from annotation.services.imports import import_job_run
    from annotation.services.queueing import study_import_file
    from annotation.services.studies import study_create

    study = study_create(name="Stuck", owner=researcher)
    job = study_import_file(
        study=study, data=b"original_id,original,system,candidate\n1,a,s,b\n", filename="q.csv", background=True
    )
    ImportJob.objects.filter(pk=job.pk).update(status="running", updated_at=timezone.now() - timedelta(hours=2))
    call_command("requeue_jobs", "--stale-minutes", "0")
    assert "requeued 0 import/generation job(s)" in capsys.readouterr().out
    call_command("requeue_jobs", "--stale-minutes", "60")
    assert "requeued 1 import/generation job(s)" in capsys.readouterr().out
    # the resent job, run by a worker, completes the import once
    import_job_run(job_id=job.pk)
    assert ImportJob.objects.get(pk=job.pk).status == "succeeded"

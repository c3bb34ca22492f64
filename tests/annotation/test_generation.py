"""Adding generated systems to a study (page, service, worker) and the paraphrase command."""

from __future__ import annotations

import csv
import gzip
import json
import time
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.enums import Role, SystemKind
from annotation.generation import SystemGenerateError, system_generate_run
from annotation.importing.studies import parse_study_file
from annotation.models import Candidate, ImportJob, System
from annotation.services import queueing
from annotation.services.membership import study_member_add
from annotation.services.queueing import study_system_generate
from config.jobs.enums import JobStatus

# The WordNet paraphraser without its GloVe lexicon: fast, and needs nothing but the shipped table.
WN = {"lexicon_size": "none"}
DEMO_DIR = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


def _url(study, name="annotation:study_generate"):
    return reverse(name, kwargs={"study_id": study.pk})


def _texts(system) -> list[str]:
    return list(Candidate.objects.filter(system=system).order_by("original__position").values_list("text", flat=True))


def _fake_apertium(tmp_path: Path, body: str) -> str:
    script = tmp_path / "apertium"
    script.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = "-l" ]; then printf "eng-spa\\nspa-eng\\n"; exit 0; fi\n'
        'if [ "$1" = "-V" ]; then echo "fake 1.0"; exit 0; fi\n' + body
    )
    script.chmod(0o755)
    return str(script)


# --------------------------------------------------------------------------- the page


def test_researcher_adds_a_system_and_the_study_page_counts_its_candidates(client, researcher, study):
    client.force_login(researcher)
    r = client.post(
        _url(study),
        {"paraphraser": "wordnet", "name": "synonyms", "seed": "0", "params": "lexicon_size=none"},
        follow=True,
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert "Added system “synonyms” (wordnet): 5 candidates." in html
    assert 'data-count="systems">3<' in html and 'data-count="candidates">15<' in html
    system = System.objects.get(study=study, name="synonyms")
    assert system.kind == SystemKind.GENERATED
    assert "Signature: paraphraser:wordnet|" in system.description and "seed:0" in system.description
    assert Candidate.objects.filter(system=system).count() == 5
    job = ImportJob.objects.get(study=study)
    assert job.status == JobStatus.SUCCEEDED and job.summary["candidates_added"] == 5
    assert job.summary["request"]["paraphraser"] == "wordnet"


def test_generate_page_lists_every_paraphraser_and_is_a_study_tab(client, researcher, study):
    client.force_login(researcher)
    html = client.get(_url(study)).content.decode()
    for slug in ("pg1", "pg2", "pg3", "wordnet", "wordnet-context", "roundtrip-apertium"):
        assert f'data-paraphraser="{slug}"' in html
    assert "lexicon_size=100000" in html and "isolate=false" in html
    detail = client.get(_url(study, "annotation:study_detail")).content.decode()
    assert f'href="{_url(study)}"' in detail and "Add a system" in detail


def test_bad_parameters_are_shown_on_the_form_and_nothing_is_added(client, researcher, study):
    client.force_login(researcher)
    r = client.post(_url(study), {"paraphraser": "wordnet", "seed": "0", "params": "rate=2"})
    assert r.status_code == 200
    assert "parameter &#x27;rate&#x27; must be ≤ 1.0" in r.content.decode()
    r = client.post(_url(study), {"paraphraser": "wordnet", "seed": "0", "params": "just words"})
    assert "expected KEY=VALUE" in r.content.decode()
    assert not System.objects.filter(study=study, kind=SystemKind.GENERATED).exists()


def test_a_taken_name_is_refused_on_the_page(client, researcher, study):
    client.force_login(researcher)
    r = client.post(
        _url(study), {"paraphraser": "wordnet", "name": "human", "seed": "0", "params": "lexicon_size=none"}
    )
    assert "already has a system named &#x27;human&#x27;" in r.content.decode()


@pytest.mark.parametrize("role", [Role.JUDGE, Role.ANNOTATOR])
def test_judges_and_annotators_get_403(client, make_user, study, role):
    user = make_user(f"u-{role}")
    study_member_add(study=study, user=user, role=role)
    client.force_login(user)
    assert client.get(_url(study)).status_code == 403
    assert client.post(_url(study), {"paraphraser": "wordnet", "seed": "0"}).status_code == 403
    assert not System.objects.filter(study=study, kind=SystemKind.GENERATED).exists()


def test_other_researchers_get_403_and_anonymous_users_are_sent_to_login(client, make_user, study):
    client.force_login(make_user("other", researcher=True))
    assert client.get(_url(study)).status_code == 403
    client.logout()
    r = client.get(_url(study))
    assert r.status_code == 302 and "/accounts/login/" in r["Location"]


# --------------------------------------------------------------------------- the service


def test_generation_is_deterministic_given_the_seed(study, researcher):
    a = study_system_generate(study=study, paraphraser="wordnet", params=WN, seed=4, user=researcher, name="a")
    b = study_system_generate(study=study, paraphraser="wordnet", params=WN, seed=4, user=researcher, name="b")
    others = [
        study_system_generate(study=study, paraphraser="wordnet", params=WN, seed=s, name=f"s{s}") for s in range(5, 9)
    ]
    assert _texts(a) == _texts(b)
    assert any(_texts(o) != _texts(a) for o in others)
    originals = list(study.originals.order_by("position").values_list("text", flat=True))
    assert _texts(a) != originals


@pytest.mark.parametrize(
    "name, message",
    [
        ("human", "already has a system named 'human'"),
        ("control:me", "reserved for paraeval's controls"),
        ("x" * 201, "at most 200 characters"),
    ],
)
def test_unusable_names_are_refused(study, name, message):
    with pytest.raises(SystemGenerateError, match=message):
        study_system_generate(study=study, paraphraser="wordnet", params=WN, name=name)


def test_unknown_paraphraser_and_missing_apertium_are_refused_with_the_reason(study):
    with pytest.raises(SystemGenerateError, match="unknown paraphraser 'gpt'"):
        study_system_generate(study=study, paraphraser="gpt")
    with pytest.raises(
        SystemGenerateError, match="roundtrip-apertium is unavailable.*apt-get install -y apertium-eng-spa"
    ):
        study_system_generate(study=study, paraphraser="roundtrip-apertium", params={"binary": "/nonexistent/apertium"})
    assert not System.objects.filter(study=study, kind=SystemKind.GENERATED).exists()


def test_a_study_without_originals_cannot_generate(researcher):
    from annotation.services.studies import study_create

    empty = study_create(name="Empty", owner=researcher)
    with pytest.raises(SystemGenerateError, match="has no originals yet"):
        study_system_generate(study=empty, paraphraser="wordnet", params=WN)


def test_roundtrip_system_through_a_stand_in_apertium(study, tmp_path):
    binary = _fake_apertium(tmp_path, "cat\n")  # identity translation: the round trip returns the verse
    system = study_system_generate(
        study=study, paraphraser="roundtrip-apertium", params={"binary": binary}, name="pivot"
    )
    assert _texts(system) == list(study.originals.order_by("position").values_list("text", flat=True))


# --------------------------------------------------------------------------- background


def _wait_for(job_id, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(0.2)
    raise AssertionError(f"generation job {job_id} did not finish")


@pytest.mark.django_db(transaction=True)
def test_large_studies_are_generated_by_a_real_worker(celery_worker, researcher, settings):
    from tests.factories import study_with_data

    settings.PARAEVAL_GENERATE_BACKGROUND_ORIGINALS = 3
    study = study_with_data(owner=researcher, n_originals=6)
    system = study_system_generate(study=study, paraphraser="wordnet", params=WN, seed=1, user=researcher)
    assert system.kind == SystemKind.GENERATED and system.name == "wordnet"
    job = _wait_for(ImportJob.objects.get(study=study).pk)
    assert job.status == JobStatus.SUCCEEDED, job.error
    assert job.percent == 100 and job.summary["candidates_added"] == 6
    system.refresh_from_db()
    assert "Signature: paraphraser:wordnet|" in system.description
    inline = study_system_generate(
        study=study, paraphraser="wordnet", params=WN, seed=1, name="inline", background=False
    )
    assert _texts(system) == _texts(inline)


def test_background_failure_removes_the_empty_system_and_keeps_the_error(study, tmp_path):
    binary = _fake_apertium(tmp_path, 'echo "transfer crashed" >&2; exit 3\n')
    system = study_system_generate(
        study=study, paraphraser="roundtrip-apertium", params={"binary": binary}, background=True
    )
    job = ImportJob.objects.get(study=study)
    assert job.status == JobStatus.RUNNING and job.phase == "waiting for a worker"  # never 'queued'
    job = system_generate_run(job_id=job.pk)
    assert job.status == JobStatus.FAILED and "exit 3" in job.error and "transfer crashed" in job.error
    assert not System.objects.filter(pk=system.pk).exists()


def test_running_a_generation_job_twice_writes_each_candidate_once(study):
    system = study_system_generate(study=study, paraphraser="wordnet", params=WN, background=True)
    job = ImportJob.objects.get(study=study)
    assert system_generate_run(job_id=job.pk).status == JobStatus.SUCCEEDED
    ImportJob.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)  # as if redelivered mid-way
    assert system_generate_run(job_id=job.pk).status == JobStatus.SUCCEEDED
    assert Candidate.objects.filter(system=system).count() == 5


def test_an_unreachable_broker_fails_the_job_instead_of_leaving_it_waiting(
    study, monkeypatch, django_capture_on_commit_callbacks
):
    monkeypatch.setattr(queueing, "job_enqueue", lambda task, *args: False)
    with django_capture_on_commit_callbacks(execute=True):
        system = study_system_generate(study=study, paraphraser="wordnet", params=WN, background=True)
    job = ImportJob.objects.get(study=study)
    assert job.status == JobStatus.FAILED and "task queue is unreachable" in job.error
    assert not System.objects.filter(pk=system.pk).exists()


# --------------------------------------------------------------------------- the command


def test_paraphrase_command_round_trips_text_csv_and_jsonl(tmp_path):
    src = tmp_path / "in.txt"
    src.write_text("The light shineth in darkness.\n\nAnd the world knew him not.\n", encoding="utf-8")
    call_command(
        "paraphrase", system="wordnet", input=src, output=tmp_path / "out.csv", seed=2, param=["lexicon_size=none"]
    )
    with open(tmp_path / "out.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["original"] for r in rows] == ["The light shineth in darkness.", "", "And the world knew him not."]
    assert rows[1]["candidate"] == "" and rows[0]["candidate"] and rows[0]["candidate"] != rows[0]["original"]

    (tmp_path / "in.jsonl").write_text(
        json.dumps({"id": "v1", "original": "The light shineth in darkness."}) + "\n", encoding="utf-8"
    )
    call_command(
        "paraphrase",
        system="wordnet",
        input=tmp_path / "in.jsonl",
        output=tmp_path / "out.jsonl",
        seed=2,
        param=["lexicon_size=none"],
    )
    row = json.loads((tmp_path / "out.jsonl").read_text(encoding="utf-8"))
    assert row["id"] == "v1" and row["candidate"] == rows[0]["candidate"]  # same seed, same output

    call_command(
        "paraphrase",
        system="wordnet",
        input=tmp_path / "out.csv",
        output=tmp_path / "again.tsv",
        seed=2,
        param=["lexicon_size=none"],
    )
    lines = (tmp_path / "again.tsv").read_text(encoding="utf-8").splitlines()
    assert lines[0] == "original\tcandidate" and lines[1].split("\t")[1] == rows[0]["candidate"]


def test_paraphrase_command_errors_name_the_problem(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("text\nhello\n", encoding="utf-8")
    with pytest.raises(CommandError, match="no 'original' column"):
        call_command("paraphrase", system="wordnet", input=bad, output=tmp_path / "o.csv")
    with pytest.raises(CommandError, match="unknown paraphraser 'nope'"):
        call_command("paraphrase", system="nope", input=bad, output=tmp_path / "o.csv")
    with pytest.raises(CommandError, match="cannot tell the format"):
        call_command("paraphrase", system="wordnet", input=bad, output=tmp_path / "o.xlsx")
    src = tmp_path / "in.txt"
    src.write_text("Hello world.\n", encoding="utf-8")
    with pytest.raises(CommandError, match="roundtrip-apertium is unavailable"):
        call_command(
            "paraphrase",
            system="roundtrip-apertium",
            input=src,
            output=tmp_path / "o.txt",
            param=["binary=/nonexistent/apertium"],
        )


def test_paraphrase_command_lists_paraphrasers(capsys):
    call_command("paraphrase", list=True)
    out = capsys.readouterr().out
    assert "pg1: WEEM4PG's PG1" in out and "wordnet-context:" in out and "    rate=1.0" in out


# --------------------------------------------------------------------------- the demo's machine systems


def test_demo_systems_file_has_three_neutral_systems_for_every_demo_original():
    systems = parse_study_file(
        gzip.decompress((DEMO_DIR / "demo_systems.csv.gz").read_bytes()), filename="demo_systems.csv"
    )
    study = parse_study_file(gzip.decompress((DEMO_DIR / "demo_study.csv.gz").read_bytes()), filename="demo_study.csv")
    assert systems.systems == ["pivot-mt", "synonyms", "embed-nn"]
    assert {k: v.text for k, v in systems.originals.items()} == {k: v.text for k, v in study.originals.items()}
    assert len(systems.candidates) == 3 * 300
    by_system = {}
    for c in systems.candidates:
        by_system.setdefault(c.system, []).append(c.text)
    for name, texts in by_system.items():
        changed = sum(
            t != systems.originals[c.original_id].text
            for t, c in zip(texts, [c for c in systems.candidates if c.system == name])
        )
        assert changed >= 150, (name, changed)  # real paraphrase attempts, not copies
    signatures = (DEMO_DIR / "demo_systems.txt").read_text(encoding="utf-8")
    assert "pivot-mt\tparaphraser:roundtrip-apertium|" in signatures and "embed-nn\tparaphraser:pg1|" in signatures


def test_demo_study_holds_human_and_the_three_machine_systems(db):
    from annotation.demo import demo_load

    study, created = demo_load()
    assert created
    counts = dict(System.objects.filter(study=study, kind=SystemKind.IMPORTED).values_list("name", "kind"))
    assert set(counts) == {"human", "pivot-mt", "synonyms", "embed-nn"}
    for name in counts:
        assert Candidate.objects.filter(system__study=study, system__name=name).count() == 300

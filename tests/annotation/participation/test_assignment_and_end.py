"""k per item keeps balancing as participants arrive; timeouts release unfinished items; questions; the end."""

from __future__ import annotations

import csv
import io
from collections import Counter
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.judging.models import Assignment
from annotation.judging.protocols.absolute.models import AssignmentItem
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Candidate, Participant
from annotation.participation import selectors, services

from .conftest import join, prolific_params, rate

pytestmark = pytest.mark.django_db


def _live_counts(study) -> list[int]:
    counts = Counter(AssignmentItem.objects.filter(assignment__study=study).values_list("candidate_id", flat=True))
    return [counts.get(c, 0) for c in Candidate.objects.filter(original__study=study).values_list("pk", flat=True)]


@pytest.fixture
def k_study(study):
    design_update(
        study=study,
        changes={
            "judges_mode": "k",
            "judges_per_item": 2,
            "seed": 5,
            "control_counts": {"identical": 0, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)  # no judges yet: all of them come through the link
    study.refresh_from_db()
    return study


def test_k_per_item_keeps_balancing_as_participants_arrive(k_study):
    link = services.join_link_create(study=k_study, role="judge", items_per_participant=3)
    for n in range(1, 8):
        join(link)
        counts = _live_counts(k_study)
        assert sum(counts) == 3 * n
        assert max(counts) - min(counts) <= 1, counts  # each newcomer took the least-covered items
    # No participant holds an item twice; every list has exactly its share.
    assert set(Assignment.objects.filter(study=k_study).values_list("n_items", flat=True)) == {3}


def test_timeout_releases_unfinished_items_keeps_done_work_and_rebalances(k_study):
    link = services.join_link_create(study=k_study, role="judge", items_per_participant=4, timeout_minutes=30)
    client, _ = join(link)
    leaver = Participant.objects.get()
    assert rate(k_study, leaver.user, n=1) == 1
    # Within the timeout nothing is released.
    assert services.participants_release_timed_out(study=k_study) == 0
    later = timezone.now() + timedelta(minutes=31)
    assert services.participants_release_timed_out(study=k_study, now=later) == 1
    leaver.refresh_from_db()
    assert leaver.timed_out_at == later
    a = Assignment.objects.get(judge=leaver.user)
    assert a.n_items == 1 and a.items.filter(done_at__isnull=False).count() == 1  # the rated item stays
    assert a.items.filter(done_at__isnull=True).count() == 0
    assert selectors.participant_status(participant=leaver) == "timed_out"
    # The next participant is given the released items (the least-covered ones) first.
    done_candidate = a.items.get().candidate_id
    join(link)
    newcomer = Participant.objects.exclude(pk=leaver.pk).get()
    theirs = set(AssignmentItem.objects.filter(assignment__judge=newcomer.user).values_list("candidate_id", flat=True))
    assert done_candidate not in theirs and len(theirs) == 4
    # The leaver coming back gets a clear page, no code.
    r = client.get(f"/participate/studies/{k_study.pk}/")
    assert r.status_code == 200 and "Your time ran out" in r.content.decode()
    r = client.get(f"/judge/studies/{k_study.pk}/done/")
    assert "timed-out-message" in r.content.decode() and "completion-code" not in r.content.decode()


def test_a_participant_who_rated_everything_is_not_timed_out(judge_link, open_study):
    join(judge_link)
    p = Participant.objects.get()
    rate(open_study, p.user)
    assert services.participants_release_timed_out(now=timezone.now() + timedelta(days=2)) == 0
    assert Participant.objects.get().timed_out_at is None


QUESTIONS_BEFORE = [
    {"name": "native_language", "type": "language", "label": "Your native language", "required": True},
    {
        "name": "english",
        "type": "scale",
        "label": "Your English",
        "required": True,
        "choices": ["1", "2", "3", "4", "5"],
    },
]
QUESTIONS_AFTER = [{"name": "comments", "type": "text", "label": "Anything to tell us?"}]


def test_questions_before_and_after_are_required_stored_and_exported(prolific_link, open_study, researcher):
    services.participation_settings_update(
        study=open_study, consent_text="Consent.", questions_before=QUESTIONS_BEFORE, questions_after=QUESTIONS_AFTER
    )
    params = prolific_params()
    client, r = join(prolific_link, params)
    # Before anything else: the questions.
    r = client.get(r.context["next_url"])
    assert r["Location"] == f"/participate/studies/{open_study.pk}/questions/before/"
    r = client.post(r["Location"], {"native_language": "", "english": "7"})
    assert r.status_code == 200 and "This question needs an answer." in r.content.decode()
    assert "Choose one of the answers given." in r.content.decode()
    assert Participant.objects.get().answers == {}
    r = client.post(
        f"/participate/studies/{open_study.pk}/questions/before/", {"native_language": "Deutsch", "english": "4"}
    )
    assert r.status_code == 302
    assert client.get(r["Location"])["Location"] == f"/judge/studies/{open_study.pk}/"
    p = Participant.objects.get()
    rate(open_study, p.user)
    # Finished: the after-questions come before the code.
    r = client.get(f"/judge/studies/{open_study.pk}/done/")
    assert "after-questions-link" in r.content.decode() and "completion-code" not in r.content.decode()
    assert Participant.objects.get().completed_at is None
    r = client.post(f"/participate/studies/{open_study.pk}/questions/after/", {"comments": "Nice."})
    assert r["Location"] == f"/judge/studies/{open_study.pk}/done/"
    page = client.get(r["Location"]).content.decode()
    assert 'id="completion-code">C1A2B3C4<' in page
    assert 'href="https://app.prolific.com/submissions/complete?cc=C1A2B3C4"' in page
    p.refresh_from_db()
    assert p.completed_at is not None
    assert p.answers == {"before": {"native_language": "Deutsch", "english": "4"}, "after": {"comments": "Nice."}}
    # The researcher's export has the answers, the ids and the code.
    rc = Client()
    rc.force_login(researcher)
    text = b"".join(rc.get(f"/studies/{open_study.pk}/participants.csv").streaming_content).decode()
    header, *rows = list(csv.reader(io.StringIO(text)))
    assert header[-3:] == ["before:native_language", "before:english", "after:comments"]
    row = dict(zip(header, rows[0]))
    assert row["platform_id"] == params["PROLIFIC_PID"] and row["status"] == "completed"
    assert row["items_done"] == "10" and row["completion_code"] == "C1A2B3C4" and row["after:comments"] == "Nice."
    assert float(row["active_seconds"]) == 50.0  # 10 judgments × 5 s
    # The QC verdict is the judging QC selector's: every dissimilarity score is 3, so straight-lining is flagged.
    from annotation.judging.selectors.qc import judge_qc

    qc = next(r["qc"] for r in judge_qc(study=open_study) if r["judge"] == p.user.username)
    assert row["qc_verdict"] == "flagged: " + ", ".join(qc.flags) and "straight" in row["qc_verdict"]


def test_question_schema_is_checked(open_study):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as err:
        services.participation_settings_update(
            study=open_study,
            consent_text="",
            questions_after=[],
            questions_before=[
                {"name": "Bad Name", "type": "essay", "label": ""},
                {"name": "x", "type": "choice", "label": "X"},
            ],
        )
    text = " ".join(err.value.message_dict["questions_before"])
    assert "name must be lower-case" in text and "type must be one of" in text and "2–20 different choices" in text


def test_end_context_for_each_platform_and_outcome(open_study):
    from annotation.participation.services import platform_ids_parse

    prolific = services.join_link_create(
        study=open_study, role="judge", platform="prolific", completion_code="DONE1234"
    )
    p, _ = services.participant_join(
        link=prolific, ids=platform_ids_parse(platform="prolific", params=prolific_params())
    )
    end = selectors.end_context(participant=p, outcome="completed")
    assert end["code"] == "DONE1234" and end["redirect_url"].endswith("?cc=DONE1234") and end["mturk"] is None
    out = selectors.end_context(participant=p, outcome="screened_out")
    assert out["code"] == prolific.screen_out_code != "DONE1234"
    assert out["redirect_url"] == f"https://app.prolific.com/submissions/complete?cc={prolific.screen_out_code}"
    mturk = services.join_link_create(study=open_study, role="judge", platform="mturk")
    from .conftest import mturk_params

    params = mturk_params()
    m, _ = services.participant_join(link=mturk, ids=platform_ids_parse(platform="mturk", params=params))
    end = selectors.end_context(participant=m, outcome="completed")
    assert end["mturk"] == {
        "action": "https://workersandbox.mturk.com/mturk/externalSubmit",
        "assignment_id": params["assignmentId"],
    }
    plain = services.join_link_create(
        study=open_study, role="judge", completion_url="https://lab.example/thanks?c={code}"
    )
    q, _ = services.participant_join(link=plain, ids=services.PlatformIds())
    assert (
        selectors.end_context(participant=q, outcome="completed")["redirect_url"]
        == f"https://lab.example/thanks?c={plain.completion_code}"
    )
    with pytest.raises(ValueError):
        selectors.end_context(participant=q, outcome="timed_out")


def test_status_reads_screened_out_from_the_assignment(judge_link, open_study):
    join(judge_link)
    p = Participant.objects.get()
    a = Assignment.objects.get(judge=p.user)
    assert selectors.participant_status(participant=p, assignment=a) == "active"
    a.screened_out_at = timezone.now()  # the screening's field (another migration adds the column)
    assert selectors.participant_status(participant=p, assignment=a) == "screened_out"


def test_release_command_times_out_idle_participants(judge_link, open_study):
    from io import StringIO

    from django.core.management import call_command

    join(judge_link)
    Participant.objects.update(consented_at=timezone.now() - timedelta(minutes=judge_link.timeout_minutes + 1))
    out = StringIO()
    call_command("release_timed_out", stdout=out)
    assert out.getvalue().startswith("1 participant(s) timed out")
    assert Participant.objects.get().timed_out_at is not None
    assert AssignmentItem.objects.filter(assignment__study=open_study).count() == 0

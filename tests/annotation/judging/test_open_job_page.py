"""Opening judging as a background job, as the researcher sees it: the study page's queued job,
its progress and outcome, refusals, who sees the jobs, and the API's 202 and 409 answers."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from annotation.judging.enums import JudgesMode
from annotation.judging.models import OpenJob
from annotation.judging.services.design import design_update
from annotation.judging.services.open_job import open_job_run
from annotation.judging.services.queueing import study_judging_open_start

from .conftest import api_login

# --- the researcher's page ------------------------------------------------------------------------


@pytest.fixture
def rita_client(client, researcher):
    client.force_login(researcher)
    return client


@pytest.mark.django_db
def test_the_page_shows_the_queued_job_its_progress_and_then_the_outcome(rita_client, three_judges, settings):
    study = three_judges
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 10
    r = rita_client.post(f"/studies/{study.pk}/judging/open/")
    assert r.status_code == 302 and r.url == f"/studies/{study.pk}/judging/design/"
    job = OpenJob.objects.get(study=study)
    page = rita_client.get(r.url).content.decode()
    assert "being opened in the background" in page  # the one-off message
    assert 'id="open-job"' in page and f'/judging/open/{job.pk}/"' in page and "js/job_progress.js" in page
    assert "0 of 3</span> judges" in page and "waiting for a worker" in page
    assert 'id="open-button"' not in page and "Save design</button>" in page and " disabled>Save design" in page
    status = rita_client.get(f"/studies/{study.pk}/judging/open/{job.pk}/").json()
    assert status == {
        "id": job.pk,
        "status": "queued",
        "phase": "waiting for a worker",
        "percent": 0,
        "done": 0,
        "total": 3,
        "error": "",
        "summary": None,
    }
    open_job_run(job_id=job.pk)
    status = rita_client.get(f"/studies/{study.pk}/judging/open/{job.pk}/").json()
    assert status["status"] == "succeeded" and status["percent"] == 100 and status["done"] == 3
    assert status["summary"] == {"controls_created": 15, "items": 25, "judges": 3, "assignment_items": 75}
    page = rita_client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert 'id="open-job"' not in page and "job_progress.js" not in page
    assert "Judging is open: 15 controls built, 3 judge(s) assigned 75 items in all." in page
    assert "The design is frozen" in page


@pytest.mark.django_db
def test_a_failed_job_is_shown_on_the_page_and_the_study_can_be_opened_again(
    rita_client, researcher, add_judge, settings
):
    from tests.factories import study_with_data

    lonely = study_with_data(n_originals=1, owner=researcher, name="Lonely page")
    add_judge(lonely, "ann")
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 0
    rita_client.post(f"/studies/{lonely.pk}/judging/open/")
    job = open_job_run(job_id=OpenJob.objects.get(study=lonely).pk)
    assert job.status == "failed"
    page = rita_client.get(f"/studies/{lonely.pk}/judging/design/").content.decode()
    assert 'id="open-failed"' in page and "Opening judging failed; the study is still a draft." in page
    assert "The controls cannot be built" in page
    assert 'id="open-button"' in page  # fix the design and try again
    status = rita_client.get(f"/studies/{lonely.pk}/judging/open/{job.pk}/").json()
    assert status["status"] == "failed" and "controls cannot be built" in status["error"] and status["summary"] is None


@pytest.mark.django_db
def test_up_front_refusals_stay_on_the_page_without_a_job(rita_client, study, add_judge, settings):
    add_judge(study, "ann")
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 2})
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 0
    r = rita_client.post(f"/studies/{study.pk}/judging/open/", follow=True)
    assert "needs at least 2 judges" in r.content.decode() and not OpenJob.objects.exists()


@pytest.mark.django_db
def test_a_small_study_still_opens_at_once_from_the_page(rita_client, three_judges):
    r = rita_client.post(f"/studies/{three_judges.pk}/judging/open/", follow=True)
    assert r.redirect_chain[-1][0] == f"/studies/{three_judges.pk}/judging/progress/"
    assert "Judging is open: 15 controls built, 3 judge(s) assigned 75 items in all." in r.content.decode()


@pytest.mark.django_db
def test_only_the_studys_researchers_see_its_open_jobs(client, three_judges, make_user, api_client):
    job = study_judging_open_start(study=three_judges, background=True)
    client.force_login(User.objects.get(username="ann"))
    assert client.get(f"/studies/{three_judges.pk}/judging/open/{job.pk}/").status_code in (403, 404)
    other = make_user("otto", researcher=True)
    assert api_login(api_client, other).get(f"/api/judging/studies/{three_judges.pk}/open/{job.pk}/").status_code == 403


# --- the API -----------------------------------------------------------------------------------------


@pytest.mark.django_db
def test_api_open_answers_202_with_a_job_to_poll(api_client, researcher, three_judges, settings):
    study = three_judges
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 10
    rita = api_login(api_client, researcher)
    base = f"/api/judging/studies/{study.pk}/"
    r = rita.post(base + "open/")
    assert r.status_code == 202
    body = r.json()
    assert body["status"] == "queued" and body["done"] == 0 and body["total"] == 3 and body["summary"] is None
    again = rita.post(base + "open/")
    assert again.status_code == 409 and "being opened" in again.json()["detail"]
    assert rita.get(base + "design/").json()["frozen"] is False
    open_job_run(job_id=body["id"])
    done = rita.get(base + f"open/{body['id']}/").json()
    assert done["status"] == "succeeded" and done["percent"] == 100
    assert done["summary"] == {"controls_created": 15, "items": 25, "judges": 3, "assignment_items": 75}
    assert rita.get(base + "design/").json()["frozen"] is True
    assert rita.get(base + "open/999999/").status_code == 404


@pytest.mark.django_db
def test_api_open_refusals_are_409_and_create_no_job(api_client, researcher, study, add_judge, settings):
    add_judge(study, "ann")
    design_update(study=study, changes={"judges_mode": JudgesMode.K_PER_ITEM, "judges_per_item": 3})
    settings.PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = 0
    r = api_login(api_client, researcher).post(f"/api/judging/studies/{study.pk}/open/")
    assert r.status_code == 409 and "needs at least 3 judges" in r.json()["detail"]
    assert not OpenJob.objects.exists()

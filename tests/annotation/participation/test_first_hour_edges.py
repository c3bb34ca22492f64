"""Field-study rough edges of issue 28: a preview of a join link for the researcher, the participants
CSV saying why someone was screened out, a docs pointer that is a link, labels written for people."""

import csv
import io

from annotation.judging.models import Assignment
from annotation.judging.screening import screen_out
from annotation.models import JoinLink, Participant

from .conftest import join


def test_the_researcher_previews_a_join_link_without_joining(client, researcher, judge_link, open_study):
    from annotation.participation import services

    services.participation_settings_update(
        study=open_study, consent_text="We record your ratings only.", questions_before=[], questions_after=[]
    )
    client.force_login(researcher)
    page = client.get(f"/studies/{open_study.pk}/field/").content.decode()
    preview_url = f"/studies/{open_study.pk}/field/links/{judge_link.pk}/preview/"
    assert f'href="{preview_url}"' in page
    r = client.get(preview_url)
    html = r.content.decode()
    assert r.status_code == 200
    assert "We record your ratings only." in html and 'id="preview-notice"' in html
    assert 'id="consent-accept" disabled' in html
    assert Participant.objects.count() == 0
    assert JoinLink.objects.get(pk=judge_link.pk).participants.count() == 0


def test_a_judge_cannot_open_the_preview(client, judge, judge_link, open_study):
    client.force_login(judge)
    assert client.get(f"/studies/{open_study.pk}/field/links/{judge_link.pk}/preview/").status_code in (403, 404)


def test_the_participants_csv_says_which_rule_screened_someone_out_and_why(client, researcher, judge_link, open_study):
    join(judge_link)
    p = Participant.objects.get()
    screen_out(
        assignment=Assignment.objects.get(judge=p.user), rule="training", reason="2 of 5 training items right; 4 needed"
    )
    client.force_login(researcher)
    response = client.get(f"/studies/{open_study.pk}/participants.csv")
    body = b"".join(response.streaming_content if response.streaming else [response.content]).decode()
    row = next(csv.DictReader(io.StringIO(body.lstrip("\ufeff"))))
    assert row["status"] == "screened_out"
    assert row["screen_out_rule"] == "training" and row["screen_out_reason"] == "2 of 5 training items right; 4 needed"


def test_the_field_study_page_links_to_its_documentation(client, researcher, open_study, settings):
    settings.PARAEVAL_DOCS_URL = "https://docs.lab.example/paraeval/"
    client.force_login(researcher)
    html = client.get(f"/studies/{open_study.pk}/field/").content.decode()
    assert '<a href="https://docs.lab.example/paraeval/field-studies/" id="field-docs">' in html


def test_research_forms_have_labels_written_for_people():
    from annotation.judging.screening_views import ScreeningForm
    from annotation.participation.forms import JoinLinkForm, SettingsForm

    for form in (ScreeningForm(), JoinLinkForm(), SettingsForm()):
        for name, field in form.fields.items():  # written, not derived from the name ("Qc auto pvalue")
            assert field.label, f"{type(form).__name__}.{name} has no label of its own"
    assert ScreeningForm()["qc_auto_pvalue"].label == "QC: p-value threshold"
    assert JoinLinkForm()["timeout_minutes"].label == "Idle timeout (minutes)"


def test_the_screen_out_page_thanks_the_participant_once(judge_link, open_study):
    client, _ = join(judge_link)
    p = Participant.objects.get()
    screen_out(assignment=Assignment.objects.get(judge=p.user), rule="attention", reason="3 attention checks failed")
    html = client.get(f"/judge/studies/{open_study.pk}/screened-out/").content.decode()
    assert judge_link.screen_out_code in html
    assert html.count("Thank you for your time") == 1


def _instructions(client, study):
    return client.get(f"/judge/studies/{study.pk}/instructions/").content.decode()


def test_the_instructions_mention_sliders_only_when_the_design_has_one(judge_link, open_study, study):
    from annotation.judging.models import JudgingDesign

    client, _ = join(judge_link)
    assert "On a slider" not in _instructions(client, open_study)  # PEM's four 1-5 criteria: no slider
    design = JudgingDesign.objects.get(study=open_study)
    design.criteria = [
        *design.criteria,
        {
            "slug": "similarity",
            "name": "Similarity",
            "help": "",
            "scale": {
                "type": "slider",
                "min": 0,
                "max": 100,
                "anchors": {"low": "Different", "mid": "Half", "high": "Same"},
            },
        },
    ]
    design.save(update_fields=["criteria"])  # as a slider design would be: the page reads the design
    assert "On a slider" in _instructions(client, open_study)

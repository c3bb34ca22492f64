"""The demo study that `make run` loads, end to end: judged by the simulator with the
demo's profile, its report ranks the systems as a reader would expect."""

import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.demo import DEMO_STUDY_NAME
from annotation.models import Candidate, Study

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
@pytest.mark.django_db
def test_simulated_demo_report_ranks_human_first_and_embedding_neighbours_last(tmp_path):
    call_command("load_demo", "--quiet-credentials")
    study = Study.objects.get(name=DEMO_STUDY_NAME)
    systems = set(Candidate.objects.filter(original__study=study).values_list("system__name", flat=True))
    assert {"human", "synonyms", "pivot-mt", "embed-nn"} <= systems
    assert study.status == "open"
    call_command(
        "simulate_judges",
        DEMO_STUDY_NAME,
        "--judges",
        "3",
        "--seed",
        "1",
        "--profile",
        str(ROOT / "fixtures" / "demo" / "simulation_profile.json"),
    )
    call_command("report", DEMO_STUDY_NAME, "--out", str(tmp_path), "--n-boot", "100", "--no-metrics")
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    ranking = report["result"]["system_ranking"]
    assert ranking["criterion"] == "overall"
    # The simulated judges follow the demo's profile (a prior, documented in the file);
    # what this checks is that the whole path — demo, judging design, assignments,
    # simulator, report — carries that through to a ranking with separated clusters.
    assert [s["system"] for s in ranking["systems"]] == ["human", "synonyms", "pivot-mt", "embed-nn"]
    assert ranking["systems"][0]["ci_low"] > ranking["systems"][1]["ci_high"]
    qc = report["result"]["judge_qc"]
    assert all(j["passed"] for j in qc if j["judge"].startswith("sim-judge"))


@pytest.mark.django_db
def test_a_profile_naming_an_unknown_system_or_a_bad_mean_is_refused(tmp_path):
    from django.core.management import CommandError

    call_command("load_demo", "--quiet-credentials")
    bad = tmp_path / "p.json"
    bad.write_text(json.dumps({"systems": {"nope": {"overall": 4}, "human": {"overall": 7}}}), encoding="utf-8")
    with pytest.raises(CommandError) as info:
        call_command("simulate_judges", DEMO_STUDY_NAME, "--judges", "2", "--profile", str(bad))
    assert "does not have" in str(info.value) and "use a number from 1 to 5" in str(info.value)
    broken = tmp_path / "b.json"
    broken.write_text("{", encoding="utf-8")
    with pytest.raises(CommandError, match="not valid JSON"):
        call_command("simulate_judges", DEMO_STUDY_NAME, "--judges", "2", "--profile", str(broken))


@pytest.mark.django_db
def test_every_metric_that_needs_no_trained_model_scores_the_demo_study(tmp_path):
    """The demo carries a reference (the WEB) so that reference-based metrics run too."""
    from metrics.core.registry import available_metrics
    from metrics.models import MetricRun
    from metrics.services.runs import metric_run_create
    from metrics.services.worker import metric_run_execute

    call_command("load_demo", "--quiet-credentials")
    study = Study.objects.get(name=DEMO_STUDY_NAME)
    slugs = [m.slug for m in available_metrics()]
    assert {
        "bleu",
        "chrf",
        "ter",
        "pinc",
        "ibleu",
        "target-f1",
        "pivot-f1",
        "lm-fluency",
        "weem4pg",
        "paraphrase-bleu",
        "pem",
    } <= set(slugs)
    for slug in ("ibleu",):
        run = metric_run_create(study=study, metric=slug, enqueue=False)
        metric_run_execute(run_id=run.pk)
        run = MetricRun.objects.get(pk=run.pk)
        assert run.status == "succeeded", run.error
        assert run.scores.count() == Candidate.objects.filter(original__study=study).count()


def _character_classes(text: str) -> set[str]:
    """Unicode categories of ``text`` and each of its non-alphanumeric characters."""
    import unicodedata

    return {f"category {unicodedata.category(ch)}" for ch in text} | {f"char {ch!r}" for ch in text if not ch.isalnum()}


@pytest.mark.django_db
def test_no_character_class_occurs_in_only_some_systems_candidates_of_the_demo():
    """A judge must not be able to tell a system by a mark alone (the KJV's "¶", the WEB's “quotes”).

    Every system of the opened demo — the four shipped ones and the three controls —
    is compared: a Unicode category, or a non-alphanumeric character, must occur in
    the candidates of all of them or of none.
    """
    call_command("load_demo", "--quiet-credentials")
    study = Study.objects.get(name=DEMO_STUDY_NAME)
    per_system: dict[str, set[str]] = {}
    for system, text in Candidate.objects.filter(original__study=study).values_list("system__name", "text"):
        per_system.setdefault(system, set()).update(_character_classes(text))
    assert len(per_system) == 7, sorted(per_system)  # human, 3 machine systems, 3 controls
    everywhere = set.intersection(*per_system.values())
    somewhere = set.union(*per_system.values())
    tells = {cls: sorted(s for s, classes in per_system.items() if cls in classes) for cls in somewhere - everywhere}
    assert tells == {}
    texts = list(study.originals.values_list("text", "reference"))
    assert not any("\u00b6" in t or "\u00b6" in r for t, r in texts)


def test_demo_normalisation_keeps_apostrophes_and_drops_quotation_marks_and_paragraph_signs():
    from annotation.demo import demo_text_normalise

    assert (
        demo_text_normalise("\u00b6 And the Jews\u2019 passover was forty-six years.")
        == "And the Jews' passover was forty six years."
    )
    assert (
        demo_text_normalise("He said, \u201cIsn\u2019t this Jesus? \u2018Take up your mat and walk\u2019 ?\u201d")
        == "He said, Isn't this Jesus? Take up your mat and walk?"
    )
    assert demo_text_normalise("out of heaven\u2014not as our fathers") == "out of heaven, not as our fathers"

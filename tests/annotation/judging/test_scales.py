"""Criteria and scales as data: validation, values on each scale, the design and the judge's page."""

from __future__ import annotations

import pytest

from annotation.judging import scales
from annotation.judging.errors import DesignFrozen, DesignInvalid, JudgmentInvalid
from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.models import Judgment
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.design import study_control_expected
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.design import design_get_or_create, design_update
from annotation.judging.services.opening import study_judging_open

from .conftest import new_key

pytestmark = pytest.mark.django_db

SIM = {
    "slug": "similarity",
    "name": "Similarity",
    "help": "How close in meaning?",
    "scale": {
        "type": "slider",
        "min": 0,
        "max": 100,
        "anchors": {"low": "Nothing in common", "mid": "Half the meaning", "high": "Same meaning"},
    },
}
GRAM = {
    "slug": "grammar",
    "name": "Grammaticality",
    "help": "",
    "scale": {
        "type": "points",
        "min": 0,
        "max": 2,
        "labels": ["Nonsense", "Meaningful, ungrammatical", "Meaningful and grammatical"],
    },
}
TOPIC = {
    "slug": "topic",
    "name": "Same topic?",
    "help": "",
    "scale": {"type": "categorical", "categories": ["yes", "no", "unsure"]},
}


def test_every_scale_type_validates_and_bad_ones_are_named():
    assert scales.criteria_errors([SIM, GRAM, TOPIC]) == []
    assert scales.criteria_errors([]) and scales.criteria_errors([dict(GRAM, slug=f"c{i}") for i in range(9)])
    eleven = {"type": "points", "min": 1, "max": 11, "labels": [str(i) for i in range(11)]}
    assert scales.scale_errors(eleven) == []
    assert "2 to 11 points" in scales.scale_errors({**eleven, "max": 12, "labels": [str(i) for i in range(12)]})[0]
    assert "anchors" in scales.scale_errors({"type": "slider", "anchors": {"low": "a"}})[0]
    assert "differ" in scales.scale_errors({"type": "categorical", "categories": ["a", "A"]})[0]
    assert "appears twice" in " ".join(scales.criteria_errors([SIM, SIM]))


@pytest.mark.parametrize(
    "scale,given,stored",
    [
        (SIM["scale"], 37, 37),
        (SIM["scale"], 37.5, 37.5),
        (GRAM["scale"], 0, 0),
        (TOPIC["scale"], 2, 2),
    ],
)
def test_values_on_their_scale_are_kept(scale, given, stored):
    assert scales.value_clean(scale, given) == stored


@pytest.mark.parametrize(
    "scale,given",
    [
        (SIM["scale"], 100.5),
        (SIM["scale"], -1),
        (SIM["scale"], float("nan")),
        (GRAM["scale"], 3),
        (GRAM["scale"], 1.5),
        (TOPIC["scale"], 3),
        (TOPIC["scale"], "maybe"),
        (GRAM["scale"], True),
    ],
)
def test_values_off_the_scale_are_refused(scale, given):
    with pytest.raises(ValueError):
        scales.value_clean(scale, given, from_text=True)


def test_text_values_need_from_text_and_categories_go_by_name():
    with pytest.raises(ValueError, match="as a number"):
        scales.value_clean(GRAM["scale"], "2")
    assert scales.value_clean(GRAM["scale"], "2", from_text=True) == 2
    assert scales.value_clean(TOPIC["scale"], "Unsure", from_text=True) == 2


def test_legacy_criteria_with_labels_become_point_scales(study):
    legacy = [{"slug": "meaning", "name": "Meaning", "help": "", "labels": ["bad", "so-so", "good"]}]
    design = design_update(study=study, changes={"criteria": legacy})
    assert design.criteria[0]["scale"] == {"type": "points", "min": 1, "max": 3, "labels": ["bad", "so-so", "good"]}


def test_a_design_with_a_slider_points_and_categories_keeps_fitting_expected_values(study):
    design = design_update(study=study, changes={"criteria": [SIM, GRAM, TOPIC]})
    # PEM's expected scores name criteria the design no longer has: they are dropped (unknown).
    assert design.expected_scores == {"identical": {}, "random": {}, "unigram": {}}
    design = design_update(
        study=study,
        changes={
            "expected_scores": {
                "identical": {"similarity": 100, "grammar": 2},
                "random": {"similarity": 0},
                "unigram": {"grammar": 0},
            }
        },
    )
    assert study_control_expected(study=study)["identical"] == {"similarity": 100, "grammar": 2}
    with pytest.raises(DesignInvalid, match="design is not valid") as exc:
        design_update(
            study=study, changes={"expected_scores": {"identical": {"grammar": 5}, "random": {}, "unigram": {}}}
        )
    assert "grammar" in str(exc.value.field_errors)


def _open_with(study, add_judge, criteria):
    add_judge(study, "ann")
    design_update(
        study=study,
        changes={"criteria": criteria, "seed": 7, "control_counts": {"identical": 1, "random": 0, "unigram": 0}},
    )
    study_judging_open(study=study)
    assignment = assignment_for_judge(study=study, judge=study.memberships.get(role="judge").user)
    return assignment.judge, item_next_for_judge(assignment=assignment)


def test_judgments_store_values_on_each_criterions_scale(study, add_judge):
    ann, item = _open_with(study, add_judge, [SIM, GRAM, TOPIC])
    j = judgment_submit(
        study=study,
        judge=ann,
        token=item.token,
        key=new_key(),
        scores={"similarity": 62.5, "grammar": 2, "topic": "no"},
        serve_stamp=item.serve_stamp,
    ).judgment
    assert Judgment.objects.get(pk=j.pk).values == {"similarity": 62.5, "grammar": 2, "topic": 1}
    frame = judgments_frame(study=study)
    assert list(frame["criterion"]) == ["similarity", "grammar", "topic"]
    assert list(frame["score"]) == [62.5, 2.0, 1.0]
    with pytest.raises(JudgmentInvalid) as exc:
        judgment_submit(
            study=study,
            judge=ann,
            token=item.token,
            key=new_key(),
            scores={"similarity": 101, "grammar": 3},
            serve_stamp=item.serve_stamp,
        )
    assert set(exc.value.field_errors) == {"similarity", "grammar", "topic"}
    with pytest.raises(DesignFrozen):
        design_update(study=study, changes={"criteria": [SIM]})


def test_the_judge_page_renders_a_slider_with_anchors_and_number_keys_for_points(client, study, add_judge):
    ann, item = _open_with(study, add_judge, [SIM, GRAM, TOPIC])
    client.force_login(ann)
    client.post(f"/judge/studies/{study.pk}/instructions/")
    page = client.get(f"/judge/studies/{study.pk}/").content.decode()
    assert 'type="range" name="similarity"' in page and 'data-unset="1"' in page
    assert "Nothing in common" in page and "Half the meaning" in page and "Same meaning" in page
    assert 'id="grammar-0" value="0" data-key="0"' in page  # 0–2 is typed 0, 1, 2
    assert 'id="topic-2" value="2" data-key="3"' in page  # the third category is key 3
    token = item.token
    serve = __import__("re").search(r'name="serve" value="([^"]+)"', page).group(1)
    r = client.post(
        f"/judge/studies/{study.pk}/submit/",
        {"token": token, "serve": serve, "key": new_key(), "similarity": "73", "grammar": "1", "topic": "0"},
    )
    assert r.status_code == 302
    assert Judgment.objects.get().values == {"similarity": 73, "grammar": 1, "topic": 0}
    r = client.post(
        f"/judge/studies/{study.pk}/submit/",
        {"token": token, "serve": serve, "key": new_key(), "similarity": "173", "grammar": "1", "topic": "0"},
    )
    assert r.status_code == 400 and "from 0 to 100" in r.content.decode()


def test_the_api_takes_values_on_the_scales(study, add_judge):
    from rest_framework.test import APIClient

    ann, item = _open_with(study, add_judge, [SIM, GRAM])
    api = APIClient()
    api.force_authenticate(user=ann)
    body = {
        "item": item.token,
        "key": new_key(),
        "scores": {"similarity": 12.5, "grammar": 0},
        "serve_stamp": item.serve_stamp,
    }
    r = api.post(f"/api/judging/studies/{study.pk}/judgments/", body, format="json")
    assert r.status_code == 201 and r.json()["scores"] == {"similarity": 12.5, "grammar": 0}
    r = api.post(
        f"/api/judging/studies/{study.pk}/judgments/",
        body | {"key": new_key(), "scores": {"similarity": 12.5, "grammar": 7}},
        format="json",
    )
    assert r.status_code == 400 and "grammar" in r.json()["scores"]
    design = api.get(f"/api/judging/studies/{study.pk}/design/")
    assert design.status_code in (403, 404)  # a judge does not see the design


def test_the_design_page_changes_criteria_through_its_json_and_words_through_fields(client, researcher, study):
    import json
    import re

    from tests.annotation.judging.protocols.absolute.test_views import design_post_data

    client.force_login(researcher)
    rita_client = client
    page = rita_client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    data = design_post_data(page) | {"criteria_json": json.dumps([SIM, GRAM])}
    r = rita_client.post(f"/studies/{study.pk}/judging/design/", data)
    assert r.status_code == 302
    design = design_get_or_create(study=study)
    assert [c["slug"] for c in design.criteria] == ["similarity", "grammar"]
    page = rita_client.get(f"/studies/{study.pk}/judging/design/").content.decode()
    assert 'name="similarity_anchor_low"' in page and 'name="grammar_label_2"' in page
    assert re.search(r'name="expected_identical_grammar"', page)
    data = design_post_data(page) | {
        "similarity_anchor_high": "Exactly the same meaning",
        "expected_identical_grammar": "2",
    }
    assert rita_client.post(f"/studies/{study.pk}/judging/design/", data).status_code == 302
    design.refresh_from_db()
    assert design.criteria[0]["scale"]["anchors"]["high"] == "Exactly the same meaning"
    assert design.expected_scores["identical"] == {"grammar": 2}
    bad = design_post_data(page) | {"criteria_json": '[{"slug": "x", "name": "X", "scale": {"type": "stars"}}]'}
    r = rita_client.post(f"/studies/{study.pk}/judging/design/", bad)
    assert r.status_code == 200 and "the scale needs a type" in r.content.decode()


def test_the_unit_reads_a_posted_value_in_the_type_its_scale_stores():
    points = scales.scale_unit({"type": "points", "min": 1, "max": 5, "labels": ["a", "b", "c", "d", "e"]})
    slider = scales.scale_unit({"type": "slider", "min": 0, "max": 100, "anchors": {"low": "no", "high": "yes"}})
    assert (points.continuous, slider.continuous) == (False, True)
    assert points.value_from_text("4") == 4 and isinstance(points.value_from_text("4"), int)
    assert slider.value_from_text("37.5") == 37.5
    with pytest.raises(ValueError):
        points.value_from_text("4.5")  # a point scale has no halves
    assert [type(v) for v in (points.value_stored(3.0), slider.value_stored(40.0), slider.value_stored(40.5))] == [
        int,
        int,
        float,
    ]


@pytest.mark.parametrize(
    "scale",
    [
        {"type": "points", "min": 1, "max": 3, "labels": ["bad", "fair", "good"]},
        {"type": "slider", "min": 0, "max": 100, "anchors": {"low": "none", "mid": "half", "high": "all"}},
        {"type": "categorical", "categories": ["yes", "no", "unsure"]},
    ],
)
def test_a_scale_reworded_with_its_own_words_is_the_same_scale(scale):
    words = [text for _, text in scales.scale_wording(scale)]
    assert scales.scale_reworded(scale, words) == scale
    renamed = scales.scale_reworded(scale, [w.upper() for w in words])
    assert [t for _, t in scales.scale_wording(renamed)] == [w.upper() for w in words]
    assert scales.scale_errors(renamed) == []


def test_an_empty_slider_mid_anchor_is_left_out():
    scale = {"type": "slider", "min": 0, "max": 100, "anchors": {"low": "none", "high": "all"}}
    assert scales.scale_reworded(scale, ["none", "", "all"])["anchors"] == {"low": "none", "high": "all"}

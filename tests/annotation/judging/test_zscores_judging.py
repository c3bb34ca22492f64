"""Per-judge z-scores on the judging side (issue 25, part 3): the tidy export's ``z``
column and the QC page's z-basis equal a hand computation with pandas (groupby judge,
genuine items only, sample SD); nothing but a 0–100 slider gets a z; an undefined z is
an empty cell or a note, never NaN."""

from __future__ import annotations

import csv
import io

import pytest
from django.contrib.auth.models import User

from annotation.judging.exports import csv_lines
from annotation.judging.protocols.absolute.frame import judgments_frame
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.protocols.absolute.services import judgment_submit
from annotation.judging.selectors.export_rows import TIDY_EXPORT_COLUMNS, export_tidy_rows
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.selectors.qc import judge_qc
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from tests.conftest import shows_nan

from .conftest import new_key, rate_all_via_service
from .test_scales import GRAM, SIM, TOPIC

pytestmark = pytest.mark.django_db


def _sim(judge: str):
    """A judge's own use of the slider: ann lenient and narrow, bob harsh and wide, cy
    always 50 (σ = 0: z undefined)."""

    def score(item):
        k = len(item.paraphrase) + 3 * len(item.original)
        sim = {"ann": 70 + k % 20, "bob": (k * 7) % 101, "cy": 50}[judge]
        return {"similarity": sim, "grammar": k % 3, "topic": k % 3}

    return score


@pytest.fixture
def slider_study(study, add_judge):
    for name in ("ann", "bob", "cy", "dee"):
        add_judge(study, name)
    design_update(study=study, changes={"criteria": [SIM, GRAM, TOPIC], "seed": 7})
    study_judging_open(study=study)
    study.refresh_from_db()
    for name in ("ann", "bob", "cy"):
        rate_all_via_service(study, User.objects.get(username=name), score_fn=_sim(name))
    dee = User.objects.get(username="dee")  # one judgment only: n < 2, z undefined
    item = item_next_for_judge(assignment=assignment_for_judge(study=study, judge=dee))
    judgment_submit(
        study=study,
        judge=dee,
        token=item.token,
        key=new_key(),
        serve_stamp=item.serve_stamp,
        scores={"similarity": 40, "grammar": 1, "topic": 0},
    )
    return study


def _hand_basis(study):
    frame = judgments_frame(study=study, include_excluded_judges=True)
    genuine = frame[~frame["is_control"] & (frame["criterion"] == "similarity")]
    g = genuine.groupby("judge")["score"]
    return frame, g.mean(), g.std(), g.size()  # pandas' std: ddof=1, as WMT/Appraise


def test_the_tidy_export_ends_with_z_equal_to_a_pandas_hand_computation(slider_study):
    rows = list(csv.DictReader(io.StringIO("".join(csv_lines(export_tidy_rows(study=slider_study))))))
    assert list(rows[0]) == list(TIDY_EXPORT_COLUMNS)
    assert list(TIDY_EXPORT_COLUMNS)[-2:] == ["judge_excluded", "z"]  # added at the end, the rest unchanged
    frame, mu, sd, n = _hand_basis(slider_study)
    checked = controls = 0
    for r in rows:
        if r["criterion"] != "similarity":
            assert r["z"] == "", r  # points and categories never get a z
            continue
        judge = r["judge"]
        if judge in ("cy", "dee"):
            assert r["z"] == "", r  # σ = 0, or fewer than two genuine scores: undefined, an empty cell
            continue
        assert float(r["z"]) == pytest.approx((float(r["score"]) - mu[judge]) / sd[judge], abs=1e-6)
        checked += 1
        controls += r["is_control"] == "true"
    assert checked == len(frame[(frame["criterion"] == "similarity") & frame["judge"].isin(["ann", "bob"])])
    assert controls > 0  # controls get a z on their judge's genuine scale
    assert n["cy"] > 2 and sd["cy"] == 0
    assert "nan" not in "".join(r["z"] for r in rows).lower()


def test_controls_are_left_out_of_the_z_basis(slider_study):
    from annotation.judging.protocols.absolute.exports import judge_scales_streamed

    frame, mu, sd, n = _hand_basis(slider_study)
    everything = frame[frame["criterion"] == "similarity"].groupby("judge")["score"]
    basis = judge_scales_streamed(study=slider_study)
    assert set(basis) == {("ann", "similarity"), ("bob", "similarity"), ("cy", "similarity")} | (
        {("dee", "similarity")} if "dee" in n.index else set()
    )
    for judge in ("ann", "bob"):
        assert basis[(judge, "similarity")].n == n[judge] < everything.size()[judge]
        assert basis[(judge, "similarity")].mu == pytest.approx(mu[judge])
        assert basis[(judge, "similarity")].sigma == pytest.approx(sd[judge])
    assert not basis[("cy", "similarity")].defined


def test_a_study_without_sliders_exports_an_empty_z_column(opened_study):
    rate_all_via_service(opened_study, User.objects.get(username="ann"))
    rows = list(export_tidy_rows(study=opened_study))
    assert rows[0][-1] == "z" and len(rows) > 1 and all(r[-1] == "" for r in rows[1:])


def test_qc_shows_each_judges_z_basis_and_says_when_z_is_undefined(slider_study, researcher, client):
    frame, mu, sd, n = _hand_basis(slider_study)
    rows = {r["judge"]: r for r in judge_qc(study=slider_study)}
    assert set(rows["ann"]["z_basis"]) == {"similarity"}  # the slider only
    assert rows["ann"]["z_basis"]["similarity"].mu == pytest.approx(mu["ann"])
    assert rows["bob"]["z_basis"]["similarity"].sigma == pytest.approx(sd["bob"])
    assert not rows["cy"]["z_basis"]["similarity"].defined
    client.force_login(researcher)
    page = client.get(f"/studies/{slider_study.pk}/judging/qc/").content.decode()
    assert page.count('data-field="z-basis"') == 4
    assert f"μ {mu['ann']:.1f}" in page and f"σ {sd['bob']:.1f}" in page
    assert ">no z</abbr>" in page and "σ = 0" in page and "n = 1" in page and "z undefined" in page
    assert not shows_nan(page)
    assert 'μ, σ</abbr> <span class="qc-criterion">Similarity' in page
    assert "Grammaticality</span></th>" in page  # MAD column; no μ, σ column for it
    assert page.count("μ, σ</abbr>") == 1


def test_the_qc_api_gives_the_z_basis_with_null_for_an_undefined_sigma(slider_study, researcher):
    from rest_framework.test import APIClient

    frame, mu, sd, n = _hand_basis(slider_study)
    api = APIClient()
    api.force_authenticate(user=researcher)
    r = api.get(f"/api/judging/studies/{slider_study.pk}/qc/")
    assert r.status_code == 200, r.content
    judges = {j["judge"]: j for j in r.json()["judges"]}
    assert judges["ann"]["z_basis"]["similarity"]["mu"] == pytest.approx(mu["ann"])
    assert judges["bob"]["z_basis"]["similarity"]["sigma"] == pytest.approx(sd["bob"])
    assert judges["cy"]["z_basis"]["similarity"]["defined"] is False
    assert set(judges["ann"]["z_basis"]) == {"similarity"}
    dee = judges["dee"]["z_basis"]["similarity"]
    assert dee is None or (dee["defined"] is False and dee["sigma"] is None)

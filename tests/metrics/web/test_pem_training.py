"""Training PEM on a study's judgments, and scoring other studies with the trained model."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile

from annotation.models import Candidate
from metrics import selectors
from metrics.core.pem.metric import pem_features
from metrics.core.pem.model import PemModel as CorePemModel
from metrics.models import MetricScore, PemModel
from metrics.services.instances import metric_cache
from metrics.services.pem_models import pem_model_create, pem_model_run_create
from metrics.services.pem_training import pem_model_train
from metrics.services.resources import metric_resource_create
from metrics.services.runs import metric_run_create
from metrics.services.worker import metric_run_execute

from .conftest import make_study
from .sentences import HUMAN, MACHINE, ORIGINALS, REFERENCES

pytestmark = pytest.mark.django_db

PHRASE_TABLE = (
    "english\tpivot\tcount\ncat\tgato\t5\nthe cat\tel gato\t3\nthe\tel\t10\nthe\tla\t8\nriver\trio\t4\n"
    "boat\tbarca\t3\nboat\tbote\t2\nbread\tpan\t6\nfresh\tfresco\t2\nletter\tcarta\t5\nwindow\tventana\t4\n"
)
#: Judges' overall scores per system (two judges); the control's judges disagree with its fixed score.
OVERALL = {"human": (5, 4), "machine": (2, 3), "control:identical": (4, 4)}


@pytest.fixture
def feature_resources(researcher, metric_study):
    text = "\n".join(s.lower() for s in ORIGINALS + HUMAN + MACHINE + REFERENCES) + "\n"
    table = metric_resource_create(
        name="toy table",
        kind="phrase_table",
        file=ContentFile(PHRASE_TABLE.encode(), name="table.tsv"),
        owner=researcher,
        study=metric_study,
    )
    lm = metric_resource_create(
        name="toy LM text",
        kind="language_model",
        file=ContentFile(text.encode(), name="lm-text.txt"),
        owner=researcher,
        study=metric_study,
    )
    return {"phrase_table": table.pk, "lm": lm.pk}


def _synthetic_frame(study) -> pd.DataFrame:
    rows = []
    cands = Candidate.objects.filter(original__study=study).select_related("original", "system")
    for c in cands:
        is_control = c.system.is_control
        for judge, score in zip(("j1", "j2"), OVERALL[c.system.name]):
            for criterion in ("adequacy", "fluency", "dissimilarity", "overall"):
                rows.append(
                    {
                        "judge": judge,
                        "item": str(c.pk),
                        "original": c.original.external_id,
                        "system": c.system.name,
                        "is_control": is_control,
                        "control_kind": "identical" if is_control else None,
                        "criterion": criterion,
                        "score": score if criterion == "overall" else 3,
                        "seconds": 10.0,
                        "submitted_at": pd.Timestamp("2026-01-01", tz="UTC"),
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture
def judged(monkeypatch, metric_study):
    """The judging app's frame, synthesised: two judges rate every candidate."""
    import annotation.judging.protocols.absolute.frame as judging  # where pem_out_of_fold looks the frame up

    frames = {metric_study.pk: _synthetic_frame(metric_study)}
    monkeypatch.setattr(
        judging, "judgments_frame", lambda *, study, include_excluded_judges=False: frames.get(study.pk, pd.DataFrame())
    )
    return metric_study


def test_training_targets_are_judge_means_and_fixed_scores_for_controls(judged):
    targets = selectors.pem_training_targets(study=judged)
    assert list(targets.columns) == ["item", "original", "is_control", "control_kind", "n_judgments", "target"]
    assert len(targets) == 21 and (targets["n_judgments"] == 2).all()
    by_system = dict(
        zip(
            Candidate.objects.filter(original__study=judged).values_list("pk", flat=True).iterator(),
            Candidate.objects.filter(original__study=judged).values_list("system__name", flat=True).iterator(),
        )
    )
    got = {by_system[int(i)]: t for i, t in zip(targets["item"], targets["target"])}
    assert got == {"human": 4.5, "machine": 2.5, "control:identical": 2.0}  # PEM: the original itself is O2


def test_a_pem_model_trains_on_judgments_splits_by_original_and_scores_another_study(
    judged, researcher, feature_resources
):
    model = pem_model_create(
        study=judged,
        name="toy",
        created_by=researcher,
        feature_resources=feature_resources,
        test_share=0.3,
        seed=1,
        enqueue=False,
    )
    assert model.status == "queued"
    model = pem_model_train(pem_model_id=model.pk)
    assert model.status == "succeeded", model.error
    assert (model.n_train, model.n_test) == (15, 6)  # 5 and 2 whole originals, 3 candidates each
    assert model.signature.startswith("pem|format:2|") and model.test_pearson is not None
    assert set(model.hyperparameters) == {"svr__C", "svr__gamma", "svr__epsilon"}
    assert model.summary["n_controls"] == 7 and model.summary["n_originals"] == 7
    resource = model.resource
    assert resource.kind == "pem_model"
    saved = CorePemModel.load(resource.file.path)
    assert saved.signature == model.signature
    assert saved.test_pearson.statistic == pytest.approx(model.test_pearson)

    # Reused on another study: a pem run with the model and the same feature resources.
    other = make_study(researcher, name="Other study", with_control=False)
    run = pem_model_run_create(pem_model=model, study=other, created_by=researcher, enqueue=False)
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "succeeded", run.error
    cands = list(Candidate.objects.filter(original__study=other).select_related("original").order_by("pk"))
    res = selectors.metric_resources_by_id(ids=feature_resources.values())
    feats, _ = pem_features(
        [c.original.text for c in cands],
        [c.text for c in cands],
        phrase_table=res[feature_resources["phrase_table"]].file.path,
        lm=res[feature_resources["lm"]].file.path,
    )
    expected = saved.predict(feats)
    stored = [MetricScore.objects.get(run=run, candidate=c).score for c in cands]
    np.testing.assert_allclose(stored, expected, rtol=1e-12)
    assert run.corpus_score == pytest.approx(float(np.mean(expected)))


def test_a_pem_model_appears_on_the_metrics_page_with_its_test_correlation(
    client, judged, researcher, feature_resources
):
    model = pem_model_train(
        pem_model_id=pem_model_create(
            study=judged,
            name="shown model",
            created_by=researcher,
            feature_resources=feature_resources,
            test_share=0.3,
            enqueue=False,
        ).pk
    )
    client.force_login(researcher)
    html = client.get(f"/studies/{judged.pk}/metrics/").content.decode()
    assert "shown model" in html and f"{model.test_pearson:.3f}" in html and "Score this study" in html


def test_training_is_refused_before_any_overall_judgment_exists(monkeypatch, metric_study, researcher):
    import annotation.judging.protocols.absolute.frame as judging  # where pem_out_of_fold looks the frame up

    monkeypatch.setattr(judging, "judgments_frame", lambda *, study, include_excluded_judges=False: pd.DataFrame())
    with pytest.raises(ValidationError, match="no overall judgments"):
        pem_model_create(study=metric_study, name="none", created_by=researcher, enqueue=False)
    assert not PemModel.objects.exists()


def test_training_with_too_few_originals_fails_with_the_reason(monkeypatch, researcher, feature_resources):
    import annotation.judging.protocols.absolute.frame as judging  # where pem_out_of_fold looks the frame up

    tiny = make_study(researcher, name="Two originals", with_control=False)
    Candidate.objects.filter(original__study=tiny).exclude(original__external_id__in=["v0", "v1"]).delete()
    monkeypatch.setattr(
        judging, "judgments_frame", lambda *, study, include_excluded_judges=False: _synthetic_frame(study)
    )
    model = pem_model_create(
        study=tiny,
        name="tiny",
        created_by=researcher,
        feature_resources=feature_resources,
        test_share=0.5,
        enqueue=False,
    )
    model = pem_model_train(pem_model_id=model.pk)
    assert model.status == "failed" and "at least two training originals" in model.error


def test_pem_trains_on_judgments_submitted_through_the_judging_app(researcher, make_user, feature_resources):
    """Real judgments: the study is opened (controls and assignments built), two judges rate every item."""
    from annotation.judging.protocols.absolute.models import AssignmentItem
    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.protocols.absolute.services import judgment_submit
    from annotation.judging.selectors.judge import assignment_for_judge
    from annotation.judging.services.design import design_update
    from annotation.judging.services.opening import study_judging_open
    from annotation.services.membership import study_member_add

    study = make_study(researcher, name="Judged study", with_control=False)
    judges = [make_user(name) for name in ("jo", "kim")]
    for judge in judges:
        study_member_add(study=study, user=judge, role="judge")
    design_update(study=study, changes={"seed": 7})
    study_judging_open(study=study)
    overall = {"human": (5, 4), "machine": (2, 3)}
    for j, judge in enumerate(judges):
        assignment = assignment_for_judge(study=study, judge=judge)
        n = 0
        while (item := item_next_for_judge(assignment=assignment)) is not None:
            system = AssignmentItem.objects.get(token=item.token).candidate.system.name
            o = overall.get(system, (3, 3))[j]  # judges rate controls 3; PEM trains on their fixed score
            judgment_submit(
                study=study,
                judge=judge,
                token=item.token,
                key=f"k-{judge.pk}-{n:04d}",
                scores={"adequacy": 3, "fluency": 3, "dissimilarity": 3, "overall": o},
                serve_stamp=item.serve_stamp,
            )
            n += 1
        assert n == 35  # 7 originals × (2 systems + 3 controls)

    targets = selectors.pem_training_targets(study=study)
    assert len(targets) == 35 and targets["n_judgments"].eq(2).all()
    fixed = targets[targets["is_control"]].groupby("control_kind")["target"].unique().to_dict()
    assert {k: list(v) for k, v in fixed.items()} == {"identical": [2.0], "random": [1.0], "unigram": [1.0]}
    assert sorted(targets.loc[~targets["is_control"], "target"].unique()) == [2.5, 4.5]

    model = pem_model_create(
        study=study,
        name="judged",
        created_by=researcher,
        feature_resources=feature_resources,
        test_share=0.3,
        seed=3,
        enqueue=False,
    )
    model = pem_model_train(pem_model_id=model.pk)
    assert model.status == "succeeded", model.error
    assert model.n_train + model.n_test == 35 and model.n_test == 10  # two whole originals held out
    assert model.summary["n_controls"] == 21 and -1 <= model.test_pearson <= 1


# --------------------------------------------------------------------------- model files are data, never code


class _Exploit:
    """Unpickling this creates ``marker``: an attacker's "PEM model" would run a shell instead."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _pickle_bomb(tmp_path):
    import pickle

    marker = tmp_path / "pwned"
    return marker, pickle.dumps({"kind": "paraeval-pem", "format": 1, "model": _Exploit(str(marker))})


def test_a_malicious_pickle_uploaded_as_a_pem_model_is_refused_and_never_executed(
    api_client, client, researcher, metric_study, tmp_path
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from metrics.models import MetricResource

    marker, bomb = _pickle_bomb(tmp_path)
    api_client.force_authenticate(researcher)
    r = api_client.post(
        f"/api/studies/{metric_study.pk}/metric-resources/upload/",
        {"file": SimpleUploadedFile("pem-model.pkl", bomb), "kind": "pem_model"},
        format="multipart",
    )
    assert r.status_code == 400, r.content
    assert "pickled PEM model" in r.json()["file"][0] and "retrain" in r.json()["file"][0]
    client.force_login(researcher)
    r = client.post(
        f"/studies/{metric_study.pk}/metrics/resources/",
        {"file": SimpleUploadedFile("pem-model.pkl", bomb), "kind": "pem_model"},
        follow=True,
    )
    assert r.status_code == 200
    assert "pickled PEM model" in r.content.decode()
    assert not marker.exists()
    assert not MetricResource.objects.filter(kind="pem_model").exists()


def test_a_pem_run_on_a_pickled_model_stored_before_the_upgrade_fails_with_a_clear_reason(
    researcher, metric_study, feature_resources, tmp_path
):
    from metrics.models import MetricResource

    metric_cache.clear()  # resource ids repeat across test databases; the worker cache keys on ids
    marker, bomb = _pickle_bomb(tmp_path)
    # What an older installation stored: bypasses today's upload check on purpose.
    legacy = MetricResource(
        name="old model",
        kind="pem_model",
        filename="pem.pkl",
        sha256="0" * 64,
        size=len(bomb),
        owner=researcher,
        study=metric_study,
    )
    legacy.file.save("pem.pkl", ContentFile(bomb), save=True)
    run = metric_run_create(
        study=metric_study,
        metric="pem",
        created_by=researcher,
        enqueue=False,
        resources={"model": legacy.pk, **feature_resources},
    )
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "failed"
    assert "pickled PEM model" in run.error and "retrain" in run.error
    assert not marker.exists()


def test_a_trained_model_moves_to_another_installation_as_its_npz_file(
    api_client, judged, researcher, feature_resources
):
    from django.core.files.uploadedfile import SimpleUploadedFile

    metric_cache.clear()  # resource ids repeat across test databases; the worker cache keys on ids
    model = pem_model_train(
        pem_model_id=pem_model_create(
            study=judged,
            name="exported",
            created_by=researcher,
            feature_resources=feature_resources,
            test_share=0.3,
            seed=1,
            enqueue=False,
        ).pk
    )
    assert model.status == "succeeded", model.error
    with model.resource.file.open("rb") as fh:
        data = fh.read()
    assert data[:4] == b"PK\x03\x04"  # a zip of .npy arrays and JSON, nothing to unpickle

    other = make_study(researcher, name="Elsewhere", with_control=False)
    api_client.force_authenticate(researcher)
    r = api_client.post(
        f"/api/studies/{other.pk}/metric-resources/upload/",
        {"file": SimpleUploadedFile("pem-model.npz", data), "kind": "pem_model"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    run = metric_run_create(
        study=other,
        metric="pem",
        created_by=researcher,
        enqueue=False,
        resources={"model": r.json()["id"], **feature_resources},
    )
    run = metric_run_execute(run_id=run.pk)
    reference = metric_run_execute(
        run_id=pem_model_run_create(pem_model=model, study=other, created_by=researcher, enqueue=False).pk
    )
    assert run.status == "succeeded", run.error
    assert reference.status == "succeeded", reference.error
    assert run.corpus_score == pytest.approx(reference.corpus_score, abs=1e-12)


def test_a_pem_model_whose_header_claims_a_huge_array_gets_a_400_not_a_500(api_client, researcher, metric_study):
    """Issue 23 #7: the upload answered 500 (_ArrayMemoryError) after trying to allocate 24 TiB."""
    import io
    import zipfile

    from django.core.files.uploadedfile import SimpleUploadedFile
    from numpy.lib import format as npy_format

    from metrics.models import MetricResource

    buf = io.BytesIO()
    np.savez(
        buf,
        meta=np.frombuffer(b'{"kind": "paraeval-pem", "format": 2}', dtype=np.uint8),
        mean=np.zeros(3),
        scale=np.ones(3),
        support_vectors=np.zeros((1, 3)),
        dual_coef=np.zeros(1),
    )
    header = io.BytesIO()
    npy_format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (2**40, 3)})
    with zipfile.ZipFile(buf) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members["support_vectors.npy"] = header.getvalue() + bytes(24)
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    api_client.force_authenticate(researcher)
    r = api_client.post(
        f"/api/studies/{metric_study.pk}/metric-resources/upload/",
        {"file": SimpleUploadedFile("pem-model.npz", bomb.getvalue()), "kind": "pem_model"},
        format="multipart",
    )
    assert r.status_code == 400, r.content
    assert "claims a 1099511627776x3 array" in r.json()["file"][0]
    assert not MetricResource.objects.filter(kind="pem_model").exists()

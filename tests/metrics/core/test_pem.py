"""PEM's SVR pipeline: grouped split, grouped CV, persistence, and the registered metric."""

import io
import pickle
import zipfile

import numpy as np
import pytest

from metrics.core.base.params import MetricError
from metrics.core.lm.estimate import estimate_kneser_ney, lm_tokens
from metrics.core.pem import model as pem_model_module
from metrics.core.pem.metric import Pem, pem_features
from metrics.core.pem.model import FEATURES, PEM_FORMAT, PemFileError, PemModel, RbfSvr
from metrics.core.pem.training import pem_train, split_by_group
from metrics.core.phrase_table import PhraseTable, write_phrase_table
from metrics.core.pivot.f1 import pivot_f1
from metrics.core.registry import create_metric
from metrics.core.target_f1 import target_f1

SMALL_GRID = {"svr__C": [1.0, 10.0], "svr__gamma": ["scale", 0.5], "svr__epsilon": [0.1]}


def synthetic(n_groups=60, per_group=4, seed=0):
    """Targets a smooth non-linear function of three features on very different scales."""
    rng = np.random.default_rng(seed)
    n = n_groups * per_group
    pivot = rng.uniform(0, 1, n)
    fluency = rng.uniform(-4, -1, n)
    target = rng.uniform(0, 1, n)
    y = 1 + 4 / (1 + np.exp(-(6 * (pivot - 0.5) + 1.5 * (fluency + 2.5) - 2 * (target - 0.5) ** 2)))
    y = y + rng.normal(0, 0.05, n)
    groups = np.repeat([f"orig{i}" for i in range(n_groups)], per_group)
    return np.column_stack([pivot, fluency, target]), y, groups


def test_groups_never_straddle_train_and_test():
    _, _, groups = synthetic()
    train, test = split_by_group(groups, test_fraction=0.25, seed=3)
    assert set(groups[train]).isdisjoint(groups[test])
    assert len(train) + len(test) == len(groups) and len(set(groups[test])) == 15
    train2, test2 = split_by_group(groups, test_groups=["orig0", "orig1"])
    assert set(groups[test2]) == {"orig0", "orig1"} and len(train2) == len(groups) - 8
    with pytest.raises(ValueError, match="orig100"):
        split_by_group(groups, test_groups=["orig100"])  # not silently truncated to "orig10"


def test_svr_learns_a_smooth_function_and_reports_held_out_correlation():
    x, y, groups = synthetic()
    model = pem_train(x, y, groups, test_fraction=0.25, seed=1, param_grid=SMALL_GRID)
    assert model.n_train == 180 and model.n_test == 60
    assert model.test_pearson.n == 60
    assert model.test_pearson.statistic > 0.95
    assert set(model.best_params) == {"svr__C", "svr__gamma", "svr__epsilon"}
    assert model.signature.startswith(f"pem|format:{PEM_FORMAT}|C:")
    # The held-out figure is computed on originals the model never saw.
    train, test = split_by_group(groups, test_fraction=0.25, seed=1)
    r = np.corrcoef(model.predict(x[test]), y[test])[0, 1]
    assert model.test_pearson.statistic == pytest.approx(r)


def test_hyper_parameters_are_chosen_by_grouped_cross_validation(monkeypatch):
    from sklearn import model_selection

    seen = []
    real_split = model_selection.GroupKFold.split

    def spy(self, X, y=None, groups=None):
        for tr, te in real_split(self, X, y, groups):
            seen.append(set(np.asarray(groups)[tr]).isdisjoint(np.asarray(groups)[te]))
            yield tr, te

    monkeypatch.setattr(model_selection.GroupKFold, "split", spy)
    x, y, groups = synthetic(n_groups=20)
    pem_train(x, y, groups, param_grid=SMALL_GRID, n_splits=4)
    assert seen and all(seen)


def test_training_is_deterministic_for_a_seed():
    x, y, groups = synthetic(n_groups=30)
    a = pem_train(x, y, groups, seed=5, param_grid=SMALL_GRID)
    b = pem_train(x, y, groups, seed=5, param_grid=SMALL_GRID)
    assert a.signature == b.signature
    np.testing.assert_array_equal(a.predict(x), b.predict(x))


def test_save_and_load_round_trip_and_refuse_foreign_files(tmp_path):
    x, y, groups = synthetic(n_groups=20)
    model = pem_train(x, y, groups, param_grid=SMALL_GRID)
    path = model.save(tmp_path / "pem.npz")
    assert zipfile.is_zipfile(path)
    again = PemModel.load(path)
    np.testing.assert_array_equal(again.predict(x), model.predict(x))
    assert again.signature == model.signature
    assert again.test_pearson.statistic == model.test_pearson.statistic
    with open(path, "rb") as fh:  # an open upload reads the same
        assert PemModel.load(fh).signature == model.signature

    other = tmp_path / "other.npz"
    np.savez(
        other,
        meta=np.frombuffer(b'{"kind": "paraeval-pem", "format": 99}', dtype=np.uint8),
        **{k: np.zeros(3) for k in ("mean", "scale", "support_vectors", "dual_coef")},
    )
    with pytest.raises(PemFileError, match="format 99"):
        PemModel.load(other)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a model")
    with pytest.raises(PemFileError, match="not a PEM model"):
        PemModel.load(junk)


def test_the_saved_arrays_predict_what_the_fitted_scikit_learn_pipeline_predicts():
    x, y, groups = synthetic(n_groups=30)
    model = pem_train(x, y, groups, param_grid=SMALL_GRID)
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVR

    for gamma in ("scale", 0.5):
        pipe = Pipeline([("scale", StandardScaler()), ("svr", SVR(kernel="rbf", C=10.0, gamma=gamma))]).fit(x, y)
        np.testing.assert_allclose(RbfSvr.from_pipeline(pipe).predict(x), pipe.predict(x), rtol=0, atol=1e-9)
    assert model.predict(x).shape == (len(x),)


def test_an_old_pickled_model_is_refused_with_a_clear_message_and_never_unpickled(tmp_path):
    marker = tmp_path / "pwned"
    bomb = tmp_path / "pem.pkl"
    bomb.write_bytes(pickle.dumps(_Exploit(str(marker)), protocol=4))
    with pytest.raises(PemFileError, match="pickled PEM model .* is refused.*retrain"):
        PemModel.load(bomb)
    assert not marker.exists()
    legacy = tmp_path / "legacy.pkl"
    legacy.write_bytes(pickle.dumps({"kind": "paraeval-pem", "format": 1, "model": None}))
    with pytest.raises(PemFileError, match="pickled"):
        PemModel.load(legacy)


def test_a_model_file_that_unpacks_beyond_the_cap_or_holds_objects_is_refused(tmp_path, monkeypatch):
    x, y, groups = synthetic(n_groups=10)
    path = pem_train(x, y, groups, param_grid=SMALL_GRID, test_fraction=0).save(tmp_path / "pem.npz")
    # The reader looks the cap up in the module that defines it.
    monkeypatch.setattr(pem_model_module, "PEM_MAX_BYTES", 100)
    with pytest.raises(PemFileError, match="unpacked"):
        PemModel.load(path)
    monkeypatch.undo()

    marker = tmp_path / "pwned"
    sneaky = tmp_path / "sneaky.npz"
    arrays = {k: np.zeros(3) for k in ("mean", "scale", "support_vectors")}
    np.savez(
        sneaky,
        meta=np.frombuffer(b'{"kind": "paraeval-pem", "format": 2}', dtype=np.uint8),
        dual_coef=np.array([_Exploit(str(marker))], dtype=object),
        **arrays,
    )
    with pytest.raises(PemFileError):
        PemModel.load(sneaky)
    assert not marker.exists()


class _Exploit:
    """Unpickling this creates ``marker``: what an attacker's "PEM model" would do."""

    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def test_bad_inputs_are_refused():
    x, y, groups = synthetic(n_groups=10)
    with pytest.raises(ValueError, match="shape"):
        pem_train(x[:, :2], y, groups)
    with pytest.raises(ValueError, match="same length"):
        pem_train(x, y[:-1], groups)
    with pytest.raises(ValueError, match="two training originals"):
        pem_train(x[:4], y[:4], groups[:4], test_fraction=0)


@pytest.fixture
def resources(tmp_path):
    table = {
        ("hello ,", "bonjour ,"): 9,
        ("hello ,", "salut ,"): 1,
        (".", "."): 50,
        (",", ","): 50,
        ("sir", "monsieur"): 5,
        ("morn", "bonjour"): 4,
        ("good", "bon"): 3,
    }
    pt = write_phrase_table(table, tmp_path / "phrase_table_toy.tsv.gz")
    corpus = [lm_tokens(s) for s in ["Hello , sir .", "Good morning , sir .", "Hello , Querrien .", "Good day ."] * 5]
    arpa = estimate_kneser_ney(corpus, order=3).write_arpa(tmp_path / "lm_toy.arpa")
    return pt, arpa


def test_features_are_the_three_registered_metrics(resources):
    pt, arpa = resources
    feats, sigs = pem_features(
        ["Morning , sir .", "Hello , sir ."], ["Hello , Querrien .", "Hello , sir ."], phrase_table=pt, lm=arpa
    )
    assert feats.shape == (2, len(FEATURES))
    assert feats[0, 0] == pytest.approx(pivot_f1("Morning , sir .", "Hello , Querrien .", PhraseTable.load(pt)).f1)
    assert feats[0, 2] == pytest.approx(target_f1("Morning , sir .", "Hello , Querrien ."))
    assert feats[1, 0] == pytest.approx(1.0) and feats[1, 2] == pytest.approx(1.0)
    assert feats[0, 1] < 0
    assert [s.split("|")[0] for s in sigs] == ["metric:pivot-f1", "metric:lm-fluency", "metric:target-f1"]


def test_pem_metric_scores_with_a_saved_model_and_checks_its_resources(resources, tmp_path):
    pt, arpa = resources
    originals = ["Morning , sir .", "Hello , sir .", "Good day .", "Hello , Querrien ."] * 3
    candidates = ["Hello , Querrien .", "Hello , sir .", "Good morning , sir .", "Good day ."] * 3
    feats, sigs = pem_features(originals, candidates, phrase_table=pt, lm=arpa)
    y = 1 + 3 * feats[:, 0]
    model = pem_train(feats, y, np.arange(len(y)) % 6, test_fraction=0, param_grid=SMALL_GRID, feature_signatures=sigs)
    path = model.save(tmp_path / "pem.npz")
    m = create_metric("pem", {}, {"model": path, "phrase_table": pt, "lm": arpa})
    assert isinstance(m, Pem)
    res = m.score(originals, candidates)
    np.testing.assert_allclose(res.scores, model.predict(feats))
    assert res.corpus == pytest.approx(np.mean(model.predict(feats)))
    assert "res:model=" in res.signature

    other = write_phrase_table({("hello ,", "hola ,"): 1}, tmp_path / "phrase_table_other.tsv")
    m2 = create_metric("pem", {}, {"model": path, "phrase_table": other, "lm": arpa})
    with pytest.raises(MetricError, match="trained with feature"):
        m2.score(originals, candidates)


def _npz_with_member_header(path, member: str, header: dict) -> None:
    """A saved model whose ``member`` is replaced by an .npy header claiming ``header`` and 24 bytes of data."""
    from numpy.lib import format as npy_format

    raw = io.BytesIO()
    npy_format.write_array_header_1_0(raw, header)
    raw.write(bytes(24))
    with zipfile.ZipFile(path) as zf:
        members = {i.filename: zf.read(i) for i in zf.infolist()}
    members[f"{member}.npy"] = raw.getvalue()
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in members.items():
            zf.writestr(n, data)


def test_a_model_whose_header_claims_a_huge_array_is_refused_before_any_allocation(tmp_path, monkeypatch):
    """Issue 23 #7: a (2**40, 3) header made np.load allocate 24 TiB (500 _ArrayMemoryError)."""
    x, y, groups = synthetic(n_groups=10)
    path = pem_train(x, y, groups, param_grid=SMALL_GRID, test_fraction=0).save(tmp_path / "pem.npz")
    _npz_with_member_header(path, "support_vectors", {"descr": "<f8", "fortran_order": False, "shape": (2**40, 3)})

    def no_load(*args, **kwargs):
        raise AssertionError("np.load reached: the array would have been allocated")

    monkeypatch.setattr(pem_model_module.np, "load", no_load)
    with pytest.raises(PemFileError, match="claims a 1099511627776x3 array"):
        PemModel.load(path)

"""Property-based fuzzing (hypothesis) of every JSON API body and form that takes
people's input: the judging design (API and page), judgment submissions (API and
page), alignment drafts and submissions, the alignment settings, metric runs (API
and page, with arbitrary parameter values), paraphrase tables for scoring runs,
report settings (API and page), study creation and membership.

Bodies are arbitrary JSON (nested objects and lists, huge integers, NaN and
infinities as Python's ``json`` writes them, strings with NUL and markup), often
shaped like the real input with one part wrong, and sometimes carrying a real item
token and serve stamp so that the service code behind the checks runs too.

Properties: never a 5xx (a view error re-raised by the test client counts as
one), and a refused request writes nothing (the database fingerprint of every
model is unchanged). Each example runs in a savepoint that is rolled back, so
examples do not see each other's writes.
"""

from __future__ import annotations

import json
import os

from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import MARKUP, db_fingerprint, fingerprint_diff, login_client

#: Inputs per property; ``PARAEVAL_FUZZ_EXAMPLES=1000`` searches harder (minutes, not seconds).
MAX_EXAMPLES = int(os.environ.get("PARAEVAL_FUZZ_EXAMPLES", "20"))
FUZZ = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

WEIRD_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x00b",
        "NaN",
        "-1",
        "1e999",
        "9" * 5000,
        "0x10",
        "true",
        "null",
        *MARKUP,
        "control:identical",
        "é" * 300,
        "\u202e" + "abc",
        "../../etc/passwd",
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(2**80), 2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    WEIRD_STRINGS,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def shaped(keys: dict[str, st.SearchStrategy]):
    """A dict with some of ``keys`` (each with its near-valid or arbitrary value) and maybe junk keys."""
    items = {k: st.one_of(v, JSON) for k, v in keys.items()}
    return st.fixed_dictionaries({}, optional=items).flatmap(
        lambda d: st.dictionaries(st.text(max_size=6), JSON, max_size=2).map(lambda junk: {**junk, **d})
    )


def send(client, method: str, url: str, payload, *, form: bool = False):
    """One request inside a rolled-back savepoint; returns (status, changed-rows description)."""
    before = db_fingerprint()
    with transaction.atomic():
        try:
            if form:
                response = getattr(client, method)(url, payload)
            else:
                body = payload if isinstance(payload, (bytes, str)) else json.dumps(payload)
                response = getattr(client, method)(url, body, content_type="application/json")
        except Exception as exc:  # noqa: BLE001 - the test client re-raises view errors: a 500
            raise AssertionError(f"{method.upper()} {url} raised {type(exc).__name__}: {exc}") from exc
        changed = fingerprint_diff(before, db_fingerprint())
        transaction.set_rollback(True)
    assert response.status_code < 500, f"{method.upper()} {url}: {response.status_code}"
    return response, changed


def refused_writes_nothing(response, changed, ok=(200, 201, 202, 302)):
    if response.status_code not in ok:
        assert changed == [], f"{response.status_code} but rows changed: {changed}"


SCORE = st.one_of(st.integers(1, 5), st.integers(), SCALARS)
SCORES = shaped(dict.fromkeys(("adequacy", "fluency", "dissimilarity", "overall"), SCORE))


def _current_item(world, username="w-judge"):
    from django.contrib.auth.models import User

    from annotation.judging.protocols.absolute.selectors import item_next_for_judge
    from annotation.judging.selectors.judge import assignment_for_judge
    from annotation.models import Study

    study = Study.objects.get(pk=world.study)
    assignment = assignment_for_judge(study=study, judge=User.objects.get(username=username))
    return item_next_for_judge(assignment=assignment)


@FUZZ
@given(data=st.data())
def test_judgment_submissions_never_fail_and_invalid_ones_store_nothing(data, world, db):
    from annotation.judging.protocols.absolute.models import Judgment

    item = _current_item(world)
    client = login_client("w-judge")
    body = data.draw(
        shaped(
            {
                "item": st.one_of(st.just(item.token), st.just(world.other_token), st.text(max_size=70)),
                "key": st.one_of(st.text("abcXYZ019-_", min_size=8, max_size=64), st.text(max_size=80)),
                "scores": SCORES,
                "serve_stamp": st.one_of(st.just(item.serve_stamp), st.text(max_size=50)),
                "active_seconds": SCALARS,
            }
        )
    )
    n = Judgment.objects.count()
    raw = data.draw(st.one_of(st.just(None), st.binary(max_size=300)))
    response, changed = send(
        client, "post", f"/api/judging/studies/{world.study}/judgments/", raw if raw is not None else body
    )
    refused_writes_nothing(response, changed)
    if response.status_code in (200, 201):
        assert body.get("item") == item.token and set(body["scores"]) == {
            "adequacy",
            "fluency",
            "dissimilarity",
            "overall",
        }
    assert Judgment.objects.count() == n  # rolled back: the next example starts alike


#: Any text, NUL included (config.middleware.RejectNulMiddleware answers 400 to a NUL).
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=70)


@FUZZ
@given(data=st.data())
def test_the_rating_form_never_fails(data, world, db):
    item = _current_item(world)
    client = login_client("w-judge")
    fields = data.draw(
        st.dictionaries(
            st.sampled_from(
                ["token", "serve", "key", "active_seconds", "adequacy", "fluency", "dissimilarity", "overall"]
            ),
            st.one_of(ANY_TEXT, WEIRD_STRINGS, st.sampled_from([item.token, item.serve_stamp, "3"])),
            max_size=8,
        )
    )
    response, changed = send(client, "post", f"/judge/studies/{world.study}/submit/", fields, form=True)
    assert response.status_code in (302, 400, 404), response.status_code
    refused_writes_nothing(response, changed)


CRITERION = shaped(
    {
        "slug": st.sampled_from(["adequacy", "fluency", "dissimilarity", "overall"]),
        "name": st.text(max_size=70),
        "help": st.text(max_size=40),
        "labels": st.lists(st.one_of(st.text(max_size=70), SCALARS), max_size=7),
    }
)


@FUZZ
@given(
    body=shaped(
        {
            "criteria": st.lists(CRITERION, max_size=5),
            "judges_mode": st.sampled_from(["crossed", "k", "x"]),
            "judges_per_item": SCALARS,
            "control_counts": shaped(dict.fromkeys(("identical", "random", "unigram"), SCALARS)),
            "expected_scores": shaped(dict.fromkeys(("identical", "random", "unigram"), SCORES)),
            "seed": st.one_of(st.integers(), SCALARS),
            "qc_alpha": SCALARS,
        }
    ),
    draft=st.booleans(),
)
def test_the_judging_design_api_never_fails(body, draft, world, db):
    from annotation.judging.services.design import design_get_or_create
    from annotation.models import Study

    # A draft design is editable, an open one frozen. The design row exists before the
    # request (reading a design creates it with the defaults; that is not a write to refuse).
    study_id = world.other_study if draft else world.study
    design_get_or_create(study=Study.objects.get(pk=study_id))
    client = login_client("w-other" if draft else "w-owner")
    response, changed = send(client, "patch", f"/api/judging/studies/{study_id}/design/update/", body)
    assert response.status_code in (200, 400, 409), response.status_code
    refused_writes_nothing(response, changed)


@FUZZ
@given(
    fields=st.dictionaries(
        st.sampled_from(
            [
                "judges_mode",
                "judges_per_item",
                "seed",
                "qc_alpha",
                "adequacy_name",
                "adequacy_help",
                "adequacy_label_1",
                "fluency_label_5",
                "controls_identical",
                "controls_random",
                "expected_identical_overall",
                "expected_unigram_fluency",
            ]
        ),
        st.one_of(st.text(max_size=80), WEIRD_STRINGS, st.integers().map(str)),
        max_size=12,
    )
)
def test_the_judging_design_form_never_fails(fields, world, db):
    from annotation.judging.services.design import design_get_or_create
    from annotation.models import Study

    design_get_or_create(study=Study.objects.get(pk=world.other_study))
    client = login_client("w-other")
    response, changed = send(client, "post", f"/studies/{world.other_study}/judging/design/", fields, form=True)
    assert response.status_code in (200, 302, 400), response.status_code
    refused_writes_nothing(response, changed)


LINKS = st.one_of(
    st.lists(st.lists(st.one_of(st.integers(-2, 8), st.integers(), SCALARS), max_size=3), max_size=6), JSON
)


@FUZZ
@given(
    body=shaped(
        {
            "sure": LINKS,
            "possible": LINKS,
            "revision": st.one_of(st.integers(-1, 3), SCALARS),
            "active_seconds": SCALARS,
        }
    ),
    which=st.sampled_from(["draft", "submit"]),
    raw=st.one_of(st.just(None), st.binary(max_size=200)),
)
def test_alignment_drafts_and_submissions_never_fail(body, which, raw, world, db):
    client = login_client("w-annot")
    url = f"/api/alignment/assignments/{world.assignment}/{which}/"
    response, changed = send(client, "put" if which == "draft" else "post", url, raw if raw is not None else body)
    assert response.status_code in (200, 400, 409, 415), response.status_code
    refused_writes_nothing(response, changed)


@FUZZ
@given(body=shaped({"annotators_per_pair": SCALARS, "prefill_system": st.one_of(st.text(max_size=20), SCALARS)}))
def test_alignment_settings_never_fail(body, world, db):
    response, changed = send(
        login_client("w-owner"), "post", f"/api/alignment/studies/{world.study}/settings/update/", body
    )
    assert response.status_code in (200, 400), response.status_code
    refused_writes_nothing(response, changed)


METRIC_PARAMS = st.dictionaries(
    st.sampled_from(
        ["max_n", "lowercase", "smooth_method", "tokenize", "alpha", "against", "order", "x", "phrase_table"]
    ),
    JSON,
    max_size=4,
)


@FUZZ
@given(
    body=shaped(
        {
            "metric": st.sampled_from(["bleu", "pinc", "chrf", "ter", "ibleu", "nope", ""]),
            "params": METRIC_PARAMS,
            "against": st.sampled_from(["original", "reference", "x"]),
            "resources": st.dictionaries(st.text(max_size=10), st.integers(), max_size=2),
            "chunk_size": SCALARS,
        }
    )
)
def test_metric_runs_through_the_api_never_fail(body, world, db):
    response, changed = send(login_client("w-owner"), "post", f"/api/studies/{world.study}/metric-runs/create/", body)
    assert response.status_code in (200, 201, 400), response.status_code
    refused_writes_nothing(response, changed)


@FUZZ
@given(
    metric=st.sampled_from(["bleu", "pinc", "chrf", "ter", "nope"]),
    values=st.dictionaries(
        st.sampled_from(
            ["max_n", "lowercase", "smooth_method", "tokenize", "smooth_value", "char_order", "word_order", "beta"]
        ),
        st.one_of(st.text(max_size=12), WEIRD_STRINGS),
        max_size=4,
    ),
)
def test_metric_runs_from_the_page_never_fail(metric, values, world, db):
    fields = {"metric": metric, "against": "original"} | {f"p__{metric}__{k}": v for k, v in values.items()}
    response, changed = send(login_client("w-owner"), "post", f"/studies/{world.study}/metrics/", fields, form=True)
    assert response.status_code in (200, 302, 400), response.status_code
    refused_writes_nothing(response, changed)


@FUZZ
@given(
    table=st.one_of(
        st.binary(max_size=600),
        st.lists(st.tuples(st.text(max_size=12), st.text(max_size=12), SCALARS), max_size=6).map(
            lambda rows: "".join(f"{a}\t{b}\t{p}\n" for a, b, p in rows).encode("utf-8", "replace")
        ),
    ),
    min_prob=SCALARS,
    max_len=SCALARS,
)
def test_paraphrase_tables_for_scoring_never_fail(table, min_prob, max_len, world, db):
    from .conftest import upload_bytes

    body = {"kind": "paraphrases", "table": upload_bytes("t.tsv", table)}
    body |= {k: str(v) for k, v in (("min_prob", min_prob), ("max_len", max_len)) if v is not None}
    response, changed = send(
        login_client("w-owner"), "post", f"/api/alignment/studies/{world.study}/runs/create/", body, form=True
    )
    assert response.status_code in (202, 400), response.status_code
    refused_writes_nothing(response, changed, ok=(202,))


@FUZZ
@given(
    body=shaped(
        {
            "criterion": st.sampled_from(["overall", "adequacy", "x"]),
            "normalize": SCALARS,
            "include_controls_in_mean": SCALARS,
            "include_metrics": SCALARS,
            "confidence_level": SCALARS,
            "significance_level": SCALARS,
            "seed": st.one_of(st.integers(), SCALARS),
            "n_boot": SCALARS,
            "subset_min": st.one_of(st.dictionaries(st.sampled_from(["adequacy", "fluency", "x"]), SCALARS), JSON),
        }
    )
)
def test_report_settings_through_the_api_never_fail(body, world, db):
    if world.report is None:
        return
    response, changed = send(login_client("w-owner"), "post", f"/api/studies/{world.study}/reports/create/", body)
    assert response.status_code in (200, 201, 400), response.status_code
    refused_writes_nothing(response, changed, ok=(200, 201))


@FUZZ
@given(
    fields=st.dictionaries(
        st.sampled_from(
            [
                "criterion",
                "normalize",
                "include_controls_in_mean",
                "include_metrics",
                "confidence_level",
                "significance_level",
                "seed",
                "n_boot",
                "subset_adequacy",
                "subset_fluency",
            ]
        ),
        st.one_of(st.text(max_size=12), WEIRD_STRINGS, st.integers().map(str)),
        max_size=10,
    )
)
def test_report_settings_from_the_page_never_fail(fields, world, db):
    if world.report is None:
        return
    response, changed = send(
        login_client("w-owner"), "post", f"/studies/{world.study}/reports/create/", fields, form=True
    )
    assert response.status_code in (200, 302, 400), response.status_code
    refused_writes_nothing(response, changed, ok=(302,))


@FUZZ
@given(
    body=shaped({"name": st.one_of(st.text(max_size=250), WEIRD_STRINGS), "description": st.text(max_size=50)}),
    form=st.booleans(),
)
def test_creating_studies_never_fails(body, form, world, db):
    client = login_client("w-owner")
    if form:
        fields = {k: v if isinstance(v, str) else json.dumps(v) for k, v in body.items()}
        response, changed = send(client, "post", "/studies/new/", fields, form=True)
        assert response.status_code in (200, 302, 400), response.status_code
    else:
        response, changed = send(client, "post", "/api/studies/create/", body)
        assert response.status_code in (201, 400), response.status_code
    refused_writes_nothing(response, changed, ok=(201, 302))


@FUZZ
@given(
    fields=st.dictionaries(
        st.sampled_from(["username", "role"]),
        st.one_of(st.text(max_size=40), WEIRD_STRINGS, st.sampled_from(["w-annot2", "judge"])),
        max_size=2,
    )
)
def test_adding_members_never_fails(fields, world, db):
    response, changed = send(login_client("w-owner"), "post", f"/studies/{world.study}/members/", fields, form=True)
    assert response.status_code in (302, 400), response.status_code  # 400: a NUL character

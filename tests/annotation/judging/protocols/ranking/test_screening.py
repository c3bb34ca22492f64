"""Training and attention checks of ranking studies (issue 25): training sets with a reference
order (form, API, file), the pass rule, feedback that never gives the reference away,
attention sets among the real ones (page and API), the attention policy, the QC rows."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client
from rest_framework.test import APIClient

from annotation.judging import screening, training
from annotation.judging.errors import JudgmentInvalid
from annotation.judging.models import Assignment, AttentionCheck, JudgingDesign
from annotation.judging.protocols.ranking import screening as rank_screening
from annotation.judging.protocols.ranking.models import RankingJudgment
from annotation.judging.protocols.registry import protocol_get
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.judging.training import TrainingInvalid
from metrics.core.tabular import TabularError
from tests.annotation.judging.test_blinding import hidden
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

ITEMS = [
    {
        "original": "The cat sat on the mat.",
        "p1": "A cat was sitting on the mat.",
        "p2": "The dog barked.",
        "p3": "On the mat sat the cat.",
        "reference": "1 = 3 > 2",
        "explanation": "2 changes the meaning.",
    },
    {
        "original": "It rained all day.",
        "p1": "Rain fell.",
        "p2": "It rained the whole day.",
        "p3": "The sun shone.",
        "reference": "2 > 1 > 3",
        "explanation": "3 says the opposite.",
    },
]


@pytest.fixture
def rank_study(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=4, systems=("alpha", "beta", "gamma", "delta"), name="Rk")
    add_judge(study, "ann")
    design_update(
        study=study,
        changes={
            "protocol": "ranking",
            "seed": 5,
            "ranking_k": 3,
            "control_counts": {"identical": 1, "random": 0, "unigram": 0},
        },
    )
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def trained(rank_study):
    for row in ITEMS:
        training.training_item_add(study=rank_study, row=row, from_text=True)
    screening.screening_settings_update(study=rank_study, changes={"training_required": 1, "training_retries": 0})
    return rank_study


def ann(study):
    return Assignment.objects.get(study=study, judge__username="ann")


def test_the_unit_says_it_has_screening_on_its_own_page():
    unit = protocol_get("ranking")
    assert unit.has_screening and unit.attention_page == "judging:rank" and not unit.training_tolerances
    assert unit.training_template == "judging/ranking/training.html"


def test_a_training_set_stores_its_texts_and_the_reference_order(trained):
    items = training.training_items(study=trained)
    assert [i.candidate for i in items] == ["A cat was sitting on the mat.", "Rain fell."]
    assert items[0].expected == {"others": ["The dog barked.", "On the mat sat the cat."], "reference": [[1, 3], 2]}
    assert items[1].expected["reference"] == [2, 1, 3]
    assert rank_screening.reference_text(items[0].expected) == "1 = 3 > 2"


@pytest.mark.parametrize(
    ("change", "column"),
    [
        ({"p3": ""}, "p1"),  # k = 3: three candidates needed
        ({"p4": "One too many."}, "p1"),
        ({"reference": "1 > 2"}, "reference"),  # 3 missing
        ({"reference": "1 > 1 > 2 = 3"}, "reference"),  # twice
        ({"reference": "1 > 4 > 2 = 3"}, "reference"),  # no such candidate
        ({"reference": "1 = 2 = 3"}, "reference"),  # checks nothing
        ({"reference": "first"}, "reference"),
        ({"reference": ""}, "reference"),
        ({"original": ""}, "original"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_training_set_is_refused_with_the_column_named_and_nothing_stored(rank_study, change, column):
    with pytest.raises(TrainingInvalid) as exc:
        training.training_item_add(study=rank_study, row={**ITEMS[0], **change}, from_text=True)
    assert column in exc.value.field_errors
    assert training.training_items(study=rank_study) == []


def test_training_sets_are_imported_from_a_file_all_or_nothing(rank_study):
    good = (
        "original,p1,p2,p3,reference,explanation\n"
        "O one.,P one.,P two.,P three.,2 > 1 = 3,Why.\n"
        "O two.,Q one.,Q two.,Q three.,3 > 2 > 1,\n"
    )
    assert training.training_items_import(study=rank_study, data=good.encode(), filename="t.csv") == 2
    bad = good + "O three.,R one.,R two.,R three.,1 > 2,\n"
    with pytest.raises((TrainingInvalid, TabularError)):
        training.training_items_import(study=rank_study, data=bad.encode(), filename="t.csv")
    assert len(training.training_items(study=rank_study)) == 2
    jsonl = b'{"original": "O.", "p1": "a", "p2": "b", "p3": "c", "reference": [3, [1, 2]]}\n'
    assert training.training_items_import(study=rank_study, data=jsonl, filename="t.jsonl") == 1
    assert training.training_items(study=rank_study)[0].expected["reference"] == [3, [1, 2]]


@pytest.mark.parametrize(
    ("order", "right"),
    [
        ([[1, 3], 2], True),
        ([1, 3, 2], True),  # the reference ties 1 and 3: either order
        ([3, 1, 2], True),
        ([1, 2, 3], False),  # 2 above 3
        ([[1, 2, 3]], False),  # a tie where the reference orders
        ([2, [1, 3]], False),
    ],
)
def test_an_answer_is_right_when_it_keeps_every_strict_preference_of_the_reference(order, right):
    expected = {"others": ["b", "c"], "reference": [[1, 3], 2]}
    assert rank_screening.training_correct(values={"order": order}, expected=expected) is right


def test_the_feedback_names_agreement_per_paraphrase_never_the_reference():
    verdicts = rank_screening.training_verdicts(values={"order": [1, 2, 3]}, expected={"reference": [[1, 3], 2]})
    assert verdicts == {"1": "agree", "2": "disagree", "3": "disagree"}


def test_the_training_page_gives_one_wrong_set_feedback_then_the_real_sets(trained):
    client = Client()
    client.force_login(User.objects.get(username="ann"))
    base = f"/judge/studies/{trained.pk}"
    client.post(f"{base}/instructions/")
    r = client.get(f"{base}/rank/")
    assert r.status_code == 302 and r.url.endswith("/training/")
    page = client.get(f"{base}/training/").content.decode()
    assert 'id="rank-list"' in page and "A cat was sitting on the mat." in page
    assert "1 = 3" not in page and "reference" not in page.lower()
    r = client.post(f"{base}/training/", {"token": hidden(page, "token"), "rank_1": "1"})  # 2 and 3 unranked
    assert r.status_code == 400 and ann(trained).training_answers.count() == 0
    r = client.post(f"{base}/training/", {"token": hidden(page, "token"), "rank_1": "1", "rank_2": "2", "rank_3": "3"})
    assert r.status_code == 302
    feedback = client.get(r.url).content.decode()
    assert "Not the same as ours" in feedback and "2 changes the meaning." in feedback
    assert "1 = 3" not in feedback
    page = client.get(f"{base}/training/").content.decode()
    r = client.post(f"{base}/training/", {"token": hidden(page, "token"), "rank_1": "2", "rank_2": "1", "rank_3": "3"})
    a = ann(trained)
    assert a.training_passed_at is not None
    assert 'id="rank-list"' in client.get(f"{base}/rank/").content.decode()


def test_the_training_api_takes_and_serves_training_sets(rank_study, researcher):
    rita, judge = APIClient(), APIClient()
    rita.force_authenticate(researcher)
    judge.force_authenticate(User.objects.get(username="ann"))
    url = f"/api/judging/studies/{rank_study.pk}/"
    r = rita.post(
        url + "training/items/",
        {
            "original": "O.",
            "candidate": "One.",
            "explanation": "Why.",
            "expected": {"candidates": ["Two.", "Three."], "reference": [2, [1, 3]]},
        },
        format="json",
    )
    assert r.status_code == 201, r.json()
    assert r.json()["expected"] == {"others": ["Two.", "Three."], "reference": [2, [1, 3]]}
    r = rita.post(
        url + "training/items/",
        {"original": "O.", "candidate": "One.", "expected": {"candidates": ["Two."], "reference": [2, 1]}},
        format="json",
    )
    assert r.status_code == 400
    assert judge.get(url + "rankings/next/").status_code == 403  # the training first
    nxt = judge.get(url + "training/").json()["next"]
    assert nxt == {
        "token": nxt["token"],
        "original": "O.",
        "candidates": [{"place": 1, "text": "One."}, {"place": 2, "text": "Two."}, {"place": 3, "text": "Three."}],
    }
    r = judge.post(url + "training/answers/", {"item": nxt["token"], "scores": {"order": [1, 2]}}, format="json")
    assert r.status_code == 400
    r = judge.post(url + "training/answers/", {"item": nxt["token"], "scores": {"order": [1, 2, 3]}}, format="json")
    assert r.status_code == 201
    body = r.json()
    assert body["correct"] is False and body["feedback"] == {"1": "disagree", "2": "disagree", "3": "agree"}
    assert "reference" not in str(body)


def test_the_rules_form_offers_no_tolerances(rank_study, researcher):
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/studies/{rank_study.pk}/judging/design/").content.decode()
    assert 'id="training-add-form"' in page and 'name="reference"' in page and 'name="p3"' in page
    assert 'name="p4"' not in page and "Tolerance for" not in page
    assert "training-k-mismatch" not in page
    assert 'name="training_tolerance"' not in page and 'name="training_criteria"' not in page  # one question
    r = client.post(
        f"/studies/{rank_study.pk}/judging/screening/",
        {
            "training_required": "1",
            "training_retries": "0",
            "training_items_per_attempt": "",
            "attention_count": "2",
            "attention_policy": "warn",
            "attention_max_failures": "2",
            "qc_auto_pvalue": "0.05",
            "qc_auto_min_controls": "10",
        },
    )
    assert r.status_code == 302
    saved = screening.settings_for_study(study=rank_study)
    assert (saved.attention_count, saved.training_required, saved.training_criteria) == (2, 1, [])


# --- attention checks ---------------------------------------------------------------------------


@pytest.fixture
def checked(rank_study):
    screening.screening_settings_update(
        study=rank_study, changes={"attention_count": 3, "attention_policy": "end", "attention_max_failures": 2}
    )
    screening.attention_plan(assignment=ann(rank_study), settings=screening.settings_for_study(study=rank_study))
    return rank_study


def _right(check) -> dict:
    _item, texts, copy, unrelated = rank_screening.attention_layout(check=check)
    rest = [p for p in range(1, len(texts) + 1) if p not in (copy, unrelated)]
    return {f"rank_{p}": str(r) for r, p in enumerate([copy, *rest, unrelated], 1)}


def _wrong(check) -> dict:
    _item, texts, copy, unrelated = rank_screening.attention_layout(check=check)
    rest = [p for p in range(1, len(texts) + 1) if p not in (copy, unrelated)]
    return {f"rank_{p}": str(r) for r, p in enumerate([unrelated, *rest, copy], 1)}


def test_an_attention_set_holds_a_copy_of_its_original_and_an_unrelated_sentence(checked):
    checks = list(AttentionCheck.objects.filter(assignment=ann(checked)))
    assert len(checks) == 3 and {(c.criterion, c.expected) for c in checks} == {("ranking", 1.0)}
    for c in checks:
        entry = rank_screening.attention_entry(check=c)
        _item, texts, copy, unrelated = rank_screening.attention_layout(check=c)
        assert len(entry.candidates) == 3 and entry.token == c.token
        assert entry.candidates[copy - 1] == entry.original and entry.candidates[unrelated - 1] != entry.original
        assert rank_screening.attention_entry(check=c).candidates == entry.candidates  # drawn the same again
        assert not _item.is_control and entry.candidates.count(entry.original) == 1


def _walk(study, answer_check):
    client = Client()
    client.force_login(User.objects.get(username="ann"))
    base = f"/judge/studies/{study.pk}"
    client.post(f"{base}/instructions/")
    seen = []
    while True:
        r = client.get(f"{base}/rank/")
        if r.status_code == 302:
            return seen, r
        page = r.content.decode()
        if 'name="token"' not in page:
            return seen, r
        token = hidden(page, "token")
        check = AttentionCheck.objects.filter(token=token).first()
        k = len(re.findall(r'name="rank_\d"', page))
        ranks = answer_check(check) if check else {f"rank_{p}": str(p) for p in range(1, k + 1)}
        seen.append(("check" if check else "set", token))
        client.post(
            f"{base}/rank/submit/",
            {"token": token, "serve": hidden(page, "serve"), "key": hidden(page, "key"), **ranks},
        )


def test_attention_sets_come_among_the_sets_and_the_right_order_passes(checked):
    seen, _ = _walk(checked, _right)
    a = ann(checked)
    kinds = [k for k, _ in seen]
    assert kinds.count("check") == 3 and kinds.count("set") == a.n_items
    positions = sorted(AttentionCheck.objects.filter(assignment=a).values_list("after_done", flat=True))
    assert [i for i, k in enumerate(kinds) if k == "check"] == [p + n for n, p in enumerate(positions)]
    assert all(c.passed and c.answer == 1.0 for c in AttentionCheck.objects.filter(assignment=a))
    assert RankingJudgment.objects.filter(item__assignment=a).count() == a.n_items  # checks are no judgments


def test_failing_attention_sets_screens_out_after_the_limit_with_the_end_policy(checked):
    seen, last = _walk(checked, _wrong)
    a = ann(checked)
    assert a.screened_out_at is not None and a.screened_out_rule == "attention"
    assert [k for k, _ in seen].count("check") == 2 and last.url.endswith("/screened-out/")


def test_the_copy_may_tie_first_and_the_unrelated_last_but_not_with_each_other(checked):
    check = AttentionCheck.objects.filter(assignment=ann(checked)).first()
    _item, _texts, copy, unrelated = rank_screening.attention_layout(check=check)
    (rest,) = {1, 2, 3} - {copy, unrelated}
    assert rank_screening.attention_score(check=check, value={"order": [[copy, rest], unrelated]}) == (1.0, True)
    assert rank_screening.attention_score(check=check, value={"order": [copy, [rest, unrelated]]}) == (1.0, True)
    assert rank_screening.attention_score(check=check, value={"order": [[copy, rest, unrelated]]}) == (1.0, False)
    assert rank_screening.attention_score(check=check, value={"order": [rest, copy, unrelated]}) == (2.0, False)


def test_an_attention_set_needs_every_paraphrase_ranked(checked):
    a = ann(checked)
    check = AttentionCheck.objects.filter(assignment=a).first()
    with pytest.raises(JudgmentInvalid):
        screening.attention_answer(assignment=a, token=check.token, value={"rank_1": "1"})
    check.refresh_from_db()
    assert check.answered_at is None


def test_the_rankings_api_serves_attention_sets_like_sets(checked):
    api = APIClient()
    api.force_authenticate(User.objects.get(username="ann"))
    a = ann(checked)
    first = AttentionCheck.objects.filter(assignment=a).order_by("after_done").first()
    url = f"/api/judging/studies/{checked.pk}/rankings/"
    for _ in range(first.after_done):
        entry = api.get(url + "next/").json()["ranking"]
        r = api.post(
            url,
            {
                "ranking": entry["token"],
                "key": f"key-{entry['token']}",
                "order": [1, 2, 3],
                "serve_stamp": entry["serve_stamp"],
            },
            format="json",
        )
        assert r.status_code == 201
    body = api.get(url + "next/").json()
    real = api.get(url + f"{body['ranking']['previous']}/").json()
    assert body["ranking"]["token"] == first.token and set(body["ranking"]) == set(real)
    assert len(body["ranking"]["token"]) == len(real["token"])
    r = api.post(
        url,
        {"ranking": first.token, "key": "key-check-1", "order": [1, 2], "serve_stamp": body["ranking"]["serve_stamp"]},
        format="json",
    )
    assert r.status_code == 400
    ranks = _right(first)
    order = [p for p, _ in sorted(((int(k[5:]), int(v)) for k, v in ranks.items()), key=lambda x: x[1])]
    r = api.post(
        url,
        {"ranking": first.token, "key": "key-check-2", "order": order, "serve_stamp": body["ranking"]["serve_stamp"]},
        format="json",
    )
    assert r.status_code == 201
    first.refresh_from_db()
    assert first.passed
    assert api.get(url + "next/").json()["ranking"]["token"] != first.token


def test_the_qc_rows_show_each_judges_attention_checks(checked):
    _walk(checked, _right)
    rows = {r["judge"]: r for r in protocol_get("ranking").qc_rows(study=checked)}
    assert rows["ann"]["attention"] == (3, 3)


def test_the_design_page_flags_training_sets_left_with_another_k(trained, researcher):
    JudgingDesign.objects.filter(study=trained).update(ranking_k=4)
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/studies/{trained.pk}/judging/design/").content.decode()
    assert page.count('class="error training-k-mismatch"') == 2


def test_an_attention_set_refuses_what_a_real_set_refuses_and_nothing_more(checked):
    """Scores asked: a set sent without them is refused, a check too (same status and message);
    with them both are taken."""
    JudgingDesign.objects.filter(study=checked).update(ranking_scores=True)
    api = APIClient()
    api.force_authenticate(User.objects.get(username="ann"))
    url = f"/api/judging/studies/{checked.pk}/rankings/"
    first = AttentionCheck.objects.filter(assignment=ann(checked)).order_by("after_done").first()
    for _ in range(first.after_done):
        entry = api.get(url + "next/").json()["ranking"]
        bare = api.post(
            url,
            {
                "ranking": entry["token"],
                "key": f"k0-{entry['token']}",
                "order": [1, 2, 3],
                "serve_stamp": entry["serve_stamp"],
            },
            format="json",
        )
        assert bare.status_code == 400
        r = api.post(
            url,
            {
                "ranking": entry["token"],
                "key": f"k1-{entry['token']}",
                "order": [1, 2, 3],
                "scores": {"1": 9, "2": 8, "3": 7},
                "serve_stamp": entry["serve_stamp"],
            },
            format="json",
        )
        assert r.status_code == 201
    entry = api.get(url + "next/").json()["ranking"]
    assert entry["token"] == first.token and entry["asks_scores"] is True
    r = api.post(
        url,
        {"ranking": first.token, "key": "k0-check", "order": [1, 2, 3], "serve_stamp": entry["serve_stamp"]},
        format="json",
    )
    assert r.status_code == 400 and r.json()["detail"] == bare.json()["detail"]
    first.refresh_from_db()
    assert first.answered_at is None
    r = api.post(
        url,
        {
            "ranking": first.token,
            "key": "k1-check",
            "order": [1, 2, 3],
            "scores": {"1": 9, "2": 8, "3": 7},
            "serve_stamp": entry["serve_stamp"],
        },
        format="json",
    )
    assert r.status_code == 201
    first.refresh_from_db()
    assert first.answered_at is not None

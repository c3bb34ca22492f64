"""k-way ranking: opening (sets, screen orders, controls), the judge's page and API, submission,
records, QC and exports."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter

import pytest
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from annotation.judging.errors import JudgmentInvalid, KeyReused
from annotation.judging.models import Assignment
from annotation.judging.protocols.ranking import selectors as ranking_reads
from annotation.judging.protocols.ranking import services as ranking
from annotation.judging.protocols.ranking.models import RankingItem, RankingJudgment
from annotation.judging.protocols.ranking.parsers import parse_rankings_file
from annotation.judging.services.design import design_update
from annotation.judging.services.opening import study_judging_open
from annotation.models import Candidate
from metrics.core.ranking.sets import screen_order, set_key
from tests.annotation.judging.conftest import new_key
from tests.factories import study_with_data

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta", "gamma", "delta", "eps")


def _open(study, **design):
    design_update(study=study, changes={"protocol": "ranking", "seed": 7, **design})
    study_judging_open(study=study)
    study.refresh_from_db()
    return study


@pytest.fixture
def rank_study(researcher, add_judge):
    """4 originals × 5 systems, k = 3, judges ann and bob, one identical-copy control per original."""
    study = study_with_data(owner=researcher, n_originals=4, systems=SYSTEMS, name="Rank study")
    add_judge(study, "ann")
    add_judge(study, "bob")
    return _open(study, ranking_k=3, control_counts={"identical": 1, "random": 0, "unigram": 0})


def _items(study, username):
    return list(
        RankingItem.objects.filter(assignment__study=study, assignment__judge__username=username).order_by("position")
    )


def _names(item):
    names = dict(Candidate.objects.filter(pk__in=item.candidates).values_list("id", "system__name"))
    return [names[c] for c in item.candidates]


def test_opening_covers_every_system_of_every_original_in_sets_of_k_balanced_over_systems(rank_study):
    items = _items(rank_study, "ann")
    genuine = [it for it in items if not it.is_control]
    assert len(genuine) == 4 * 2  # ⌈5 / 3⌉ sets per original
    used = Counter()
    for it in genuine:
        assert len(it.candidates) == 3 and len(set(it.candidates)) == 3
        assert {c.original_id for c in Candidate.objects.filter(pk__in=it.candidates)} == {it.original_id}
        used.update(_names(it))
    per_original = {}
    for it in genuine:
        per_original.setdefault(it.original_id, set()).update(_names(it))
    assert all(s == set(SYSTEMS) for s in per_original.values())
    assert max(used.values()) - min(used.values()) <= 1  # 24 places over 5 systems: 4 or 5 each
    controls = [it for it in items if it.is_control]
    assert len(controls) == 4
    assert all(sum(n.startswith("control:") for n in _names(it)) == 1 and len(it.candidates) == 3 for it in controls)
    assert Assignment.objects.get(study=rank_study, judge__username="ann").n_items == len(items)


def test_screen_order_is_the_judges_seeded_shuffle_not_the_system_or_id_order(rank_study):
    in_name_order = in_id_order = 0
    for username in ("ann", "bob"):
        assignment = Assignment.objects.get(study=rank_study, judge__username=username)
        for it in _items(rank_study, username):
            names = _names(it)
            key = set_key(it.original.external_id, names)
            assert names == screen_order(names, seed=assignment.seed, key=key)
            in_name_order += names == sorted(names)
            in_id_order += it.candidates == sorted(it.candidates)
    assert in_name_order < 12 and in_id_order < 12  # of 24 sets: a shuffle, not an order


def _entry(study, judge):
    assignment = Assignment.objects.get(study=study, judge=judge)
    return ranking.ranking_next_for_judge(assignment=assignment)


def test_an_order_of_places_is_stored_as_candidate_ids_with_ties_and_revisions(rank_study):
    ann = Assignment.objects.get(study=rank_study, judge__username="ann").judge
    entry = _entry(rank_study, ann)
    item = RankingItem.objects.get(token=entry.token)
    j, created = ranking.ranking_submit(
        study=rank_study, judge=ann, token=entry.token, key=new_key(), order=[3, [1, 2]], serve_stamp=entry.serve_stamp
    )
    assert created and j.groups == [item.candidates[2], [item.candidates[0], item.candidates[1]]]
    assert j.revision == 1 and j.is_latest
    again = ranking.ranking_for_judge(study=rank_study, judge=ann, token=entry.token)
    assert again.order == [3, [1, 2]] and again.ranks == {3: 1, 1: 2, 2: 2} and again.is_revision
    j2, _ = ranking.ranking_submit(
        study=rank_study, judge=ann, token=entry.token, key=new_key(), order=[1, 2, 3], serve_stamp=again.serve_stamp
    )
    assert j2.revision == 2 and j2.groups == item.candidates
    assert RankingJudgment.objects.filter(item=item, is_latest=True).get().pk == j2.pk
    assert _entry(rank_study, ann).token != entry.token  # the resume point moved on


def test_submission_is_idempotent_on_its_key(rank_study):
    ann = Assignment.objects.get(study=rank_study, judge__username="ann").judge
    entry = _entry(rank_study, ann)
    key = new_key()
    first, created = ranking.ranking_submit(
        study=rank_study, judge=ann, token=entry.token, key=key, order=[2, 1, 3], serve_stamp=entry.serve_stamp
    )
    second, created2 = ranking.ranking_submit(
        study=rank_study, judge=ann, token=entry.token, key=key, order=[2, 1, 3], serve_stamp=entry.serve_stamp
    )
    assert created and not created2 and first.pk == second.pk
    with pytest.raises(KeyReused):
        ranking.ranking_submit(
            study=rank_study, judge=ann, token=entry.token, key=key, order=[1, 2, 3], serve_stamp=entry.serve_stamp
        )
    assert RankingJudgment.objects.count() == 1


@pytest.mark.parametrize(
    "order",
    [[1, 2], [1, 2, 2], [1, [2, 3], 3], [0, 1, 2], [1, 2, 4], [], "1,2,3", [1, [], 2, 3], [1, 2, "x"], [True, 2, 3]],
)
def test_a_bad_order_is_refused_with_what_is_wrong(rank_study, order):
    ann = Assignment.objects.get(study=rank_study, judge__username="ann").judge
    entry = _entry(rank_study, ann)
    with pytest.raises(JudgmentInvalid) as exc:
        ranking.ranking_submit(
            study=rank_study, judge=ann, token=entry.token, key=new_key(), order=order, serve_stamp=entry.serve_stamp
        )
    assert exc.value.field_errors
    assert not RankingJudgment.objects.exists()


def test_scores_are_required_on_0_to_100_when_the_design_asks_for_them(researcher, add_judge):
    study = study_with_data(owner=researcher, n_originals=2, systems=SYSTEMS[:3], name="Scored")
    judge = add_judge(study, "ann")
    _open(study, ranking_k=3, ranking_scores=True)
    entry = _entry(study, judge)
    for scores in (
        None,
        {"1": 50, "2": 50},
        {"1": 50, "2": 50, "3": 101},
        {"1": 50, "2": "", "3": 4},
        {"1": 1, "2": 2, "3": 3, "4": 4},
        {"1": float("nan"), "2": 1, "3": 1},
    ):
        with pytest.raises(JudgmentInvalid):
            ranking.ranking_submit(
                study=study,
                judge=judge,
                token=entry.token,
                key=new_key(),
                order=[1, 2, 3],
                scores=scores,
                serve_stamp=entry.serve_stamp,
            )
    j, _ = ranking.ranking_submit(
        study=study,
        judge=judge,
        token=entry.token,
        key=new_key(),
        order=[1, 2, 3],
        scores={"1": 90, "2": 55.5, "3": 0},
        serve_stamp=entry.serve_stamp,
    )
    item = RankingItem.objects.get(token=entry.token)
    assert j.scores == {str(item.candidates[0]): 90, str(item.candidates[1]): 55.5, str(item.candidates[2]): 0}
    assert ranking.ranking_for_judge(study=study, judge=judge, token=entry.token).scores == {1: 90, 2: 55.5, 3: 0}


def test_scores_are_refused_when_the_design_asks_none(rank_study):
    ann = Assignment.objects.get(study=rank_study, judge__username="ann").judge
    entry = _entry(rank_study, ann)
    with pytest.raises(JudgmentInvalid):
        ranking.ranking_submit(
            study=rank_study,
            judge=ann,
            token=entry.token,
            key=new_key(),
            order=[1, 2, 3],
            scores={"1": 1, "2": 2, "3": 3},
            serve_stamp=entry.serve_stamp,
        )


def test_ranks_from_the_form_become_an_order_with_ties():
    assert ranking.order_from_ranks({"1": "2", "2": "1", "3": "2"}, k=3) == [2, [1, 3]]
    assert ranking.order_from_ranks({"1": "1", "2": "3", "3": "2"}, k=3) == [1, 3, 2]
    for bad in ({"1": "1", "2": "1"}, {"1": "1", "2": "x", "3": "2"}, {"1": "0", "2": "1", "3": "2"}):
        with pytest.raises(JudgmentInvalid):
            ranking.order_from_ranks(bad, k=3)


def _rank_all(study, judge, choose):
    """Answer every set of ``judge`` with ``choose(system names in screen order)`` → order of places."""
    assignment = Assignment.objects.get(study=study, judge=judge)
    while (entry := ranking.ranking_next_for_judge(assignment=assignment)) is not None:
        item = RankingItem.objects.get(token=entry.token)
        ranking.ranking_submit(
            study=study,
            judge=judge,
            token=entry.token,
            key=new_key(),
            order=choose(_names(item)),
            serve_stamp=entry.serve_stamp,
        )


def _by_name(names):
    """Best first: a control copy first, then alphabetical (alpha best), places 1-based."""
    order = sorted(range(len(names)), key=lambda i: (not names[i].startswith("control:"), names[i]))
    return [i + 1 for i in order]


def test_records_exports_and_qc_name_the_systems_the_judges_ranked(rank_study):
    users = {a.judge.username: a.judge for a in Assignment.objects.filter(study=rank_study).select_related("judge")}
    _rank_all(rank_study, users["ann"], _by_name)
    _rank_all(rank_study, users["bob"], lambda names: list(reversed(_by_name(names))))
    records = ranking_reads.ranking_records(study=rank_study)
    assert len(records) == 2 * 12
    ann = [r for r in records if r.judge == "ann"]
    assert all(len(g) == 1 for r in ann for g in r.groups)
    assert all(r.groups[0][0] == "control:identical" for r in ann if any("control" in s for s in r.systems))
    qc = {r["judge"]: r for r in ranking_reads.ranking_qc(study=rank_study)}
    assert (qc["ann"]["n"], qc["ann"]["correct"]) == (4, 4) and qc["ann"]["passes"]
    assert (qc["bob"]["n"], qc["bob"]["correct"]) == (4, 0) and not qc["bob"]["passes"]
    # the JSONL export reads back with the importer's parser, ranking for ranking
    lines = [json.dumps(line) for line in ranking_reads.ranking_export_lines(study=rank_study)]
    # one line per judgment: each line is a ranking file of its own (a judge ranks an original
    # several times here: more systems than k, and control sets, which the format leaves out)
    parsed = [row for line in lines for row in parse_rankings_file(line.encode(), filename="x.jsonl").rows]
    genuine = [
        (r.judge, r.original, tuple(tuple(s for s in g if not s.startswith("control:")) for g in r.groups))
        for r in records
    ]
    assert sorted((r.judge, r.original_id, r.groups) for r in parsed) == sorted(
        (j, o, tuple(g for g in groups if g)) for j, o, groups in genuine
    )
    rows = list(ranking_reads.ranking_export_rows(study=rank_study))
    assert rows[0] == ranking_reads.EXPORT_HEADER and len(rows) == 1 + 2 * 12 * 3


def test_page_and_api_walk(rank_study):
    ann = Assignment.objects.get(study=rank_study, judge__username="ann").judge
    client, api = Client(), APIClient()
    client.force_login(ann)
    api.force_authenticate(ann)
    sid = rank_study.pk
    assert client.get(f"/judge/studies/{sid}/").url.endswith(f"/judge/studies/{sid}/rank/")
    assert client.get(f"/judge/studies/{sid}/rank/").url.endswith("/instructions/")
    page = client.get(f"/judge/studies/{sid}/instructions/").content.decode()
    assert "How to rank" in page
    client.post(f"/judge/studies/{sid}/instructions/")
    page = client.get(f"/judge/studies/{sid}/rank/").content.decode()
    token = re.search(r'name="token" value="([^"]+)"', page).group(1)
    serve = re.search(r'name="serve" value="([^"]+)"', page).group(1)
    key = re.search(r'name="key" value="([^"]+)"', page).group(1)
    assert page.count('class="rank-card') == 3
    bad = client.post(
        f"/judge/studies/{sid}/rank/submit/",
        {"token": token, "serve": serve, "key": key, "rank_1": "1", "rank_2": "", "rank_3": "2"},
    )
    assert bad.status_code == 400 and "rate-error" in bad.content.decode()
    ok = client.post(
        f"/judge/studies/{sid}/rank/submit/",
        {"token": token, "serve": serve, "key": key, "rank_1": "2", "rank_2": "1", "rank_3": "2"},
    )
    assert ok.status_code == 302
    item = RankingItem.objects.get(token=token)
    assert RankingJudgment.objects.get(item=item).groups == [
        item.candidates[1],
        [item.candidates[0], item.candidates[2]],
    ]
    revise = client.get(f"/judge/studies/{sid}/rank/{token}/").content.decode()
    assert 'id="rank_2" value="1"' in revise
    nxt = api.get(f"/api/judging/studies/{sid}/rankings/next/").json()
    assert not nxt["finished"] and nxt["done"] == 1 and len(nxt["ranking"]["candidates"]) == 3
    r = nxt["ranking"]
    body = {"ranking": r["token"], "key": new_key(), "order": [1, [2, 3]], "serve_stamp": r["serve_stamp"]}
    assert api.post(f"/api/judging/studies/{sid}/rankings/", body, format="json").status_code == 201
    again = api.post(f"/api/judging/studies/{sid}/rankings/", body, format="json")
    assert again.status_code == 200 and again.json()["order"] == [1, [2, 3]] and not again.json()["created"]
    wrong = api.post(
        f"/api/judging/studies/{sid}/rankings/", {**body, "key": new_key(), "order": [1, 1, 2]}, format="json"
    )
    assert wrong.status_code == 400 and "twice" in json.dumps(wrong.json())
    detail = api.get(f"/api/judging/studies/{sid}/rankings/{r['token']}/").json()
    assert detail["order"] == [1, [2, 3]] and detail["revision"] == 1
    assert api.get(f"/api/judging/studies/{sid}/rankings/nope/").status_code == 404


def test_exports_on_the_design_page(rank_study, researcher):
    users = {a.judge.username: a.judge for a in Assignment.objects.filter(study=rank_study).select_related("judge")}
    _rank_all(rank_study, users["ann"], _by_name)
    client = Client()
    client.force_login(researcher)
    design = client.get(f"/studies/{rank_study.pk}/judging/design/").content.decode()
    assert "rankings.jsonl" in design and "rankings.csv" in design
    body = b"".join(client.get(f"/studies/{rank_study.pk}/judging/export/rankings.jsonl").streaming_content)
    assert len(body.decode().splitlines()) == 12
    csv_body = b"".join(client.get(f"/studies/{rank_study.pk}/judging/export/rankings.csv").streaming_content)
    rows = list(csv.DictReader(io.StringIO(csv_body.decode())))
    assert len(rows) == 36 and {r["judge"] for r in rows} == {"ann"}


def test_the_jsonl_export_imports_into_another_ranking_study_and_bad_lines_are_named(researcher, add_judge, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from annotation.importing.reading import StudyImportError
    from annotation.judging.protocols.ranking.imports import rankings_import_file

    source = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS[:3], name="Source")
    judge = add_judge(source, "ann")
    _open(source, ranking_k=3, ranking_scores=True, control_counts={"identical": 0, "random": 0, "unigram": 0})
    assignment = Assignment.objects.get(study=source, judge=judge)
    while (entry := ranking.ranking_next_for_judge(assignment=assignment)) is not None:
        ranking.ranking_submit(
            study=source,
            judge=judge,
            token=entry.token,
            key=new_key(),
            order=[[2, 3], 1],
            scores={"1": 10, "2": 70, "3": 70},
            serve_stamp=entry.serve_stamp,
        )
    lines = "\n".join(json.dumps(x) for x in ranking_reads.ranking_export_lines(study=source)).encode()

    target = study_with_data(owner=researcher, n_originals=3, systems=SYSTEMS[:3], name="Target")
    design_update(study=target, changes={"protocol": "ranking", "ranking_k": 3})
    bad = (
        lines + b'\n{"judge": "x", "original_id": "nope", "ranking": ["alpha", "beta"]}'
        b'\n{"judge": "x", "original_id": "s0", "ranking": ["alpha", "zeta"]}'
    )
    with pytest.raises(StudyImportError) as exc:
        rankings_import_file(study=target, data=bad, filename="r.jsonl")
    where = [(i.line, i.column) for i in exc.value.issues]
    assert where == [(4, "original_id"), (5, "ranking")]
    assert not RankingJudgment.objects.filter(study=target).exists()

    path = tmp_path / "r.jsonl"
    path.write_bytes(lines)
    call_command("import_rankings", str(path), "--study", "Target")
    imported = {(r.judge, r.original, r.groups) for r in ranking_reads.ranking_records(study=target)}
    exported = {
        (f"ann@s{target.pk}.imported", r.original, r.groups) for r in ranking_reads.ranking_records(study=source)
    }
    assert imported == exported
    assert {j.source for j in RankingJudgment.objects.filter(study=target)} == {"import"}
    with pytest.raises(CommandError):
        call_command("import_rankings", str(path), "--study", "Source-not-there")


def test_late_judges_and_join_link_participants_get_sets_with_their_own_screen_orders(rank_study, make_user):
    from annotation.judging.models import JudgingDesign
    from annotation.judging.protocols.ranking.unit import RANKING

    design = JudgingDesign.objects.get(study=rank_study)
    late = RANKING.assignment_late(study=rank_study, design=design, judge=make_user("cy"))
    ann_sets = sorted(sorted(it.candidates) for it in _items(rank_study, "ann"))
    assert sorted(sorted(it.candidates) for it in _items(rank_study, "cy")) == ann_sets
    assert late.n_items == len(ann_sets)
    participant = RANKING.assignment_for_participant(study=rank_study, design=design, judge=make_user("p1"), n_items=3)
    items = _items(rank_study, "p1")
    assert participant.n_items == len(items) == 3
    assert all(sorted(it.candidates) in ann_sets for it in items)
    entry = ranking.ranking_next_for_judge(assignment=participant)
    ranking.ranking_submit(
        study=rank_study,
        judge=participant.judge,
        token=entry.token,
        key=new_key(),
        order=[1, 2, 3],
        serve_stamp=entry.serve_stamp,
    )
    assert RANKING.assignment_release_unfinished(assignment=participant) == 2
    assert RANKING.items_done(assignment=participant) == 1 and RANKING.items_remaining(assignment=participant) == 0
    progress = RANKING.progress_by_judge(study=rank_study)
    assert progress[participant.judge_id][:2] == (1, 1)


JSONISH = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(10**30), max_value=10**30),
        st.floats(allow_nan=True, allow_infinity=True),
        st.integers(min_value=0, max_value=4),
        st.text(max_size=8),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text("123abc", max_size=3), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=JSONISH, scores=JSONISH)
def test_any_json_order_or_scores_is_answered_without_a_server_error_and_a_refusal_stores_nothing(
    rank_study, order, scores
):
    ann = Assignment.objects.get(study=rank_study, judge__username="ann").judge
    entry = _entry(rank_study, ann)
    if entry is None:
        return
    api = APIClient()
    api.force_authenticate(ann)
    n = RankingJudgment.objects.count()
    body = json.dumps(
        {"ranking": entry.token, "key": new_key(), "order": order, "scores": scores, "serve_stamp": entry.serve_stamp},
        allow_nan=True,
    )
    response = api.post(f"/api/judging/studies/{rank_study.pk}/rankings/", body, content_type="application/json")
    assert response.status_code < 500
    if response.status_code >= 400:
        assert RankingJudgment.objects.count() == n
    else:
        assert RankingJudgment.objects.count() == n + 1


@pytest.mark.parametrize("mode", [{}, {"judges_mode": "k", "judges_per_item": 1}])
def test_a_judge_added_to_a_ranking_study_opened_with_no_judges_gets_every_planned_set(researcher, add_judge, mode):
    from annotation.judging.services.assignments import assignment_ensure_for_judge

    study = study_with_data(owner=researcher, n_originals=4, systems=SYSTEMS, name="Field ranking")
    _open(study, ranking_k=3, control_counts={"identical": 1, "random": 0, "unigram": 0}, **mode)
    assert not RankingItem.objects.filter(assignment__study=study).exists()
    late = assignment_ensure_for_judge(study=study, judge=add_judge(study, "cy"))
    # 4 originals: two genuine sets of ⌈5 / 3⌉ each and one control set, as opening plans them.
    assert late.joined_late and late.n_items == len(_items(study, "cy")) == 4 * 2 + 4
    second = assignment_ensure_for_judge(study=study, judge=add_judge(study, "dee"))
    assert second.n_items == 12


def test_a_join_link_participant_of_a_ranking_study_nobody_holds_gets_their_share(researcher, make_user):
    from annotation.judging.models import JudgingDesign
    from annotation.judging.protocols.ranking.unit import RANKING

    study = study_with_data(owner=researcher, n_originals=4, systems=SYSTEMS, name="Field ranking link")
    _open(study, ranking_k=3, judges_mode="k", judges_per_item=1)
    design = JudgingDesign.objects.get(study=study)
    participant = RANKING.assignment_for_participant(study=study, design=design, judge=make_user("p1"), n_items=5)
    assert participant.n_items == len(_items(study, "p1")) == 5


def test_progress_home_dashboard_and_csvs_count_rankings(researcher, add_judge):
    from annotation.judging.selectors.export_rows import export_tidy_rows, export_wide_rows
    from annotation.judging.selectors.judge import studies_for_judge
    from annotation.judging.selectors.progress import study_progress
    from metrics.dashboard.selectors import dashboard_live

    study = study_with_data(owner=researcher, n_originals=4, systems=SYSTEMS, name="Rank scores")
    ann, _ = add_judge(study, "ann"), add_judge(study, "bob")
    _open(study, ranking_k=3, ranking_scores=True, control_counts={"identical": 0, "random": 0, "unigram": 0})
    entry = _entry(study, ann)
    item = RankingItem.objects.get(token=entry.token)
    ranking.ranking_submit(
        study=study,
        judge=ann,
        token=entry.token,
        key=new_key(),
        order=[3, [1, 2]],
        scores={"1": 40, "2": 40, "3": 90},
        serve_stamp=entry.serve_stamp,
    )
    progress = study_progress(study=study)
    assert {j["judge"]: j["done"] for j in progress["judges"]} == {"ann": 1, "bob": 0}
    assert progress["judgments"] == 1 and sum(s["rated"] for s in progress["systems"]) == 3
    assert {r["study"].pk: r["done"] for r in studies_for_judge(judge=ann)}[study.pk] == 1
    live = dashboard_live(study=study)
    assert live["totals"]["judgments"] == 1 and {j["judge"]: j["judgments"] for j in live["judges"]}["ann"] == 1
    assert live["coverage"]["items"] == 8 and live["coverage"]["histogram"][1]["items"] == 1
    tidy = list(export_tidy_rows(study=study))
    header, rows = tidy[0], tidy[1:]
    got = {
        (r[header.index("item")].split("@")[0], r[header.index("criterion")]): r[header.index("score")] for r in rows
    }
    best, tied = item.candidates[2], item.candidates[:2]
    assert got[(str(best), "rank")] == 1 and got[(str(best), "score")] == 90
    assert all(got[(str(c), "rank")] == 2.5 and got[(str(c), "score")] == 40 for c in tied)
    wide = list(export_wide_rows(study=study))
    assert wide[0][-2:] == ["ann:rank", "ann:score"] and len(wide) == 1 + 3

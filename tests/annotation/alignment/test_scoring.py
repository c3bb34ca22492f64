"""Scoring runs: a system alignment, a paraphrase table, and annotator agreement, against the gold."""

import csv
import io
import json
import time

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse
from sklearn.metrics import cohen_kappa_score

from annotation.alignment import selectors
from annotation.alignment.models import AlignmentAssignment, AlignmentSystem, ScoringRun
from annotation.alignment.services import queueing
from annotation.alignment.services.assignments import alignment_config_update, assignments_create
from annotation.alignment.services.drafts import assignment_submit
from annotation.alignment.services.queueing import aligner_run_create, scoring_run_create
from annotation.alignment.services.scoring import scoring_run_execute
from annotation.alignment.services.systems import aligner_run_execute, system_alignments_store
from metrics.core.aligner import align
from metrics.core.alignment_scoring.links import link_scores
from metrics.core.alignment_scoring.paraphrases import paraphrase_scores, read_paraphrase_table
from metrics.core.alignment_scoring.phrases import align_scores

from .conftest import upload

GOLD = {  # pair position -> (sure, possible)
    0: ([[0, 0], [1, 1], [2, 2], [4, 3], [5, 4], [6, 6]], [[3, 5]]),
    1: ([[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [5, 5], [6, 6]], []),
    2: ([[0, 0], [1, 1], [2, 1], [3, 1], [4, 1], [5, 2]], []),
}
TABLE = "beginning\tstart\t0.6\nbeginning\tdawn\t0.2\nwas\texisted\t0.5\ngave up the ghost\tdied\t0.9\nthe word\tthe logos\t0.3\n"


def _submit_gold(study, annotator, gold=GOLD):
    assignments_create(study=study)
    for a in AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position"):
        sure, possible = gold[a.pair.position]
        assignment_submit(assignment=a, sure=sure, possible=possible, revision=0, active_seconds=5)


@pytest.fixture
def gold(study, pairs, annotator):
    _submit_gold(study, annotator)
    return selectors.gold_alignments(study=study)


def _run(study, researcher, **kwargs):
    run = scoring_run_create(study=study, user=researcher, **kwargs)
    return scoring_run_execute(run_id=run.pk)


@pytest.mark.django_db(transaction=True)
def test_a_scoring_run_started_from_the_page_is_computed_by_a_real_worker(
    celery_worker, client, researcher, study, pairs, annotator, system
):
    _submit_gold(study, annotator)
    client.force_login(researcher)
    r = client.post(
        reverse("alignment:scoring", kwargs={"study_id": study.pk}),
        {"kind": "system", "sys-system": str(system.pk), "sys-max_len": "5"},
    )
    assert r.status_code == 302
    run = ScoringRun.objects.get(study=study)
    assert r["Location"] == reverse("alignment:run", kwargs={"study_id": study.pk, "run_id": run.pk})
    deadline = time.monotonic() + 60
    while not run.is_finished and time.monotonic() < deadline:
        time.sleep(0.2)
        run.refresh_from_db()
    assert run.status == "succeeded", run.error
    assert ScoringRun.objects.filter(study=study).count() == 1
    gold, test = selectors.gold_alignments(study=study), selectors.system_alignments(system=system)
    keys = sorted(gold)
    expected = link_scores([gold[k] for k in keys], [test[k] for k in keys])
    assert run.results["summary"]["aer"] == pytest.approx(expected.aer)
    assert run.percent == 100 and run.signature.startswith("alignprec|max_len:5")
    page = client.get(r["Location"]).content.decode()
    assert f"{expected.aer:.4f}" in page


@pytest.mark.django_db
class TestSystemScores:
    def test_corpus_scores_equal_the_core_functions(self, study, researcher, gold, system):
        run = _run(study, researcher, kind="system", system=system, max_len=4)
        test = selectors.system_alignments(system=system)
        keys = sorted(gold)
        link = link_scores([gold[k] for k in keys], [test[k] for k in keys])
        al = align_scores([gold[k] for k in keys], [test[k] for k in keys], max_len=4)
        s = run.results["summary"]
        assert (s["link_precision"], s["link_recall"], s["link_f1"], s["aer"]) == pytest.approx(
            (link.precision, link.recall, link.f1, link.aer)
        )
        assert (s["align_prec"], s["align_recall"]) == pytest.approx((al.align_prec, al.align_recall))
        assert s["n_pairs"] == 3 and run.signature == al.signature

    def test_the_length_breakdown_and_the_pair_rows_add_up_to_the_totals(self, study, researcher, gold, system):
        results = _run(study, researcher, kind="system", system=system).results
        counts = results["align_counts"]
        assert [row["length"] for row in results["by_length"]] == [1, 2, 3, 4, 5]
        for key, total in (("pp_system", "n_system"), ("pp_manual", "n_manual"), ("pp_common", "n_common")):
            assert sum(row[key] for row in results["by_length"]) == counts[total]
            assert sum(row[key] for row in results["per_pair"]) == counts[total]
        assert [row["pair_id"] for row in results["per_pair"]] == ["g1:2", "g1:3", "p3"]
        assert sum(row["n_test"] for row in results["per_pair"]) == results["link_counts"]["n_test"]

    def test_pairs_without_gold_are_left_out_and_counted(self, study, researcher, pairs, annotator, system):
        assignments_create(study=study)
        a = AlignmentAssignment.objects.filter(annotator=annotator).order_by("pair__position").first()
        assignment_submit(assignment=a, sure=[[0, 0]], possible=[], revision=0, active_seconds=1)
        s = _run(study, researcher, kind="system", system=system).results["summary"]
        assert s["n_pairs"] == 1 and s["n_pairs_with_gold"] == 1

    def test_no_gold_means_no_run(self, study, researcher, pairs, system):
        with pytest.raises(Exception, match="gold is empty"):
            scoring_run_create(study=study, user=researcher, kind="system", system=system)


@pytest.mark.django_db
class TestParaphraseScores:
    def test_lb_precision_and_rel_recall_equal_the_core_function_over_the_groups(self, study, researcher, pairs, gold):
        run = _run(
            study, researcher, kind="paraphrases", table_data=TABLE.encode(), table_filename="t.tsv", min_prob=0.25
        )
        groups = [[gold[pairs[0].pk], gold[pairs[1].pk]], [gold[pairs[2].pk]]]
        expected = paraphrase_scores(groups, read_paraphrase_table(TABLE), min_prob=0.25)
        s = run.results["summary"]
        assert run.status == "succeeded"
        assert (s["n_posited"], s["n_correct"], s["n_reference"], s["n_groups"]) == (
            expected.n_posited,
            expected.n_correct,
            expected.n_reference,
            2,
        )
        assert s["lb_precision"] == pytest.approx(expected.lb_precision)
        # 'beginning→dawn' (0.2) is filtered; 'beginning→start', 'was→existed' (a possible link)
        # and 'gave up the ghost→died' are in the gold, 'the word→the logos' is not.
        assert s["n_posited"] == 4 and s["n_correct"] == 3
        assert [row["length"] for row in run.results["by_length"]] == [1, 2, 3, 4, 5]
        assert run.results["by_length"][3]["n_correct"] == 1

    def test_a_bad_table_is_refused_with_its_line_before_anything_runs(self, client, researcher, study, gold):
        client.force_login(researcher)
        r = client.post(
            reverse("alignment:scoring", kwargs={"study_id": study.pk}),
            {
                "kind": "paraphrases",
                "para-table": upload("t.tsv", "a\tb\t0.5\nc\td\t1.5\n"),
                "para-min_prob": "0",
                "para-max_len": "5",
            },
        )
        assert r.status_code == 400
        assert "t.tsv, line 2, column &#x27;3&#x27;: probability &#x27;1.5&#x27; is not in [0, 1]" in r.content.decode()
        assert not ScoringRun.objects.exists()

    def test_a_large_bad_table_fails_its_run_with_the_line(self, study, researcher, gold, monkeypatch):
        monkeypatch.setattr(queueing, "TABLE_CHECK_IN_REQUEST_BYTES", 0)  # the module that reads it
        run = _run(study, researcher, kind="paraphrases", table_data=b"a\tb\nlonely\n", table_filename="big.tsv")
        assert run.status == "failed" and "big.tsv, line 2" in run.error

    def test_the_table_travels_with_its_run_so_a_worker_without_the_web_machines_storage_scores_it(
        self, study, researcher, gold, settings, tmp_path
    ):
        settings.MEDIA_ROOT = tmp_path / "web-machine"
        run = scoring_run_create(
            study=study, user=researcher, kind="paraphrases", table_data=TABLE.encode(), table_filename="t.tsv"
        )
        assert not run.table_file
        settings.MEDIA_ROOT = tmp_path / "worker-machine"  # the worker shares the database, not the disk
        run = scoring_run_execute(run_id=run.pk)
        assert run.status == "succeeded", run.error
        assert bytes(run.table_data) == b""  # not kept once scored

    def test_a_run_whose_table_file_is_missing_on_the_worker_fails_with_the_reason(
        self, study, researcher, gold, settings, tmp_path
    ):
        settings.MEDIA_ROOT = tmp_path / "web-machine"
        # A run queued before tables travelled in the database: its file is on the web machine only.
        run = ScoringRun(study=study, created_by=researcher, kind="paraphrases", label="t.tsv", phase="queued")
        run.table_file.save("t.tsv", ContentFile(TABLE.encode()), save=False)
        run.save()
        settings.MEDIA_ROOT = tmp_path / "worker-machine"
        run = scoring_run_execute(run_id=run.pk)
        assert run.status == "failed"
        assert "not readable on this worker" in run.error and "internal error" not in run.error
        assert "storage every worker shares (MEDIA_ROOT)" in run.error and str(tmp_path) not in run.error


@pytest.mark.django_db
def test_agreement_kappa_equals_sklearn_over_every_grid_cell(study, researcher, pairs, annotator, second_annotator):
    alignment_config_update(study=study, annotators_per_pair=2)
    _submit_gold(study, annotator)
    other = {
        0: ([[0, 0], [1, 1], [2, 2], [5, 4]], [[4, 3], [6, 6]]),
        1: (GOLD[1][0][:5], [[6, 6]]),
        2: ([[0, 0], [1, 1]], [[5, 2]]),
    }
    for a in AlignmentAssignment.objects.filter(annotator=second_annotator).order_by("pair__position"):
        assignment_submit(
            assignment=a,
            sure=other[a.pair.position][0],
            possible=other[a.pair.position][1],
            revision=0,
            active_seconds=5,
        )
    run = _run(study, researcher, kind="agreement")
    labels_a, labels_b = [], []
    subs = selectors.submitted_alignments(study=study)
    for p in pairs:
        x, y = subs[p.pk][annotator.pk], subs[p.pk][second_annotator.pk]
        for i in range(len(p.tokens1)):
            for j in range(len(p.tokens2)):
                labels_a.append(1 if (i, j) in x.sure else 2 if (i, j) in x.possible else 0)
                labels_b.append(1 if (i, j) in y.sure else 2 if (i, j) in y.possible else 0)
    s = run.results["summary"]
    assert s["kappa"] == pytest.approx(cohen_kappa_score(labels_a, labels_b))
    assert s["n_cells"] == len(labels_a) and s["n_pairs"] == 3
    row = run.results["annotator_pairs"][0]
    assert (row["annotator_a"], row["annotator_b"]) == ("anna", "bert") and row["kappa"] == pytest.approx(s["kappa"])
    expected = link_scores([subs[p.pk][annotator.pk] for p in pairs], [subs[p.pk][second_annotator.pk] for p in pairs])
    assert row["link_f1"] == pytest.approx(expected.f1) and row["aer"] == pytest.approx(expected.aer)


@pytest.mark.django_db
def test_agreement_needs_a_pair_aligned_twice(study, researcher, gold):
    with pytest.raises(Exception, match="two annotators"):
        scoring_run_create(study=study, user=researcher, kind="agreement")


@pytest.mark.django_db
def test_csv_exports_neutralise_formulas_and_json_carries_everything(client, study, researcher, pairs, gold):
    p1 = pairs[0]
    evil = system_alignments_store(
        study=study, name='=HYPERLINK("x")', alignments={p1.pk: selectors.gold_alignments(study=study)[p1.pk]}
    )
    from annotation.alignment.models import AlignmentGroup

    AlignmentGroup.objects.filter(pk=p1.group_id).update(external_id="@SUM(A1)")
    run = _run(study, researcher, kind="system", system=evil)
    client.force_login(researcher)
    url = reverse("alignment:run_export", kwargs={"study_id": study.pk, "run_id": run.pk, "fmt": "csv"})
    rows = list(csv.reader(io.StringIO(client.get(url, {"table": "per_pair"}).content.decode())))
    assert rows[0][:2] == ["pair_id", "group_id"] and rows[1][1] == "'@SUM(A1)"
    assert all(not cell.startswith(("=", "+", "-", "@")) for row in rows for cell in row)
    summary = list(csv.reader(io.StringIO(client.get(url).content.decode())))
    assert summary[0][0] == "link_precision" and float(summary[1][0]) == 1.0
    doc = json.loads(
        client.get(
            reverse("alignment:run_export", kwargs={"study_id": study.pk, "run_id": run.pk, "fmt": "json"})
        ).content
    )
    assert doc["parameters"] == {"max_len": 5, "min_prob": 0.0, "use_possible": True}
    assert doc["results"]["system"] == '=HYPERLINK("x")' and doc["signature"] == run.signature
    assert client.get(url, {"table": "nope"}).status_code == 400


@pytest.mark.django_db
def test_the_results_page_and_the_api_show_a_finished_run(client, api_client, study, researcher, gold, system):
    run = _run(study, researcher, kind="system", system=system)
    client.force_login(researcher)
    html = client.get(reverse("alignment:run", kwargs={"study_id": study.pk, "run_id": run.pk})).content.decode()
    assert 'id="results-summary"' in html and 'id="results-by_length"' in html and run.signature in html
    api_client.force_authenticate(researcher)
    body = api_client.get(reverse("alignment-api:run_detail", kwargs={"study_id": study.pk, "run_id": run.pk})).json()
    assert body["status"] == "succeeded" and body["results"]["summary"]["n_pairs"] == 3


@pytest.mark.django_db
def test_the_api_queues_runs_and_reports_bad_requests(api_client, study, researcher, gold, system):
    api_client.force_authenticate(researcher)
    url = reverse("alignment-api:run_create", kwargs={"study_id": study.pk})
    r = api_client.post(url, {"kind": "system", "system": "fast_align", "max_len": 3}, format="multipart")
    assert r.status_code == 202 and r.json()["status"] == "queued" and r.json()["parameters"]["max_len"] == 3
    r = api_client.post(url, {"kind": "system", "system": "nobody"}, format="multipart")
    assert r.status_code == 400
    r = api_client.post(url, {"kind": "paraphrases", "table": upload("t.tsv", "only-one-field\n")}, format="multipart")
    assert r.status_code == 400 and r.json()["errors"][0]["line"] == 1


@pytest.mark.django_db
def test_the_aligner_run_writes_an_aligner_system_equal_to_the_core_aligner(study, researcher, pairs):
    run = aligner_run_create(study=study, user=researcher, use_wordnet=False)
    run = aligner_run_execute(run_id=run.pk)
    assert run.status == "succeeded" and run.progress_done == 3
    system = AlignmentSystem.objects.get(study=study, name="paraeval-aligner")
    stored = selectors.system_alignments(system=system)
    for p in pairs:
        assert stored[p.pk] == align(p.tokens1, p.tokens2, use_wordnet=False)
    assert aligner_run_execute(run_id=run.pk).status == "succeeded"  # a second delivery changes nothing
    assert AlignmentSystem.objects.filter(study=study).count() == 1


@pytest.mark.django_db
def test_the_aligner_will_not_overwrite_an_imported_system(study, researcher, system):
    with pytest.raises(Exception, match="choose another name"):
        aligner_run_create(study=study, user=researcher, system_name="fast_align")


@pytest.mark.django_db
def test_undefined_scores_are_stored_as_null_not_made_up(study, researcher, pairs, annotator):
    empty = {k: ([], []) for k in GOLD}
    _submit_gold(study, annotator, gold=empty)
    nothing = system_alignments_store(
        study=study, name="silent", alignments={p.pk: selectors.gold_alignments(study=study)[p.pk] for p in pairs}
    )
    s = _run(study, researcher, kind="system", system=nothing).results["summary"]
    assert s["link_precision"] is None and s["align_prec"] is None and s["n_pairs"] == 3

"""Ten researchers (or one impatient one) importing the same rows at once: exactly one
import writes them, the others are refused with a message (400), nothing answers 500, and
every import stays all or nothing.

Threads with real transactions; runs on SQLite (copied to a WAL file, as paraeval runs)
and on PostgreSQL (``DATABASE_URL=postgres://…``), where the race used to end in
``IntegrityError``.
"""

from __future__ import annotations

import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from rest_framework.test import APIClient

from annotation.alignment.models import AlignmentPair
from annotation.models import Candidate, Original, System
from tests.annotation.judging.conftest import real_database_file

pytestmark = pytest.mark.django_db(transaction=True)

N_THREADS = 10
STUDY_CSV = "original_id,original,system,candidate\n" + "".join(
    f"o{i},Original sentence number {i} .,sys{k},Candidate {k} of sentence {i} .\n" for i in range(40) for k in range(3)
)
PAIRS_TSV = "pair_id\tsentence1\tsentence2\n" + "".join(
    f"p{i}\tThe first sentence {i} .\tThe second sentence {i} .\n" for i in range(40)
)


def _race(researcher, url, filename, data):
    barrier = threading.Barrier(N_THREADS)
    answers: list[tuple[int, object]] = []
    lock = threading.Lock()

    def post():
        client = APIClient()
        client.force_authenticate(researcher)
        try:
            barrier.wait(timeout=30)
            r = client.post(url, {"file": SimpleUploadedFile(filename, data)}, format="multipart")
            body = r.json() if r["Content-Type"].startswith("application/json") else r.content[:300]
            with lock:
                answers.append((r.status_code, body))
        except Exception as exc:  # noqa: BLE001 - a 500 raises in the test client: report it
            with lock:
                answers.append((500, repr(exc)))
        finally:
            connection.close()

    threads = [threading.Thread(target=post) for _ in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    return answers


def test_ten_parallel_imports_of_the_same_rows_give_one_201_and_clear_400s(researcher, study, tmp_path):
    before = (
        Original.objects.filter(study=study).count(),
        System.objects.filter(study=study).count(),
        Candidate.objects.filter(original__study=study).count(),
    )
    with real_database_file(tmp_path):
        answers = _race(researcher, f"/api/studies/{study.pk}/import/", "rows.csv", STUDY_CSV.encode())
        codes = sorted(code for code, _ in answers)
        assert codes == [201] + [400] * (N_THREADS - 1), answers
        for code, body in answers:
            if code == 400:
                assert "already holds" in body["detail"] or "at the same time" in body["detail"], body
        after = (
            Original.objects.filter(study=study).count(),
            System.objects.filter(study=study).count(),
            Candidate.objects.filter(original__study=study).count(),
        )
        assert after == (before[0] + 40, before[1] + 3, before[2] + 120)


def test_ten_parallel_pair_imports_of_the_same_rows_give_one_201_and_clear_400s(researcher, study, tmp_path):
    with real_database_file(tmp_path):
        answers = _race(researcher, f"/api/alignment/studies/{study.pk}/pairs/import/", "pairs.tsv", PAIRS_TSV.encode())
        codes = sorted(code for code, _ in answers)
        assert codes == [201] + [400] * (N_THREADS - 1), answers
        assert AlignmentPair.objects.filter(study=study).count() == 40
        assert sorted(AlignmentPair.objects.filter(study=study).values_list("position", flat=True)) == list(range(40))

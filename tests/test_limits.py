"""Limits before work (issue 11): bodies and uploads are measured before they are read."""

from __future__ import annotations

import io

import pytest
from django.core.files.uploadedfile import InMemoryUploadedFile, TemporaryUploadedFile

from annotation.models import Original

pytestmark = pytest.mark.django_db


class NamedBytes(io.BytesIO):
    """A file for the test client that is not an UploadedFile (so the spy below sees only the server's reads)."""

    def __init__(self, data: bytes, name: str):
        super().__init__(data)
        self.name = name


@pytest.fixture
def reads(monkeypatch):
    """Every read of an uploaded file on the server side."""
    seen = []

    def spy(self):
        seen.append(self.name)
        return self.file.read

    for cls in (InMemoryUploadedFile, TemporaryUploadedFile):
        monkeypatch.setattr(cls, "read", property(spy))
    return seen


def _upload_endpoints(study_id):
    rows = "original_id,original,system,candidate\n" + "o1,A sentence .,s1,One sentence .\n" * 40
    pairs = "sentence1\tsentence2\n" + "The first .\tThe second .\n" * 40
    return [
        (f"/api/studies/{study_id}/import/", {}, "rows.csv", rows),
        (f"/api/alignment/studies/{study_id}/pairs/import/", {}, "pairs.tsv", pairs),
        (
            f"/api/alignment/studies/{study_id}/systems/import/",
            {"name": "s", "format": "pharaoh"},
            "a.txt",
            "0-0\n" * 400,
        ),
        (f"/api/alignment/studies/{study_id}/runs/create/", {"kind": "paraphrases"}, "table.tsv", "a\tb\n" * 400),
    ]


def test_api_uploads_over_the_limit_are_refused_from_their_size_before_a_byte_is_read(
    api_client, researcher, study, settings, reads
):
    settings.PARAEVAL_IMPORT_MAX_BYTES = 1000
    api_client.force_authenticate(researcher)
    before = Original.objects.count()
    for url, fields, name, text in _upload_endpoints(study.pk):
        key = "table" if url.endswith("runs/create/") else "file"
        r = api_client.post(url, {**fields, key: NamedBytes(text.encode(), name)}, format="multipart")
        assert r.status_code == 413, (url, r.content)
        assert "the limit is 1,000 (PARAEVAL_IMPORT_MAX_BYTES)" in r.json()["detail"]
    assert reads == []
    assert Original.objects.count() == before


def test_a_metric_resource_over_the_limit_is_refused_before_it_is_read_or_hashed(
    api_client, researcher, study, monkeypatch, reads
):
    from metrics import apis
    from metrics.models import MetricResource
    from metrics.services import resources

    # The API checks the size with the name it imported; the service reads its own module's.
    monkeypatch.setattr(apis, "RESOURCE_MAX_BYTES", 100)
    monkeypatch.setattr(resources, "RESOURCE_MAX_BYTES", 100)
    api_client.force_authenticate(researcher)
    r = api_client.post(
        f"/api/studies/{study.pk}/metric-resources/upload/",
        {"file": NamedBytes(b"x" * 101, "big.txt"), "kind": "other"},
        format="multipart",
    )
    assert r.status_code == 413 and "the limit is 100" in r.json()["detail"]
    assert reads == [] and not MetricResource.objects.exists()


def test_json_bodies_over_the_endpoint_limit_answer_413(api_client, researcher, study, settings):
    settings.PARAEVAL_JSON_MAX_BYTES = 2000
    api_client.force_authenticate(researcher)
    url = f"/api/studies/{study.pk}/metric-runs/create/"
    r = api_client.post(url, {"metric": "pinc", "params": {"x": "y" * 3000}}, format="json")
    assert r.status_code == 413 and "at most 2,000" in r.json()["detail"]
    r = api_client.post(url, {"metric": "pinc"}, format="json")
    assert r.status_code == 201, r.content


def test_a_metric_run_on_a_decompression_bomb_fails_with_the_reason_and_leaves_no_cache_file(
    researcher, study, tmp_path, monkeypatch
):
    import lzma

    from django.core.files.base import ContentFile

    from metrics.core import compressed
    from metrics.services.instances import metric_cache
    from metrics.services.resources import metric_resource_create
    from metrics.services.runs import metric_run_create
    from metrics.services.worker import metric_run_execute

    cache = tmp_path / "cache"
    monkeypatch.setenv("PARAEVAL_CACHE_DIR", str(cache))
    monkeypatch.setattr(compressed, "DECOMPRESSED_MAX_BYTES", 1024 * 1024)
    metric_cache.clear()
    arpa = b"\\data\\\nngram 1=3\n\n\\1-grams:\n" + b"-1.0\tthe\n" * 500_000  # 4.5 MB unpacked
    bomb = metric_resource_create(
        name="lm",
        kind="language_model",
        owner=researcher,
        study=study,
        file=ContentFile(lzma.compress(arpa), name="lm.arpa.xz"),
    )
    assert bomb.size < 50_000
    run = metric_run_create(
        study=study, metric="lm-fluency", resources={"model": bomb.pk}, created_by=researcher, enqueue=False
    )
    run = metric_run_execute(run_id=run.pk)
    assert run.status == "failed"
    assert "expands to more than 1,048,576 bytes (PARAEVAL_DECOMPRESSED_MAX_BYTES)" in run.error
    assert not cache.exists() or list(cache.iterdir()) == []

from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.authtoken.models import Token

from annotation.models import Candidate


def test_researcher_creates_a_study_and_imports_through_the_api_with_a_token(api_client, researcher):
    token = Token.objects.create(user=researcher)
    api_client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    r = api_client.post("/api/studies/create/", {"name": "API study"}, format="json")
    assert r.status_code == 201, r.content
    sid = r.json()["id"]
    f = SimpleUploadedFile(
        "d.jsonl", b'{"original_id": "1", "original": "Hi.", "system": "s", "candidate": "Hello."}\n'
    )
    r = api_client.post(f"/api/studies/{sid}/import/", {"file": f}, format="multipart")
    assert r.status_code == 201, r.content
    assert r.json()["summary"]["candidates_added"] == 1
    detail = api_client.get(f"/api/studies/{sid}/").json()
    assert detail["candidates"] == 1 and detail["systems"][0]["name"] == "s"


def test_api_import_error_lists_line_and_column_and_writes_nothing(api_client, study, researcher):
    api_client.force_authenticate(researcher)
    before = Candidate.objects.count()
    f = SimpleUploadedFile("d.csv", b"original_id,original,system,candidate\n9,a,s,b\n10,,s,c\n")
    r = api_client.post(f"/api/studies/{study.pk}/import/", {"file": f}, format="multipart")
    assert r.status_code == 400
    body = r.json()
    assert body["errors"] == [{"line": 3, "column": "original", "message": "empty text"}]
    assert "d.csv, line 3" in body["detail"]
    assert Candidate.objects.count() == before


def test_openapi_schema_and_docs_are_served_without_a_cdn(client, researcher):
    client.force_login(researcher)
    schema = client.get("/api/schema/")
    assert schema.status_code == 200 and b"/api/studies/" in schema.content
    docs = client.get("/api/docs/").content.decode()
    assert "cdn" not in docs.lower() and "/static/drf_spectacular_sidecar/" in docs


def test_token_endpoint_exchanges_credentials(api_client, researcher):
    r = api_client.post("/api/auth/token/", {"username": "rita", "password": "pw"})
    assert r.status_code == 200 and len(r.json()["token"]) == 40

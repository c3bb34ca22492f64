"""Blinding is a security property: every byte a judge's browser receives — pages,
JSON, headers, the static CSS/JS those pages load — is scanned for system names,
control kinds, expected scores, the study's name (researchers' names say things like
"KJV vs WEB") and database ids of candidates, originals and systems. And an item page
must look the same whatever the item is. A judge who annotates another study is
scanned on both sides, for study names and the researcher's pair ids too."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.core.management.color import no_style
from django.db import connection
from rest_framework.test import APIClient

from annotation.enums import Role
from annotation.judging.protocols.absolute.selectors import item_next_for_judge
from annotation.judging.selectors.judge import assignment_for_judge
from annotation.judging.services.opening import study_judging_open
from annotation.models import Candidate, Original, Study, System
from annotation.services.membership import study_member_add

pytestmark = pytest.mark.django_db

SYSTEM_NAMES = ["sys-alpha-secret", "sys-beta-secret"]
EXTERNAL_IDS = [f"extid-{i:04d}" for i in range(6)]
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.",
    "A journey of many miles begins with one step.",
    "She sells sea shells by the sea shore.",
    "All that glitters is not gold.",
    "Where there is a will there is a way.",
    "Actions speak louder than words.",
]
#: A judge who is not careful gives these scores: never one of the expected tuples.
RATING = {"adequacy": 4, "fluency": 2, "dissimilarity": 3, "overall": 4}
STUDY_NAME = "Secret-study-name: alpha against beta"
FORBIDDEN_WORDS = [
    "control",
    "identical",
    "random",
    "unigram",
    "expected",
    "system_",
    "kind",
    *SYSTEM_NAMES,
    *EXTERNAL_IDS,
    "secret-study-name",
]
EXPECTED_PATTERNS = [
    r"5\s*,\s*5\s*,\s*1\s*,\s*2",
    r"1\s*,\s*5\s*,\s*5\s*,\s*1",
    r"1\s*,\s*1\s*,\s*5\s*,\s*1",
    r"A\s*5\s*F\s*5",
    r"A\s*1\s*F\s*[15]",
    r"D\s*[15]\s*O\s*[12]",
]


@pytest.fixture
def secret_study(make_user):
    """A study whose ids are large and distinctive, so any leak of one is findable."""
    owner = make_user("owner", researcher=True)
    study = Study.objects.create(name=STUDY_NAME, owner=owner)
    systems = [System.objects.create(pk=735550001 + i, study=study, name=n) for i, n in enumerate(SYSTEM_NAMES)]
    for i, (ext, text) in enumerate(zip(EXTERNAL_IDS, SENTENCES)):
        o = Original.objects.create(pk=824460001 + i, study=study, external_id=ext, text=text, position=i)
        for k, s in enumerate(systems):
            Candidate.objects.create(
                pk=913370001 + 10 * i + k,
                original=o,
                system=s,
                text=f"{text[:-1]} said in way number {'one' if k == 0 else 'two'}.",
            )
    # Explicit ids do not move PostgreSQL's sequences; without this the controls would
    # get small ids that cannot be told apart from ordinary numbers on a page.
    with connection.cursor() as cursor:
        for sql in connection.ops.sequence_reset_sql(no_style(), [Candidate, Original, System]):
            cursor.execute(sql)
    judge = make_user("ann")
    study_member_add(study=study, user=judge, role=Role.JUDGE)
    study_judging_open(study=study)
    return study, judge


def forbidden_ids(study) -> list[str]:
    ids = list(Candidate.objects.filter(original__study=study).values_list("pk", flat=True))
    ids += list(Original.objects.filter(study=study).values_list("pk", flat=True))
    ids += list(System.objects.filter(study=study).values_list("pk", flat=True))
    assert min(ids) > 100_000_000  # distinctive: cannot occur by chance
    return [str(i) for i in ids]


def scrub_random_values(blob: str, tokens: set[str]) -> str:
    """Blank the random values a page legitimately carries (pair tokens, signed serve stamps,
    idempotency keys, CSRF and session values): drawn from 64 symbols, they may spell a
    forbidden word such as "kind" by chance, which is no leak."""
    for t in tokens:
        blob = blob.replace(t, "TOKEN")
    blob = re.sub(r"eyJ[A-Za-z0-9_\-]+:[A-Za-z0-9_\-:]+", "STAMP", blob)  # django.core.signing of JSON
    blob = re.sub(
        r'(name="key" value="|csrfmiddlewaretoken" value="|csrftoken=|sessionid=)[A-Za-z0-9_\-]+', r"\1OPAQUE", blob
    )
    return re.sub(r'("key": ?")[A-Za-z0-9_\-]+', r"\1OPAQUE", blob)


def study_tokens(study) -> set[str]:
    """Every opaque token of the study's items, pairs, training items and attention checks."""
    from annotation.judging.models import AttentionCheck, TrainingItem
    from annotation.judging.protocols.absolute.models import AssignmentItem
    from annotation.judging.protocols.side_by_side.models import ComparisonItem

    tokens = set(AssignmentItem.objects.filter(assignment__study=study).values_list("token", flat=True))
    tokens |= set(ComparisonItem.objects.filter(assignment__study=study).values_list("token", flat=True))
    tokens |= set(TrainingItem.objects.filter(study=study).values_list("token", flat=True))
    tokens |= set(AttentionCheck.objects.filter(assignment__study=study).values_list("token", flat=True))
    return tokens


class Recorder:
    """Collects every response body and header a judge receives, and the static files pages load."""

    def __init__(self):
        self.blobs: list[tuple[str, str]] = []

    def add(self, where: str, response) -> str:
        body = b"".join(response.streaming_content) if response.streaming else response.content
        text = body.decode("utf-8", errors="replace")
        # header values only: names such as Cache-Control are the protocol's words, not ours
        headers = "\n".join(v for _, v in response.items())
        self.blobs.append((where, headers + "\n\n" + text))
        for ref in re.findall(r'(?:src|href)="(/static/[^"]+)"', text):
            self.add_static(where, ref.removeprefix("/static/"))
        return text

    def add_static(self, where: str, name: str) -> None:
        """Record a static file and, for an ES module, every module it imports (the browser
        fetches those too: ``import ... from "./judge_form.js"``), each once."""
        if any(ref == "/static/" + name for ref, _ in self.blobs):
            return
        path = finders.find(name)
        assert path, f"{where} loads /static/{name}, which does not exist"
        text = Path(path).read_text(encoding="utf-8")
        self.blobs.append(("/static/" + name, text))
        if name.endswith(".js"):
            base = name.rsplit("/", 1)[0] if "/" in name else ""
            for spec in re.findall(r"""(?m)^\s*(?:import|export)\b[^;]*?\bfrom\s*["'](\.{1,2}/[^"']+)["']""", text):
                target = posixpath.normpath(posixpath.join(base, spec))
                self.add_static(f"/static/{name}", target)


def hidden(html: str, name: str) -> str:
    return re.search(rf'name="{name}" value="([^"]*)"', html).group(1)


def tokens_answer_alike(*, rec: Recorder, api, client, judge, study, item_model, api_path: str, page_path: str) -> None:
    """Asked for again by its token (the revise page, the protocol's API), an attention check drawn
    among the real items answers as a real item does: 200 with the same fields. A 404 for a check
    alone would tell a judge which of the tokens they were given was a check. Every answer goes
    through ``rec`` for the leak scan."""
    from annotation.judging.models import AttentionCheck

    checks = list(AttentionCheck.objects.filter(assignment__judge=judge).values_list("token", flat=True))
    reals = list(
        item_model.objects.filter(assignment__judge=judge).order_by("position").values_list("token", flat=True)[:4]
    )
    assert checks and reals
    keys: dict[str, set] = {}
    for kind, token in [*(("check", t) for t in checks), *(("real", t) for t in reals)]:
        r = api.get(f"/api/judging/studies/{study.pk}/{api_path}/{token}/")
        assert r.status_code == 200, (kind, r.status_code)
        rec.add(f"api {kind} detail", r)
        keys.setdefault(kind, set()).add(tuple(sorted(r.json())))
        page = client.get(f"/judge/studies/{study.pk}/{page_path}/{token}/")
        assert page.status_code == 200, (kind, page.status_code)
        rec.add(f"{kind} revise page", page)
    assert keys["check"] == keys["real"]


def judge_session(study, judge) -> tuple[Recorder, list[str]]:
    """Walk every judge page and endpoint a judge can reach; return the recorder and the item pages."""
    from django.test import Client

    rec, item_pages = Recorder(), []
    client = Client()
    rec.add("login page", client.get("/accounts/login/"))
    client.force_login(judge)
    for path in ("/", "/judge/", f"/judge/studies/{study.pk}/", f"/judge/studies/{study.pk}/instructions/"):
        rec.add(path, client.get(path))
    rec.add("start", client.post(f"/judge/studies/{study.pk}/instructions/"))
    api = APIClient()
    api.force_authenticate(judge)
    tokens = []
    while True:
        rec.add("api next", api.get(f"/api/judging/studies/{study.pk}/items/next/"))
        page_response = client.get(f"/judge/studies/{study.pk}/")
        if page_response.status_code == 302:
            rec.add("finished redirect", page_response)
            break
        page = rec.add("item page", page_response)
        item_pages.append(page)
        tokens.append(hidden(page, "token"))
        response = client.post(
            f"/judge/studies/{study.pk}/submit/",
            {"token": tokens[-1], "serve": hidden(page, "serve"), "key": hidden(page, "key"), **RATING},
        )
        rec.add("submit", response)
    rec.add("finished", client.get(f"/judge/studies/{study.pk}/done/"))
    for token in tokens[:3]:
        rec.add("revise page", client.get(f"/judge/studies/{study.pk}/items/{token}/"))
        rec.add("api item", api.get(f"/api/judging/studies/{study.pk}/items/{token}/"))
        rec.add("api previous", api.get(f"/api/judging/studies/{study.pk}/items/{token}/previous/"))
    rec.add("api last", api.get(f"/api/judging/studies/{study.pk}/items/last/"))
    item = api.get(f"/api/judging/studies/{study.pk}/items/{tokens[0]}/").json()
    rec.add(
        "api submit (revision)",
        api.post(
            f"/api/judging/studies/{study.pk}/judgments/",
            {"item": item["token"], "key": "blind-revision-key", "scores": RATING, "serve_stamp": item["serve_stamp"]},
            format="json",
        ),
    )
    rec.add(
        "api submit error",
        api.post(
            f"/api/judging/studies/{study.pk}/judgments/",
            {"item": item["token"], "key": "blind-revision-key-2", "scores": {"adequacy": 9}, "serve_stamp": "x"},
            format="json",
        ),
    )
    rec.add("home after", client.get("/judge/"))
    return rec, item_pages


def test_nothing_a_judge_receives_names_a_system_a_control_an_expected_score_or_an_id(secret_study):
    study, judge = secret_study
    rec, item_pages = judge_session(study, judge)
    assert len(item_pages) == 6 * 5  # 2 systems + 3 controls per original: controls were served too
    assert any(ref.endswith("rate.js") for ref, _ in rec.blobs) and any(ref.endswith(".css") for ref, _ in rec.blobs)
    # the modules rate.js imports are what the browser fetches next: they are scanned too
    assert any(ref.endswith("judging/judge_form.js") for ref, _ in rec.blobs)
    ids = forbidden_ids(study)
    tokens = study_tokens(study)
    leaks = []
    for where, blob in rec.blobs:
        blob = scrub_random_values(blob, tokens)
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in FORBIDDEN_WORDS if w.lower() in low]
        leaks += [f"{where}: id {i}" for i in ids if i in blob]
        leaks += [f"{where}: expected-score pattern {p!r}" for p in EXPECTED_PATTERNS if re.search(p, blob)]
    assert leaks == []


def normalised(page: str, study) -> str:
    """An item page with everything that legitimately differs between items blanked."""
    item_text = re.findall(r'<p class="sentence-text"[^>]*>(.*?)</p>', page, re.S)
    assert len(item_text) == 2
    for t in item_text:
        page = page.replace(t, "TEXT")
    page = re.sub(r'value="[A-Za-z0-9_\-:.=]{8,}"', 'value="OPAQUE"', page)  # token, stamp, key, csrf
    page = re.sub(r"/items/[A-Za-z0-9_\-]+/", "/items/OPAQUE/", page)
    return re.sub(r"\d+", "N", page)


def test_an_item_page_looks_the_same_for_controls_and_genuine_candidates(secret_study):
    study, judge = secret_study
    _, pages = judge_session(study, judge)
    shapes = {normalised(p, study) for p in pages[1:]}  # the first page has no "Previous" link
    assert len(shapes) == 1


def test_the_order_does_not_follow_ids_or_systems(secret_study):
    study, judge = secret_study
    assignment = assignment_for_judge(study=study, judge=judge)
    rows = list(assignment.items.order_by("position").values_list("candidate_id", "candidate__system__name"))
    ids = [c for c, _ in rows]
    assert ids != sorted(ids) and ids != sorted(ids, reverse=True)
    systems = [s for _, s in rows]
    # controls are spread through the order, not bunched at either end
    control_positions = [i for i, s in enumerate(systems) if s.startswith("control:")]
    assert min(control_positions) < len(rows) // 3 and max(control_positions) > 2 * len(rows) // 3
    tokens = list(assignment.items.order_by("position").values_list("token", flat=True))
    assert tokens != sorted(tokens)


def test_error_messages_do_not_leak_either(secret_study, make_user):
    study, judge = secret_study
    other = make_user("bob")
    study_member_add(study=study, user=other, role=Role.JUDGE)
    ann_item = item_next_for_judge(assignment=assignment_for_judge(study=study, judge=judge))
    api = APIClient()
    api.force_authenticate(User.objects.get(username="bob"))
    r = api.post(
        f"/api/judging/studies/{study.pk}/judgments/",
        {"item": ann_item.token, "key": "bob-tries-anns-item", "scores": RATING, "serve_stamp": ann_item.serve_stamp},
        format="json",
    )
    assert r.status_code == 404
    body = r.content.decode().lower()
    assert not any(w in body for w in ("control", "sys-", "ann"))


# --- a judge who is also an annotator (of another study: never of the same one) ---------------

OTHER_STUDY_NAME = "Other-secret-study: synonyms vs round trip"
#: The researcher's pair ids, as a researcher might choose them: they say where sentence 2 came from.
PAIR_IDS = ["pairid-0001 sys-alpha-secret", "pairid-0002 sys-beta-secret"]
ANNOTATOR_FORBIDDEN = ["secret-study", "pairid-", *SYSTEM_NAMES, *EXTERNAL_IDS]


@pytest.fixture
def judge_annotating_elsewhere(secret_study, make_user):
    """``secret_study``'s judge is also an annotator of a second study with telling pair ids."""
    from annotation.alignment.services.assignments import assignments_create
    from annotation.alignment.services.pairs import pairs_import_file

    study, judge = secret_study
    other = Study.objects.create(name=OTHER_STUDY_NAME, owner=study.owner)
    study_member_add(study=other, user=judge, role=Role.ANNOTATOR)
    rows = "".join(f"{pid},{SENTENCES[k]},{SENTENCES[k][:-1]} indeed.\n" for k, pid in enumerate(PAIR_IDS))
    pairs_import_file(study=other, data=("pair_id,sentence1,sentence2\n" + rows).encode(), filename="pairs.csv")
    assignments_create(study=other, annotators=[judge])
    return study, other, judge


def annotator_session(annotator) -> Recorder:
    """Walk every annotator page and endpoint: home, next, each grid, the API, a draft, an error, a submit."""
    from django.test import Client

    rec, client, api = Recorder(), Client(), APIClient()
    client.force_login(annotator)
    api.force_authenticate(annotator)
    for path in ("/", "/alignment/", "/alignment/guidelines/"):
        rec.add(path, client.get(path))
    rec.add("next", client.get("/alignment/next/"))
    rec.add("api list", api.get("/api/alignment/assignments/"))
    for a in annotator.alignment_assignments.order_by("pair__position"):
        rec.add("grid", client.get(f"/alignment/tasks/{a.pk}/"))
        rec.add("api detail", api.get(f"/api/alignment/assignments/{a.pk}/"))
        rec.add(
            "api draft error",
            api.put(
                f"/api/alignment/assignments/{a.pk}/draft/",
                {"sure": [[0, 99]], "possible": [], "revision": 0},
                format="json",
            ),
        )
        rec.add(
            "api draft",
            api.put(
                f"/api/alignment/assignments/{a.pk}/draft/",
                {"sure": [[0, 0]], "possible": [], "revision": 0},
                format="json",
            ),
        )
        rec.add(
            "api submit",
            api.post(
                f"/api/alignment/assignments/{a.pk}/submit/",
                {"sure": [[0, 0]], "possible": [], "revision": 1},
                format="json",
            ),
        )
        rec.add("grid after", client.get(f"/alignment/tasks/{a.pk}/"))
    rec.add("home after", client.get("/alignment/"))
    return rec


def test_a_judge_who_annotates_another_study_never_receives_a_study_name_or_a_pair_id(judge_annotating_elsewhere):
    study, other, judge = judge_annotating_elsewhere
    judged, _ = judge_session(study, judge)
    annotated = annotator_session(judge)
    assert sum(1 for where, _ in annotated.blobs if where == "grid") == len(PAIR_IDS)
    assert any(ref.endswith("grid.js") for ref, _ in annotated.blobs)
    leaks = []
    for where, blob in judged.blobs + annotated.blobs:
        low = blob.lower()
        leaks += [f"{where}: {w!r}" for w in ANNOTATOR_FORBIDDEN if w.lower() in low]
        leaks += [f"{where}: {name!r}" for name in (study.name, other.name) if name in blob]
    assert leaks == []
    # Both sides show the neutral title instead.
    assert any(study.participant_title in blob for where, blob in judged.blobs if where == "/judge/")
    assert any(other.participant_title in blob for where, blob in annotated.blobs if where == "/alignment/")


def test_the_judge_cannot_also_become_an_annotator_of_the_study_they_judge(secret_study):
    from annotation.services.membership import RoleConflict

    study, judge = secret_study
    with pytest.raises(RoleConflict):
        study_member_add(study=study, user=judge, role=Role.ANNOTATOR)

"""The scales migration keeps every existing study working: PEM's four criteria get
explicit 1–5 point scales and every judgment's four scores move into its value map."""

from __future__ import annotations

import pytest
from django.utils import timezone

from tests.migrations import migrate_to, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

# The other apps stay at their latest migration (their historical models must match
# the tables as they are, e.g. a study's participant title).
_OTHERS = [("annotation", "0003_signin_link")]
BEFORE = [("judging", "0002_open_job"), *_OTHERS]
AFTER = [("judging", "0003_criteria_and_scales_as_data"), *_OTHERS]


def test_existing_designs_and_judgments_survive_the_migration():
    old = migrate_to(BEFORE)
    User = old.get_model("auth", "User")
    Study, Original, System, Candidate = (
        old.get_model("annotation", m) for m in ("Study", "Original", "System", "Candidate")
    )
    Design, Assignment, Item, Judgment = (
        old.get_model("judging", m) for m in ("JudgingDesign", "Assignment", "AssignmentItem", "Judgment")
    )
    owner = User.objects.create(username="owner")
    study = Study.objects.create(name="Old study", owner=owner)
    labels = ["one", "two", "three", "four", "five"]
    Design.objects.create(
        study=study,
        criteria=[
            {"slug": c, "name": c.title(), "help": "", "labels": labels}
            for c in ("adequacy", "fluency", "dissimilarity", "overall")
        ],
        control_counts={},
        expected_scores={},
        seed=1,
    )
    o = Original.objects.create(study=study, external_id="s0", text="An original.")
    cand = Candidate.objects.create(original=o, system=System.objects.create(study=study, name="h"), text="A copy.")
    a = Assignment.objects.create(study=study, judge=owner, seed=1, n_items=1)
    item = Item.objects.create(assignment=a, candidate=cand, position=1, token="t" * 20)
    now = timezone.now()
    Judgment.objects.create(
        study=study,
        item=item,
        judge=owner,
        key="k" * 10,
        served_at=now,
        submitted_at=now,
        seconds=3.0,
        adequacy=5,
        fluency=4,
        dissimilarity=2,
        overall=3,
    )
    try:
        new = migrate_to(AFTER)
        j = new.get_model("judging", "Judgment").objects.get()
        assert j.values == {"adequacy": 5, "fluency": 4, "dissimilarity": 2, "overall": 3}
        d = new.get_model("judging", "JudgingDesign").objects.get()
        assert [c["scale"] for c in d.criteria] == [{"type": "points", "min": 1, "max": 5, "labels": labels}] * 4
        assert all("labels" not in c for c in d.criteria)
        # and back again, while the design is still PEM's
        back = migrate_to(BEFORE)
        j = back.get_model("judging", "Judgment").objects.get()
        assert (j.adequacy, j.fluency, j.dissimilarity, j.overall) == (5, 4, 2, 3)
    finally:
        migrate_to_latest()

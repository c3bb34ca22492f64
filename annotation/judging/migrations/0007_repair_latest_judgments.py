"""Repair judgments that an earlier judgments import left without a latest revision.

Before this fix, importing judgments for a judge who already had some unmarked the
latest judgment of *every* item of that judge, and marked latest only the items the
new file judged: the others dropped out of every export and report. This marks the
highest revision of each such item latest again. The partial unique constraint
``judging_one_latest_judgment`` (at most one latest per item) was already in place;
the import now keeps "exactly one" (tests/annotation/judging/protocols/absolute/test_import_modes.py).
"""

from django.db import migrations
from django.db.models import Max


def mark_highest_revision_latest(apps, schema_editor):
    Judgment = apps.get_model("judging", "Judgment")
    with_latest = Judgment.objects.filter(is_latest=True).values("item_id")
    orphans = (
        Judgment.objects.exclude(item_id__in=with_latest)
        .values("item_id")
        .annotate(top=Max("revision"))
        .values_list("item_id", "top")
    )
    for item_id, top in orphans.iterator():
        Judgment.objects.filter(item_id=item_id, revision=top).update(is_latest=True)


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0006_training_items_per_attempt"),
    ]

    operations = [
        migrations.RunPython(mark_highest_revision_latest, migrations.RunPython.noop),
    ]

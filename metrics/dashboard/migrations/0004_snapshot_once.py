"""The snapshot is stored once, as the JSON text the API sends (``snapshot_text``): the JSON
column that held the same values is copied into the text where a row has none, then dropped.
Every refresh wrote both, so the row's ``UPDATE`` wrote and compressed the snapshot twice."""

import json

from django.db import migrations, models


def copy_to_text(apps, schema_editor):
    Dashboard = apps.get_model("dashboard", "Dashboard")
    for d in Dashboard.objects.filter(snapshot_text="").exclude(snapshot={}).only("id", "snapshot").iterator():
        Dashboard.objects.filter(pk=d.pk).update(
            snapshot_text=json.dumps(d.snapshot, separators=(",", ":"), ensure_ascii=False)
        )


class Migration(migrations.Migration):
    dependencies = [
        ("dashboard", "0003_snapshot_text"),
    ]

    operations = [
        migrations.RunPython(copy_to_text, migrations.RunPython.noop),
        migrations.RemoveField(model_name="dashboard", name="snapshot"),
        migrations.AlterField(
            model_name="dashboard",
            name="snapshot_text",
            field=models.TextField(
                blank=True,
                default="",
                help_text="The snapshot as the API sends it (JSON text): a poll sends these bytes instead of decoding and encoding hundreds of KiB each time.",
            ),
        ),
    ]

"""Stored timings no person could have spent become unknown (issue 38 item 15).

Before the bound (``MAX_ITEM_SECONDS``, a day per item), a client could store
``active_seconds: 1.7e308``: two such rows overflow PostgreSQL's ``sum`` and every page that
adds a study's times failed. New input is refused now; rows already stored with a timing
above a day, below zero, infinite or NaN get NULL, which every sum and report reads as "not
measured". The judgment itself (its values, its item, its revision) is untouched.
"""

from django.db import migrations
from django.db.models import Q

#: The bound of annotation.judging.enums.MAX_ITEM_SECONDS when this migration was written.
MAX_ITEM_SECONDS = 24 * 60 * 60

TABLES = ("Judgment", "ComparisonJudgment", "EsaJudgment", "RankingJudgment")
FIELDS = ("active_seconds", "seconds")


def timings_out_of_range_unknown(apps, schema_editor):
    for name in TABLES:
        model = apps.get_model("judging", name)
        for field in FIELDS:
            # PostgreSQL orders NaN above every number, so "greater than a day" takes NaN too;
            # SQLite stores NaN as NULL already.
            out = Q(**{f"{field}__gt": MAX_ITEM_SECONDS}) | Q(**{f"{field}__lt": 0})
            model.objects.filter(out).update(**{field: None})


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0011_item_done_index"),
    ]

    operations = [
        migrations.RunPython(timings_out_of_range_unknown, migrations.RunPython.noop, elidable=True),
    ]

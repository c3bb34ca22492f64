"""An attention check drawn among the items keeps its latest answer, key and revision (issue 38 items 11-14)."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("judging", "0012_timing_out_of_range_unknown")]

    operations = [
        migrations.AddField(
            model_name="attentioncheck", name="key", field=models.CharField(blank=True, default="", max_length=64)
        ),
        migrations.AddField(model_name="attentioncheck", name="values", field=models.JSONField(blank=True, null=True)),
        migrations.AddField(model_name="attentioncheck", name="revision", field=models.PositiveIntegerField(default=0)),
    ]

"""Criteria and scales as data: a judgment's values live in one JSON map (criterion →
value) instead of four fixed 1–5 columns; every design's criteria get an explicit scale.

Existing judgments keep their four PEM scores (copied into ``values``) and existing
designs become PEM's four criteria on 1–5 point scales with their own labels, so every
study keeps working. Reversible while every design is still PEM's four 1–5 criteria.
"""

from django.db import migrations, models

import annotation.judging.defaults

PEM = ("adequacy", "fluency", "dissimilarity", "overall")


def forwards(apps, schema_editor):
    Judgment = apps.get_model("judging", "Judgment")
    JudgingDesign = apps.get_model("judging", "JudgingDesign")
    batch = []
    for j in Judgment.objects.only("pk", *PEM).iterator(chunk_size=2000):
        j.values = {c: getattr(j, c) for c in PEM}
        batch.append(j)
        if len(batch) >= 2000:
            Judgment.objects.bulk_update(batch, ["values"])
            batch = []
    if batch:
        Judgment.objects.bulk_update(batch, ["values"])
    for d in JudgingDesign.objects.all():
        crit = []
        for c in d.criteria:
            if "scale" not in c:
                labels = list(c.get("labels", []))
                c = {k: v for k, v in c.items() if k != "labels"} | {
                    "scale": {"type": "points", "min": 1, "max": len(labels), "labels": labels}
                }
            crit.append(c)
        d.criteria = crit
        d.save(update_fields=["criteria"])


def backwards(apps, schema_editor):
    Judgment = apps.get_model("judging", "Judgment")
    JudgingDesign = apps.get_model("judging", "JudgingDesign")
    for d in JudgingDesign.objects.all():
        if [c["slug"] for c in d.criteria] != list(PEM) or any(
            c["scale"] != {**c["scale"], "type": "points", "min": 1, "max": 5} for c in d.criteria
        ):
            raise RuntimeError(f"study {d.study_id} has criteria other than PEM's four on 1–5: cannot go back")
        d.criteria = [
            {k: v for k, v in c.items() if k != "scale"} | {"labels": c["scale"]["labels"]} for c in d.criteria
        ]
        d.save(update_fields=["criteria"])
    for j in Judgment.objects.iterator(chunk_size=2000):
        for c in PEM:
            setattr(j, c, j.values[c])
        j.save(update_fields=list(PEM))


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0002_open_job"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgment",
            name="values",
            field=models.JSONField(default=dict, help_text="Criterion slug → value on that criterion's scale."),
        ),
        migrations.AddField(
            model_name="judgingdesign",
            name="show_context",
            field=models.BooleanField(
                default=False, help_text="Show judges the previous and next sentences of the original's document."
            ),
        ),
        # Null during the copy; the backwards copy needs them nullable too.
        *[
            migrations.AlterField(model_name="judgment", name=c, field=models.PositiveSmallIntegerField(null=True))
            for c in PEM
        ],
        migrations.RunPython(forwards, backwards),
        *[migrations.RemoveConstraint(model_name="judgment", name=f"judging_{c}_range") for c in PEM],
        *[migrations.RemoveField(model_name="judgment", name=c) for c in PEM],
        migrations.AlterField(
            model_name="judgingdesign",
            name="criteria",
            field=models.JSONField(
                default=annotation.judging.defaults.default_criteria,
                help_text="1–8 criteria: slug, name, help text and scale (points, slider or categorical; see scales.py).",
            ),
        ),
        migrations.AlterField(
            model_name="judgingdesign",
            name="expected_scores",
            field=models.JSONField(
                default=annotation.judging.defaults.default_expected_scores,
                help_text="Expected value per control kind and criterion, on that criterion's scale (missing/null: unknown).",
            ),
        ),
        migrations.AlterField(
            model_name="judgment",
            name="seconds",
            field=models.FloatField(
                blank=True,
                help_text="Server time from serving to submitting (imported: the file's time, if any).",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="judgment",
            name="source",
            field=models.CharField(
                choices=[("page", "Judge's page"), ("api", "API"), ("import", "Imported")], default="api", max_length=8
            ),
        ),
    ]

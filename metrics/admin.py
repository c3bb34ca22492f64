from django.contrib import admin

from .models import MetricResource, MetricRun, MetricScore, PemModel


@admin.register(MetricRun)
class MetricRunAdmin(admin.ModelAdmin):
    list_display = ["id", "metric", "study", "status", "progress_done", "progress_total", "corpus_score", "created_at"]
    list_filter = ["status", "metric"]
    search_fields = ["metric", "signature", "study__name"]
    readonly_fields = [
        "signature",
        "corpus_score",
        "ci_low",
        "ci_high",
        "system_scores",
        "started_at",
        "finished_at",
        "compute_seconds",
        "progress_done",
        "progress_total",
    ]
    raw_id_fields = ["study", "created_by"]


@admin.register(MetricScore)
class MetricScoreAdmin(admin.ModelAdmin):
    list_display = ["run", "candidate", "score"]
    list_filter = ["run__metric"]
    raw_id_fields = ["run", "candidate"]


@admin.register(MetricResource)
class MetricResourceAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "filename", "size", "sha256", "owner", "study", "created_at"]
    list_filter = ["kind"]
    search_fields = ["name", "filename", "sha256"]
    readonly_fields = ["sha256", "size"]
    raw_id_fields = ["owner", "study"]


@admin.register(PemModel)
class PemModelAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "status", "test_pearson", "n_train", "n_test", "created_at"]
    list_filter = ["status"]
    readonly_fields = ["signature", "test_pearson", "hyperparameters", "summary", "n_train", "n_test"]
    raw_id_fields = ["study", "resource", "created_by"]

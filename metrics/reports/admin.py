"""Admin: reports are read-only records of a build (change them by building a new one)."""

from django.contrib import admin

from .models import Report, ReportPlot


class ReportPlotInline(admin.TabularInline):
    model = ReportPlot
    fields = ("position", "slug", "title")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(Report)
class ReportAdmin(admin.ModelAdmin):
    list_display = ("id", "study", "status", "phase", "created_by", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("study__name",)
    readonly_fields = (
        "study",
        "status",
        "phase",
        "progress_done",
        "progress_total",
        "error",
        "settings",
        "fingerprint",
        "excluded_judges",
        "metric_runs",
        "build_info",
        "compute_seconds",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
    )
    exclude = ("result",)
    inlines = [ReportPlotInline]

    def has_add_permission(self, request):
        return False

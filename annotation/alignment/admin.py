from django.contrib import admin

from .models import (
    AlignmentAssignment,
    AlignmentConfig,
    AlignmentGroup,
    AlignmentPair,
    AlignmentSystem,
    ScoringRun,
    SystemAlignment,
)


@admin.register(AlignmentConfig)
class AlignmentConfigAdmin(admin.ModelAdmin):
    list_display = ["study", "annotators_per_pair", "prefill_system"]


@admin.register(AlignmentGroup)
class AlignmentGroupAdmin(admin.ModelAdmin):
    list_display = ["external_id", "study", "position"]
    list_filter = ["study"]
    search_fields = ["external_id"]


@admin.register(AlignmentPair)
class AlignmentPairAdmin(admin.ModelAdmin):
    list_display = ["external_id", "study", "group", "position", "text1", "text2"]
    list_filter = ["study"]
    search_fields = ["external_id", "text1", "text2"]
    list_select_related = ["study", "group"]


@admin.register(AlignmentSystem)
class AlignmentSystemAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "kind"]
    list_filter = ["study", "kind"]


@admin.register(SystemAlignment)
class SystemAlignmentAdmin(admin.ModelAdmin):
    list_display = ["system", "pair"]
    list_filter = ["system__study", "system"]
    list_select_related = ["system", "pair"]
    raw_id_fields = ["pair"]


@admin.register(AlignmentAssignment)
class AlignmentAssignmentAdmin(admin.ModelAdmin):
    list_display = ["pair", "annotator", "status", "revision", "active_seconds", "server_seconds", "submitted_at"]
    list_filter = ["status", "pair__study"]
    search_fields = ["pair__external_id", "annotator__username"]
    list_select_related = ["pair", "annotator"]
    raw_id_fields = ["pair"]


@admin.register(ScoringRun)
class ScoringRunAdmin(admin.ModelAdmin):
    list_display = ["study", "kind", "label", "status", "created_at"]
    list_filter = ["kind", "status"]
    readonly_fields = ["results", "error", "signature"]

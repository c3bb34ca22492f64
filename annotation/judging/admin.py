"""Admin for judging: designs, assignments and the judgment record (read-only)."""

from django.contrib import admin

from .models import Assignment, JudgeExclusion, JudgingDesign
from .protocols.absolute.models import Judgment


@admin.register(JudgingDesign)
class JudgingDesignAdmin(admin.ModelAdmin):
    list_display = ["study", "judges_mode", "judges_per_item", "seed", "qc_alpha", "opened_at"]
    readonly_fields = ["opened_at", "opened_by"]

    def get_readonly_fields(self, request, obj=None):
        # Same rule as the service: after opening only expected scores and α change.
        if obj is not None and obj.is_frozen:
            return [
                "study",
                "criteria",
                "judges_mode",
                "judges_per_item",
                "control_counts",
                "seed",
                "opened_at",
                "opened_by",
            ]
        return self.readonly_fields


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["study", "judge", "n_items", "seed", "joined_late", "created_at"]
    list_filter = ["study", "joined_late"]
    search_fields = ["judge__username", "study__name"]
    readonly_fields = ["study", "judge", "seed", "n_items", "joined_late", "instructions_seen_at"]


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    """The record of what judges said: viewable, never edited here (use revisions)."""

    list_display = ["study", "judge", "item", "revision", "is_latest", "values", "seconds", "submitted_at"]
    list_filter = ["study", "is_latest", "source"]
    search_fields = ["judge__username"]
    list_select_related = ["study", "judge", "item"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(JudgeExclusion)
class JudgeExclusionAdmin(admin.ModelAdmin):
    list_display = ["study", "judge", "excluded", "decided_by", "created_at", "reason"]
    list_filter = ["study", "excluded"]

    def has_change_permission(self, request, obj=None):
        return False

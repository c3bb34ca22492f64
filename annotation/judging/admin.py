"""Admin for judging: designs, assignments, exclusions and every protocol's judgment record (read-only)."""

from django.apps import apps
from django.contrib import admin

from .models import Assignment, JudgeExclusion, JudgingDesign, JudgmentBase


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


@admin.register(JudgeExclusion)
class JudgeExclusionAdmin(admin.ModelAdmin):
    list_display = ["study", "judge", "excluded", "decided_by", "created_at", "reason"]
    list_filter = ["study", "excluded"]

    def has_change_permission(self, request, obj=None):
        return False


class JudgmentRecordAdmin(admin.ModelAdmin):
    """The record of what judges said, in a protocol's judgment table: viewable, never edited
    here (a judge revises by submitting again)."""

    list_filter = ["study", "is_latest", "source"]
    search_fields = ["judge__username"]
    list_select_related = ["study", "judge", "item"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


#: The columns of a judgment record's list, those a protocol's table has (its answer fields differ).
RECORD_COLUMNS = (
    "study",
    "judge",
    "item",
    "revision",
    "is_latest",
    "values",
    "spans",
    "score",
    "groups",
    "seconds",
    "submitted_at",
)

# Every protocol's judgment table: the judging app's tables on JudgmentBase (each protocol's
# models.py is imported with the app), found without loading the protocols' units, so that a
# command starts without their services and reports (pandas, scipy: 0.8 s a process).
for _model in apps.get_app_config("judging").get_models():
    if issubclass(_model, JudgmentBase) and not admin.site.is_registered(_model):
        _fields = {f.name for f in _model._meta.fields}
        admin.site.register(
            _model,
            type(
                f"{_model.__name__}Admin",
                (JudgmentRecordAdmin,),
                {"list_display": [c for c in RECORD_COLUMNS if c in _fields]},
            ),
        )

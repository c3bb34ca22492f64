from django.contrib import admin

from .models import Candidate, ImportJob, Original, Study, StudyMembership, System


class MembershipInline(admin.TabularInline):
    model = StudyMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "owner", "status", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "description"]
    inlines = [MembershipInline]


@admin.register(Original)
class OriginalAdmin(admin.ModelAdmin):
    list_display = ["external_id", "study", "text"]
    list_filter = ["study"]
    search_fields = ["external_id", "text"]


@admin.register(System)
class SystemAdmin(admin.ModelAdmin):
    list_display = ["name", "study", "kind"]
    list_filter = ["study", "kind"]


@admin.register(Candidate)
class CandidateAdmin(admin.ModelAdmin):
    list_display = ["original", "system", "text"]
    list_filter = ["system__study", "system"]
    search_fields = ["text"]
    list_select_related = ["original", "system"]


@admin.register(StudyMembership)
class StudyMembershipAdmin(admin.ModelAdmin):
    list_display = ["study", "user", "role"]
    list_filter = ["role", "study"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["study", "filename", "status", "row_count", "created_at"]
    list_filter = ["status"]
    readonly_fields = ["summary", "error"]

from django import forms
from django.contrib import admin

from annotation.services.membership import EXCLUSIVE_ROLES, role_conflict_message

from .models import Candidate, ImportJob, Original, Study, StudyMembership, System


class MembershipForm(forms.ModelForm):
    """The admin refuses a judge+annotator account like the services do (same message)."""

    class Meta:
        model = StudyMembership
        fields = ["study", "user", "role"]

    def clean(self):
        data = super().clean()
        assert data is not None  # ModelForm.clean returns cleaned_data
        study, user, role = (
            data.get("study") or getattr(self.instance, "study", None),
            data.get("user"),
            data.get("role"),
        )
        if study is not None and user is not None and role in EXCLUSIVE_ROLES:
            held = (
                StudyMembership.objects.filter(study=study, user=user, role__in=EXCLUSIVE_ROLES - {role})
                .exclude(pk=self.instance.pk)
                .values_list("role", flat=True)
                .first()
            )
            if held:
                raise forms.ValidationError(role_conflict_message(username=user.username, held=held, wanted=role))
        return data


class MembershipInline(admin.TabularInline):
    model = StudyMembership
    form = MembershipForm
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = ["name", "participant_title", "owner", "status", "created_at"]
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
    form = MembershipForm
    list_display = ["study", "user", "role"]
    list_filter = ["role", "study"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ["study", "filename", "status", "row_count", "created_at"]
    list_filter = ["status"]
    readonly_fields = ["summary", "error"]

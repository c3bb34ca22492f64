from django import forms
from django.conf import settings

from .importing import FORMATS


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200)
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class StudyImportForm(forms.Form):
    file = forms.FileField(help_text="CSV, TSV or JSONL, long or wide layout (see the README).")
    format = forms.ChoiceField(
        choices=[("", "by extension")] + [(f, f.upper()) for f in FORMATS], required=False
    )
    replace = forms.BooleanField(required=False, help_text="Delete this study's imported data first.")

    def clean_file(self):
        f = self.cleaned_data["file"]
        limit = settings.PARAEVAL_IMPORT_MAX_BYTES
        if f.size > limit:
            raise forms.ValidationError(f"The file is {f.size:,} bytes; the limit is {limit:,}.")
        return f


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=[("judge", "Judge"), ("annotator", "Annotator"), ("researcher", "Researcher")])

from django import forms
from django.conf import settings

from .importing import FORMATS


PARTICIPANT_TITLE_HELP = ("What judges and annotators see instead of the study's name. Keep it neutral: "
                          "never name a system, a source or a control.")


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Your own label; judges and annotators never see it.")
    participant_title = forms.CharField(max_length=120, required=False, label="Title for judges and annotators",
                                        help_text=PARTICIPANT_TITLE_HELP + " Empty: “Paraphrase evaluation”.")
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class StudySettingsForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Your own label; judges and annotators never see it.")
    participant_title = forms.CharField(max_length=120, label="Title for judges and annotators", help_text=PARTICIPANT_TITLE_HELP)
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


class MemberRemoveForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=[("judge", "Judge"), ("annotator", "Annotator"), ("researcher", "Researcher")])


class MemberAddForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=[("judge", "Judge"), ("annotator", "Annotator"), ("researcher", "Researcher")])


class PeopleAddForm(forms.Form):
    """Add judges or annotators in bulk: existing accounts, or new ones with a password or a sign-in link."""

    MODES = [("existing", "Existing accounts (usernames)"),
             ("password", "New accounts, each with a generated password"),
             ("link", "New accounts, each with a personal sign-in link")]
    role = forms.ChoiceField(choices=[("judge", "Judges"), ("annotator", "Annotators")])
    mode = forms.ChoiceField(choices=MODES, initial="password", label="Who")
    people = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), max_length=100_000,
                             label="Usernames or email addresses",
                             help_text="One per line (commas also separate). New accounts from an email address use it as their username.")

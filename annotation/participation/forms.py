"""Forms of the field-study pages. Checking the content is the services' work; these parse."""

from __future__ import annotations

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from annotation.enums import Platform, Role


class JoinLinkForm(forms.Form):
    role = forms.ChoiceField(label="Who joins", choices=[(Role.JUDGE, "Judges"), (Role.ANNOTATOR, "Annotators")])
    platform = forms.ChoiceField(label="Platform", choices=Platform.choices)
    label = forms.CharField(
        label="Label", required=False, max_length=120, help_text="For you only (e.g. 'Prolific pilot')."
    )
    max_participants = forms.IntegerField(
        label="Most participants", required=False, min_value=1, help_text="Empty: no cap."
    )
    ends_at = forms.DateTimeField(
        label="Closes at",
        required=False,
        help_text="YYYY-MM-DD HH:MM (UTC). Empty: no end date.",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
    )
    timeout_minutes = forms.IntegerField(
        label="Idle timeout (minutes)",
        min_value=1,
        initial=60,
        help_text="Idle this long without finishing: their unfinished items go to others.",
    )
    items_per_participant = forms.IntegerField(
        label="Items each participant rates",
        required=False,
        min_value=1,
        help_text="Judges: items each participant rates. Empty: every item.",
    )
    completion_url = forms.CharField(
        label="Completion address (URL)",
        required=False,
        max_length=500,
        help_text="Where finished participants go; {code} is replaced by the code. "
        "Prolific: empty gives Prolific's completion page.",
    )
    completion_code = forms.CharField(
        label="Completion code", required=False, max_length=64, help_text="Empty: generated. Prolific: its code."
    )
    screen_out_code = forms.CharField(
        label="Screen-out code", required=False, max_length=64, help_text="Empty: generated."
    )


def _questions_field(label: str) -> forms.CharField:
    return forms.CharField(
        required=False,
        label=label,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false"}),
        help_text='JSON list: [{"name": "native_language", "type": "language", "label": "Your native language", '
        '"required": true}, {"name": "english", "type": "scale", "label": "Your English", '
        '"choices": ["1", "2", "3", "4", "5"]}]. Types: text, language, choice, scale.',
    )


class SettingsForm(forms.Form):
    consent_text = forms.CharField(
        label="Consent text",
        required=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Shown before anything else; participants accept or decline.",
    )
    questions_before = _questions_field("Questions before the work")
    questions_after = _questions_field("Questions after the work")

    def __init__(self, *args, instance_row=None, **kwargs):
        super().__init__(*args, **kwargs)
        if instance_row is not None and not self.is_bound:
            self.initial = {
                "consent_text": instance_row.consent_text,
                "questions_before": _dump(instance_row.questions_before),
                "questions_after": _dump(instance_row.questions_after),
            }

    def _json(self, name: str):
        text = self.cleaned_data.get(name, "").strip()
        if not text:
            return []
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise forms.ValidationError(f"not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}") from None

    def clean_questions_before(self):
        return self._json("questions_before")

    def clean_questions_after(self):
        return self._json("questions_after")


def _dump(questions) -> str:
    return json.dumps(questions, indent=2, ensure_ascii=False) if questions else ""


class AnswersForm(forms.Form):
    """The participant's questions as a form (only for rendering; answers are checked by the service)."""

    def __init__(self, *args, questions: list[dict], **kwargs):
        super().__init__(*args, **kwargs)
        for q in questions:
            kind, label, required = q["type"], q["label"], bool(q.get("required"))
            field: forms.Field
            if kind in ("choice", "scale"):
                field = forms.ChoiceField(
                    label=label,
                    required=required,
                    choices=[(c, c) for c in q["choices"]],
                    widget=forms.RadioSelect(attrs={"class": f"q-{kind}"}),
                )
            elif kind == "language":
                field = forms.CharField(
                    label=label,
                    required=required,
                    max_length=100,
                    widget=forms.TextInput(attrs={"autocomplete": "off", "dir": "auto"}),
                )
            else:
                field = forms.CharField(
                    label=label,
                    required=required,
                    max_length=2000,
                    widget=forms.Textarea(attrs={"rows": 3, "dir": "auto"}),
                )
            if not required:
                field.help_text = _("Optional")
            self.fields[q["name"]] = field

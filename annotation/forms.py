from django import forms
from django.conf import settings

from annotation.importing.reading import FORMATS, MAX_NAME_CHARS
from metrics.core.paraphrasers._base import ParaphraserError
from metrics.core.paraphrasers.registry import get_paraphraser

PARTICIPANT_TITLE_HELP = (
    "What judges and annotators see instead of the study's name. Keep it neutral: "
    "never name a system, a source or a control."
)


LANGUAGE_HELP = (
    "The rating, instructions and alignment pages are shown in this language. The sentences, "
    "criteria and your texts are shown as you wrote them."
)


class StudyCreateForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Your own label; judges and annotators never see it.")
    participant_title = forms.CharField(
        max_length=120,
        required=False,
        label="Title for judges and annotators",
        help_text=PARTICIPANT_TITLE_HELP + " Empty: “Paraphrase evaluation”.",
    )
    language = forms.ChoiceField(
        choices=settings.LANGUAGES,
        initial="en",
        required=False,
        label="Language of the judge and annotator pages",
        help_text=LANGUAGE_HELP,
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)


class StudySettingsForm(forms.Form):
    name = forms.CharField(max_length=200, help_text="Your own label; judges and annotators never see it.")
    participant_title = forms.CharField(
        max_length=120, label="Title for judges and annotators", help_text=PARTICIPANT_TITLE_HELP
    )
    language = forms.ChoiceField(
        choices=settings.LANGUAGES,
        required=False,
        label="Language of the judge and annotator pages",
        help_text=LANGUAGE_HELP,
    )
    description = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False)

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        if not data.get("language"):  # not sent (an older form or script): keep the study's language
            data.pop("language", None)
        return data


class StudyImportForm(forms.Form):
    file = forms.FileField(
        help_text="CSV, TSV or JSONL, long or wide layout: the columns are in the researchers' guide, "
        "“Studies and import” (docs/researchers.md)."
    )
    format = forms.ChoiceField(choices=[("", "by extension")] + [(f, f.upper()) for f in FORMATS], required=False)
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

    MODES = [
        ("existing", "Existing accounts (usernames)"),
        ("password", "New accounts, each with a generated password"),
        ("link", "New accounts, each with a personal sign-in link"),
    ]
    role = forms.ChoiceField(choices=[("judge", "Judges"), ("annotator", "Annotators")])
    mode = forms.ChoiceField(choices=MODES, initial="password", label="Who")
    people = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 5}),
        max_length=100_000,
        label="Usernames or email addresses",
        help_text="One per line (commas also separate). New accounts from an email address use it as their username.",
    )


# The "Add a system" page (annotation.views.study_generate; the service is annotation.generation).


def parse_params(text: str) -> dict[str, str]:
    """``KEY=VALUE`` pairs, one a line (blank lines and ``#`` comments ignored); raises ``ValueError`` naming the line."""
    out: dict[str, str] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"line {lineno}: expected KEY=VALUE, got {line!r}")
        out[key.strip()] = value.strip()
    return out


class SystemGenerateForm(forms.Form):
    paraphraser = forms.ChoiceField(choices=())
    name = forms.CharField(
        max_length=MAX_NAME_CHARS,
        required=False,
        help_text="The system's name in this study (judges never see it). Default: the paraphraser's name.",
    )
    seed = forms.IntegerField(initial=0, min_value=0, help_text="The same seed gives the same paraphrases.")
    params = forms.CharField(
        label="Parameters",
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "rate=0.5"}),
        help_text="Optional: one KEY=VALUE a line (see the table for each paraphraser's parameters).",
    )

    def __init__(self, *args, paraphrasers=(), **kwargs):
        super().__init__(*args, **kwargs)
        paraphraser = self.fields["paraphraser"]
        assert isinstance(paraphraser, forms.ChoiceField)
        paraphraser.choices = [
            (p.slug, p.slug if p.available else f"{p.slug} (unavailable here)") for p in paraphrasers
        ]

    def clean_params(self) -> dict[str, str]:
        try:
            return parse_params(self.cleaned_data.get("params") or "")
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean returns cleaned_data
        slug = data.get("paraphraser")
        if slug and "params" in data:
            try:
                get_paraphraser(slug)(data["params"], seed=data.get("seed") or 0)
            except ParaphraserError as exc:
                self.add_error("params", str(exc))
        return data

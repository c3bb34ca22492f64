from django import forms
from django.conf import settings

from .enums import ALIGNMENT_FORMATS


def _size_checked(f):
    limit = settings.PARAEVAL_IMPORT_MAX_BYTES
    if f.size > limit:
        raise forms.ValidationError(f"The file is {f.size:,} bytes; the limit is {limit:,}.")
    return f


class PairsImportForm(forms.Form):
    file = forms.FileField(
        label="Pairs file",
        help_text="CSV, TSV or JSONL of pairs or groups: the formats are in the annotators' guide (docs/annotators.md).",
    )
    format = forms.ChoiceField(
        label="Pairs format",
        choices=[("", "by extension"), ("csv", "CSV"), ("tsv", "TSV"), ("jsonl", "JSONL")],
        required=False,
    )
    pretokenized = forms.BooleanField(
        required=False,
        label="Already tokenized",
        help_text="Split the sentences on spaces instead of running paraeval's tokenizer.",
    )
    replace = forms.BooleanField(
        required=False, label="Replace the study's pairs", help_text="Refused once annotators have saved work."
    )

    def clean_file(self):
        return _size_checked(self.cleaned_data["file"])


class SystemImportForm(forms.Form):
    name = forms.CharField(max_length=200, label="System name", help_text="e.g. fast_align, giza, eflomal")
    file = forms.FileField(
        label="Alignment file", help_text="One alignment per pair, in the order of the pairs export."
    )
    format = forms.ChoiceField(label="Alignment format", choices=[(k, v[0]) for k, v in ALIGNMENT_FORMATS.items()])
    replace = forms.BooleanField(required=False, label="Replace a system of this name")

    def clean_file(self):
        return _size_checked(self.cleaned_data["file"])


class AlignmentConfigForm(forms.Form):
    annotators_per_pair = forms.IntegerField(min_value=1, max_value=20, label="Annotators per pair (k)")
    prefill_system = forms.ChoiceField(required=False, label="Pre-fill grids from")

    def __init__(self, *args, systems=(), **kwargs):
        super().__init__(*args, **kwargs)
        prefill_system = self.fields["prefill_system"]
        assert isinstance(prefill_system, forms.ChoiceField)
        prefill_system.choices = [("", "nothing (empty grid)")] + [(str(s.pk), s.name) for s in systems]


class SystemScoringForm(forms.Form):
    system = forms.ChoiceField(label="System alignment")
    max_len = forms.IntegerField(min_value=1, max_value=10, initial=5, label="Longest phrase (words)")
    sure_only = forms.BooleanField(required=False, label="Phrase pairs from sure links only")

    def __init__(self, *args, systems=(), **kwargs):
        super().__init__(*args, **kwargs)
        system = self.fields["system"]
        assert isinstance(system, forms.ChoiceField)
        system.choices = [(str(s.pk), s.name) for s in systems]


class ParaphraseScoringForm(forms.Form):
    table = forms.FileField(
        label="Paraphrase table", help_text="phrase<TAB>paraphrase[<TAB>probability], UTF-8, one entry a line."
    )
    min_prob = forms.FloatField(
        min_value=0.0,
        max_value=1.0,
        initial=0.0,
        label="Minimum probability",
        help_text="ParaMetric kept paraphrases with probability ≥ 0.01.",
    )
    max_len = forms.IntegerField(min_value=1, max_value=10, initial=5, label="Longest phrase (words)")

    def clean_table(self):
        return _size_checked(self.cleaned_data["table"])


class AlignerRunForm(forms.Form):
    system_name = forms.CharField(max_length=200, initial="paraeval-aligner", label="Aligner system name")
    use_wordnet = forms.BooleanField(required=False, initial=True, label="Link WordNet synonyms (as possible links)")

"""python manage.py design STUDY [--set FIELD=JSON ...] [--file design.json]

A study's judging design from scripts and notebooks: printed as JSON, or changed through
the same service as the Design page (``design_update``: validated, refused once frozen)."""

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.judging.errors import JudgingError
from annotation.judging.services.design import DESIGN_FIELDS, design_get_or_create, design_update
from annotation.management.studies import study_from_ref


def _value(text: str) -> object:
    """A JSON value; a bare word that is not JSON (``--set protocol=comparison``) is a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        if text and not text.lstrip().startswith(("[", "{", '"')):
            return text
        raise


class Command(BaseCommand):
    help = (
        "Print a study's judging design as JSON, or change it (--set FIELD=JSON, --file design.json) as the "
        f"Design page does. Fields: {', '.join(DESIGN_FIELDS)}."
    )

    def add_arguments(self, parser):
        parser.add_argument("study", help="the study's name or id")
        parser.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="FIELD=JSON",
            help="a field and its new value as JSON (a bare word is a string); repeat for several",
        )
        parser.add_argument("--file", help="a JSON object of fields and values ('-': standard input)")

    def handle(self, *args, **opts):
        study = study_from_ref(opts["study"])
        changes: dict[str, object] = {}
        if opts["file"]:
            try:
                text = sys.stdin.read() if opts["file"] == "-" else Path(opts["file"]).read_text(encoding="utf-8")
                loaded = json.loads(text)
            except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise CommandError(f"{opts['file']}: not a readable JSON file: {exc}") from None
            if not isinstance(loaded, dict):
                raise CommandError(f"{opts['file']}: give a JSON object of design fields")
            changes.update(loaded)
        for item in opts["set"]:
            field, sep, raw = item.partition("=")
            if not sep:
                raise CommandError(f"--set {item}: write FIELD=VALUE")
            try:
                changes[field.strip()] = _value(raw)
            except json.JSONDecodeError as exc:
                raise CommandError(f"--set {field}: not JSON: {exc}") from None
        if changes:
            try:
                design = design_update(study=study, changes=changes)
            except JudgingError as exc:
                details = "".join(f"\n  {f}: {'; '.join(m)}" for f, m in exc.field_errors.items())
                raise CommandError(f"the design of '{study.name}' was not changed: {exc.message}{details}") from None
        else:
            design = design_get_or_create(study=study)
        self.stdout.write(
            json.dumps(
                {f: getattr(design, f) for f in DESIGN_FIELDS} | {"frozen": design.is_frozen},
                indent=2,
                ensure_ascii=False,
            )
        )

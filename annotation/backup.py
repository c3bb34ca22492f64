"""Back up one study with everything that depends on it, and restore it elsewhere.

The backup is a ZIP file holding ``data.json`` (Django's JSON serialization of every
row: the study, its originals, systems, candidates, memberships, judging,
alignment, metric runs, reports — whatever any app hangs off the study — plus the
user accounts those rows point at) and ``media/…`` (uploaded files those rows
reference). The rows are found generically, by following every relation that
would cascade from the study (Django's deletion collector, including rows that
PROTECT their parent), so a new app's models are backed up without changes here.

Restoring keeps primary keys, so it needs an installation without those rows
(e.g. a fresh one after ``migrate``); it refuses rather than overwrite.
"""

from __future__ import annotations

import datetime
import io
import json
import zipfile
from pathlib import PurePosixPath

from django.apps import apps
from django.contrib.admin.utils import NestedObjects
from django.contrib.auth import get_user_model
from django.core import serializers
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.core.management.color import no_style
from django.core.serializers.json import DjangoJSONEncoder
from django.db import DEFAULT_DB_ALIAS, connection, models, transaction

from .models import Study

FORMAT_VERSION = 1


class BackupError(Exception):
    pass


class _FullPrecisionEncoder(DjangoJSONEncoder):
    """Django's encoder, but times keep their microseconds.

    ``DjangoJSONEncoder`` cuts a datetime to milliseconds, so a restored row's
    timestamp could differ from the backed-up one (and two judgments within the same
    millisecond could swap order). A backup keeps the value exactly; the loader
    (``DateTimeField.to_python``) reads the full ISO form.
    """

    def default(self, o):
        if isinstance(o, datetime.datetime):
            text = o.isoformat()
            return text[:-6] + "Z" if text.endswith("+00:00") else text
        if isinstance(o, datetime.time):
            return o.isoformat()
        return super().default(o)


def collect(study: Study) -> list[models.Model]:
    """Every row that depends on ``study`` (cascade or protect), then the users they reference."""
    seen: dict[tuple[str, object], models.Model] = {}
    frontier: list[models.Model] = [study]
    while frontier:
        collector = NestedObjects(using=DEFAULT_DB_ALIAS)
        collector.collect(frontier)
        frontier = []
        for model, objs in collector.data.items():
            for obj in objs:
                seen.setdefault((model._meta.label, obj.pk), obj)
        for obj in collector.protected:
            key = (obj._meta.label, obj.pk)
            if key not in seen:
                seen[key] = obj
                frontier.append(obj)
    User = get_user_model()
    user_ids = set()
    for obj in seen.values():
        for field in obj._meta.concrete_fields:
            if isinstance(field, models.ForeignKey) and field.related_model is User:
                value = getattr(obj, field.attname)
                if value is not None:
                    user_ids.add(value)
    users = list(User.objects.filter(pk__in=user_ids).prefetch_related("groups"))
    groups = {g.pk: g for u in users for g in u.groups.all()}
    rows = list(groups.values()) + users + [o for o in seen.values() if not isinstance(o, User)]
    return rows


def _model_order() -> dict[str, int]:
    """Models in an order where every FK target comes first (Django's own sort)."""
    from django.core.serializers import sort_dependencies

    app_list = dict.fromkeys(apps.get_app_configs())
    ordered = sort_dependencies(app_list.items(), allow_cycles=True)
    return {m._meta.label: i for i, m in enumerate(ordered)}


def study_backup(*, study: Study) -> bytes:
    """A ZIP archive of ``study`` and everything that depends on it."""
    rows = collect(study)
    order = _model_order()
    rows.sort(key=lambda o: (order.get(o._meta.label, 10_000), str(o.pk)))
    data = serializers.serialize("json", rows, indent=1, cls=_FullPrecisionEncoder)
    files = set()
    for obj in rows:
        for field in obj._meta.concrete_fields:
            if isinstance(field, models.FileField):
                f = getattr(obj, field.attname)
                if f and default_storage.exists(str(f)):
                    files.add(str(f))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(
            "manifest.json",
            json.dumps(
                {
                    "format": "paraeval-study-backup",
                    "version": FORMAT_VERSION,
                    "study": study.name,
                    "rows": len(rows),
                    "files": sorted(files),
                },
                indent=1,
            ),
        )
        zf.writestr("data.json", data)
        for name in sorted(files):
            with default_storage.open(name, "rb") as fh:
                zf.writestr(str(PurePosixPath("media") / name), fh.read())
    return buf.getvalue()


def _remap_group(objects, old_pk, new_pk) -> None:
    for d in objects:
        groups = d.m2m_data.get("groups") if d.m2m_data else None
        if groups:
            d.m2m_data["groups"] = [new_pk if str(g) == str(old_pk) else g for g in groups]


def study_restore(*, archive: bytes) -> Study:
    """Restore a :func:`study_backup` archive; all or nothing.

    Refuses when a row with the same primary key (or a user with the same
    username) already exists, rather than overwrite anything.
    """
    try:
        zf = zipfile.ZipFile(io.BytesIO(archive))
        manifest = json.loads(zf.read("manifest.json"))
        data = zf.read("data.json").decode("utf-8")
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise BackupError(f"not a paraeval study backup: {exc}") from None
    if manifest.get("format") != "paraeval-study-backup" or manifest.get("version") != FORMAT_VERSION:
        raise BackupError(f"unsupported backup format {manifest.get('format')} v{manifest.get('version')}")
    objects = list(serializers.deserialize("json", data))
    clashes = []
    for d in objects:
        model = type(d.object)  # any model: its default manager is `objects` (no model renames it)
        if model._default_manager.filter(pk=d.object.pk).exists():
            clashes.append(f"{model._meta.label} #{d.object.pk}")
        elif (
            isinstance(d.object, get_user_model())
            and model._default_manager.filter(username=d.object.username).exists()
        ):
            clashes.append(f"user '{d.object.username}'")
    # Groups are shared (e.g. 'researchers'): reuse an existing group of the same name.
    from django.contrib.auth.models import Group

    kept = []
    for d in objects:
        if isinstance(d.object, Group):
            existing = Group.objects.filter(name=d.object.name).first()
            if existing is not None:
                clashes = [c for c in clashes if c != f"auth.Group #{d.object.pk}"]
                _remap_group(objects, d.object.pk, existing.pk)
                continue
        kept.append(d)
    objects = kept
    if clashes:
        raise BackupError(
            "the installation already holds rows of this backup: "
            + ", ".join(clashes[:10])
            + (" …" if len(clashes) > 10 else "")
        )
    used_models = {type(d.object) for d in objects}
    with transaction.atomic():
        with connection.constraint_checks_disabled():
            for d in objects:
                d.save()
        connection.check_constraints(table_names=[m._meta.db_table for m in used_models])
        for name in manifest.get("files", []):
            default_storage.save(name, ContentFile(zf.read(str(PurePosixPath("media") / name))))
        # Keep PostgreSQL's id sequences ahead of the restored primary keys.
        statements = connection.ops.sequence_reset_sql(no_style(), list(used_models))
        if statements:
            with connection.cursor() as cursor:
                for sql in statements:
                    cursor.execute(sql)
    return Study.objects.get(name=manifest["study"])

"""Uploaded metric resources (phrase tables, language models, vectors, PEM models).

:func:`metric_resource_create` stores a file under MEDIA_ROOT with its SHA-256, after
checking its size and, for a PEM model, that it is a data-only model file.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction

from annotation.models import Study

from ..enums import ResourceKind
from ..models import MetricResource

#: Uploaded resources above this size are refused (bytes).
RESOURCE_MAX_BYTES = getattr(settings, "PARAEVAL_RESOURCE_MAX_BYTES", 4 * 1024**3)


def _sha256_of(fh) -> tuple[str, int]:
    h = hashlib.sha256()
    size = 0
    fh.seek(0)
    for block in iter(lambda: fh.read(1 << 20), b""):
        h.update(block)
        size += len(block)
    fh.seek(0)
    return h.hexdigest(), size


@transaction.atomic
def metric_resource_create(
    *,
    name: str,
    kind: str,
    file: File,
    owner: User | None,
    study: Study | None = None,
    description: str = "",
) -> MetricResource:
    """Store an uploaded resource file under MEDIA_ROOT with its SHA-256.

    Raises :class:`ValidationError` for an empty or oversized file, an unknown
    kind, or a ``pem_model`` that is not a data-only PEM model (an old pickled
    model is refused here, at upload, and is never unpickled). The declared
    size (``file.size``, known from the upload's headers and spool) is checked
    before a byte is read.
    """
    declared = getattr(file, "size", None)
    if declared is not None and declared > RESOURCE_MAX_BYTES:
        raise ValidationError({"file": f"The file is {declared:,} bytes; the limit is {RESOURCE_MAX_BYTES:,}."})
    digest, size = _sha256_of(file)
    if size == 0:
        raise ValidationError({"file": "The file is empty."})
    if size > RESOURCE_MAX_BYTES:
        raise ValidationError({"file": f"The file is {size:,} bytes; the limit is {RESOURCE_MAX_BYTES:,}."})
    filename = (getattr(file, "name", "") or "resource").rsplit("/", 1)[-1]
    if kind == ResourceKind.PEM_MODEL:
        _check_pem_model_file(file, filename)
    resource = MetricResource(
        name=name.strip() or filename,
        kind=kind,
        filename=filename[:255],
        sha256=digest,
        size=size,
        owner=owner,
        study=study,
        description=description,
    )
    resource.file.save(filename, file, save=False)
    try:
        resource.full_clean()
    except ValidationError:
        resource.file.delete(save=False)
        raise
    resource.save()
    return resource


def _check_pem_model_file(file, filename: str) -> None:
    """Refuse a ``pem_model`` upload that :meth:`PemModel.load` would refuse (it never unpickles)."""
    from metrics.core.pem.model import PemFileError
    from metrics.core.pem.model import PemModel as CorePemModel

    file.seek(0)
    try:
        CorePemModel.load(file)
    except PemFileError as exc:
        raise ValidationError({"file": str(exc).replace(str(getattr(file, "name", "")), filename, 1)}) from None
    finally:
        file.seek(0)

from django.db import models


class Against(models.TextChoices):
    """What a candidate is compared with by metrics that take an ``against`` parameter."""

    ORIGINAL = "original", "the original (R)"
    REFERENCE = "reference", "the reference column"


class ResourceKind(models.TextChoices):
    """What an uploaded metric resource file holds (for listing; metrics read the file)."""

    PHRASE_TABLE = "phrase_table", "Phrase table (TSV english/pivot/count)"
    LANGUAGE_MODEL = "language_model", "Language model (ARPA or KenLM binary)"
    VECTORS = "vectors", "Word vectors (word2vec/GloVe text)"
    PEM_MODEL = "pem_model", "PEM model (trained by paraeval)"
    OTHER = "other", "Other"

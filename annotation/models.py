"""Studies and their data: originals, systems, candidates, membership, imports.

Judging lives in ``annotation.judging``, word alignment in ``annotation.alignment``.
"""

from django.conf import settings
from django.db import models

from config.jobs.models import BackgroundJob

from .enums import ImportFormat, Platform, Role, StudyStatus, SystemKind


class TimeStampedModel(models.Model):
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True


#: What judges and annotators see instead of a study's name until the researcher sets a title.
PARTICIPANT_TITLE_DEFAULT = "Paraphrase evaluation"


class Study(TimeStampedModel):
    """One evaluation campaign.

    ``name`` is the researcher's own label and often names the systems compared
    ("KJV vs WEB"), so it is never sent to a judge or annotator: they see
    ``participant_title``, a neutral title the researcher may edit.
    """

    name = models.CharField(max_length=200, unique=True)
    participant_title = models.CharField(
        max_length=120,
        default=PARTICIPANT_TITLE_DEFAULT,
        help_text="The title judges and annotators see. Keep it neutral: it must not name a system or a control.",
    )
    description = models.TextField(blank=True)
    language = models.CharField(
        max_length=16,
        choices=settings.LANGUAGES,
        default="en",
        help_text="The language of the judge and annotator pages (not of the study's sentences).",
    )
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="owned_studies")
    status = models.CharField(max_length=16, choices=StudyStatus.choices, default=StudyStatus.DRAFT)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.name


class StudyMembership(TimeStampedModel):
    """A user's role in one study. Owners are researchers implicitly."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="study_memberships")
    role = models.CharField(max_length=16, choices=Role.choices)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "user", "role"], name="uniq_membership_role")]

    def __str__(self) -> str:
        return f"{self.user} as {self.role} in {self.study}"


class Original(TimeStampedModel):
    """A source sentence R, identified within its study by the importer's id."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="originals")
    external_id = models.CharField(max_length=200)
    text = models.TextField()
    reference = models.TextField(blank=True)
    group = models.CharField(max_length=200, blank=True)
    document = models.CharField(max_length=200, blank=True)
    position = models.PositiveIntegerField(default=0, help_text="Order in the imported file.")

    class Meta:
        ordering = ["study", "position"]
        constraints = [models.UniqueConstraint(fields=["study", "external_id"], name="uniq_original_external_id")]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.text[:60]}"


class System(TimeStampedModel):
    """Where candidates come from. Never shown to judges."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="systems")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=SystemKind.choices, default=SystemKind.IMPORTED)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["study", "name"]
        constraints = [models.UniqueConstraint(fields=["study", "name"], name="uniq_system_name")]

    @property
    def is_control(self) -> bool:
        return self.kind in SystemKind.control_kinds()

    def __str__(self) -> str:
        return self.name


class Candidate(TimeStampedModel):
    """A paraphrase P of one original by one system."""

    original = models.ForeignKey(Original, on_delete=models.CASCADE, related_name="candidates")
    system = models.ForeignKey(System, on_delete=models.CASCADE, related_name="candidates")
    text = models.TextField()

    class Meta:
        ordering = ["original", "system"]
        constraints = [models.UniqueConstraint(fields=["original", "system"], name="uniq_candidate_original_system")]

    def __str__(self) -> str:
        return self.text[:80]


class ImportJob(BackgroundJob):
    """One upload of study data, parsed and written all or nothing."""

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+")
    #: Only jobs queued before the upload travelled in ``upload``; new jobs leave it empty.
    file = models.FileField(upload_to="imports/%Y/%m/", blank=True)
    #: The uploaded file itself while the job waits for a worker: in the database, so that a worker on
    #: any machine reads it (a file under MEDIA_ROOT exists only where the web request ran). Emptied
    #: when the job ends; at most PARAEVAL_IMPORT_MAX_BYTES.
    upload = models.BinaryField(blank=True, default=b"", editable=False)
    filename = models.CharField(max_length=255)
    format = models.CharField(max_length=8, choices=ImportFormat.choices)
    replace = models.BooleanField(default=False)
    row_count = models.PositiveIntegerField(default=0)
    summary = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at"]


class SignInLink(TimeStampedModel):
    """A personal, single-use sign-in link, made for a new judge or annotator (or researcher).

    Only the SHA-256 of the link's secret is stored: someone who reads the database
    cannot sign in with it. The link works once, until ``expires_at``.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="signin_links")
    token_hash = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    study = models.ForeignKey(
        Study,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The study the person was added to (for the record).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"sign-in link for {self.user}"


# --- field studies: join links and pseudonymous participants (docs/field-studies.md) -----------


class ParticipationSettings(TimeStampedModel):
    """What every join-link participant of a study sees before and after the work.

    ``questions_before`` / ``questions_after`` are lists of
    ``{"name", "type": "text"|"choice"|"scale"|"language", "label", "required", "choices"}``
    (validated by ``annotation.participation.questions``).
    """

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="participation_settings")
    consent_text = models.TextField(blank=True, help_text="Shown before anything else; the participant must accept it.")
    questions_before = models.JSONField(default=list, blank=True)
    questions_after = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"participation settings of {self.study}"


class JoinLink(TimeStampedModel):
    """A link a researcher shares: whoever opens it (and consents) becomes a pseudonymous participant.

    ``token`` is shared with everyone invited, so it is stored as is; it admits no one
    once ``closed_at``/``ends_at`` passed or ``max_participants`` joined.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="join_links")
    role = models.CharField(max_length=16, choices=Role.choices)
    platform = models.CharField(max_length=16, choices=Platform.choices, default=Platform.LINK)
    token = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=120, blank=True)
    max_participants = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: no cap.")
    ends_at = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)
    timeout_minutes = models.PositiveIntegerField(
        default=60, help_text="A participant idle this long without finishing releases their unfinished items."
    )
    items_per_participant = models.PositiveIntegerField(
        null=True, blank=True, help_text="Judges: items each participant rates (empty: every item)."
    )
    completion_url = models.CharField(
        max_length=500, blank=True, help_text="Where finished participants go; {code} is replaced by the code."
    )
    completion_code = models.CharField(max_length=64)
    screen_out_code = models.CharField(max_length=64)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_platform_display()} {self.role} link of {self.study}"


class Participant(TimeStampedModel):
    """A pseudonymous account made by a join link. No name, no email; ``pseudonym`` is its username.

    ``platform_id`` is Prolific's PROLIFIC_PID or MTurk's workerId (empty on a plain
    link): one participant per platform id per study. Only the SHA-256 of the
    personal resume token is stored.
    """

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    link = models.ForeignKey(JoinLink, on_delete=models.PROTECT, related_name="participants")
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="participant")
    role = models.CharField(max_length=16, choices=Role.choices)
    platform = models.CharField(max_length=16, choices=Platform.choices, default=Platform.LINK)
    platform_id = models.CharField(max_length=64, blank=True)
    platform_study_id = models.CharField(max_length=64, blank=True, help_text="Prolific STUDY_ID or MTurk hitId.")
    platform_session_id = models.CharField(
        max_length=64, blank=True, help_text="Prolific SESSION_ID or MTurk assignmentId."
    )
    mturk_submit_to = models.CharField(max_length=100, blank=True)
    resume_token_hash = models.CharField(max_length=64, unique=True)
    consented_at = models.DateTimeField()
    answers = models.JSONField(default=dict, blank=True, help_text='{"before": {...}, "after": {...}}')
    completed_at = models.DateTimeField(null=True, blank=True)
    timed_out_at = models.DateTimeField(null=True, blank=True, help_text="When their unfinished items were released.")

    class Meta:
        ordering = ["study", "created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["study", "platform", "platform_id"],
                condition=~models.Q(platform_id=""),
                name="participant_uniq_platform_id",
            ),
        ]

    def __str__(self) -> str:
        return f"participant {self.user_id} of {self.study}"

"""Researcher pages for studies, import and membership; the role-aware home page."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError
from django.http import JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.importing.reading import StudyImportError
from annotation.services import membership, studies
from annotation.services.membership import RoleConflict
from annotation.services.people import PeopleError, people_lines, study_people_add_existing, study_people_create
from annotation.services.queueing import study_import_file, study_system_generate
from annotation.services.signin import SignInLinkInvalid, signin_link_redeem
from annotation.services.studies import study_update
from metrics.core.paraphrasers.registry import available_paraphrasers

from . import selectors
from .enums import Role, SystemKind
from .forms import (
    MemberAddForm,
    MemberRemoveForm,
    PeopleAddForm,
    StudyCreateForm,
    StudyImportForm,
    StudySettingsForm,
    SystemGenerateForm,
)
from .generation import SystemGenerateError
from .models import Candidate, ImportJob, Study, System
from .web import researcher_study_required, study_context


def _first_url(*names: str) -> str | None:
    for name in names:
        try:
            return reverse(name)
        except NoReverseMatch:
            continue
    return None


@login_required
def home(request):
    """Send each person where their work is; show a chooser if they have several roles."""
    user = request.user
    is_researcher = selectors.user_is_researcher(user) or user.study_memberships.filter(role=Role.RESEARCHER).exists()
    judge_url = (
        _first_url("judging:home") if selectors.studies_for_member(user=user, role=Role.JUDGE).exists() else None
    )
    annot_url = (
        _first_url("alignment:home") if selectors.studies_for_member(user=user, role=Role.ANNOTATOR).exists() else None
    )
    choices = [u for u in (is_researcher and reverse("annotation:study_list"), judge_url, annot_url) if u]
    if len(choices) == 1:
        return redirect(choices[0])
    return render(
        request,
        "annotation/home.html",
        {
            "is_researcher": is_researcher,
            "judge_url": judge_url,
            "annotator_url": annot_url,
        },
    )


@login_required
def study_list(request):
    if not (
        selectors.user_is_researcher(request.user)
        or request.user.study_memberships.filter(role=Role.RESEARCHER).exists()
    ):
        raise PermissionDenied("Only researchers see the study list.")
    return render(
        request,
        "annotation/study_list.html",
        {
            "studies": selectors.study_list_for_researcher(request.user),
            "can_create": selectors.user_is_researcher(request.user),
        },
    )


@login_required
def study_create(request):
    if not selectors.user_is_researcher(request.user):
        raise PermissionDenied("Only researchers may create studies.")
    form = StudyCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            study = studies.study_create(owner=request.user, **form.cleaned_data)
        except (ValidationError, IntegrityError) as exc:
            form.add_error("name", getattr(exc, "messages", ["A study with this name exists."])[0])
        else:
            messages.success(request, f"Study “{study.name}” created. Import its data below.")
            return redirect("annotation:study_detail", study_id=study.pk)
    return render(request, "annotation/study_create.html", {"form": form})


def _settings_form(study: Study) -> StudySettingsForm:
    return StudySettingsForm(
        prefix="settings",
        initial={
            "name": study.name,
            "participant_title": study.participant_title,
            "language": study.language,
            "description": study.description,
        },
    )


@researcher_study_required
def study_detail(request, study):
    return _study_detail(request, study)


def _study_detail(request, study, *, people_form=None, people_errors=None, status=200):
    import_form = StudyImportForm()
    member_form = MemberAddForm()
    settings_form = _settings_form(study)
    import_errors: list[str] = []
    if request.method == "POST" and request.POST.get("action") == "settings":
        settings_form = StudySettingsForm(request.POST, prefix="settings")
        if settings_form.is_valid():
            try:
                study_update(study=study, changes=settings_form.cleaned_data)
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    settings_form.add_error(field if field in settings_form.fields else None, errors)
            else:
                messages.success(request, "Study settings saved.")
                return redirect("annotation:study_detail", study_id=study.pk)
        status = 400
        study.refresh_from_db()
    if request.method == "POST" and request.POST.get("action") == "import":
        import_form = StudyImportForm(request.POST, request.FILES)
        if import_form.is_valid():
            upload = import_form.cleaned_data["file"]
            try:
                job = study_import_file(
                    study=study,
                    data=upload.read(),
                    filename=upload.name,
                    fmt=import_form.cleaned_data["format"] or None,
                    replace=import_form.cleaned_data["replace"],
                    user=request.user,
                )
            except StudyImportError as exc:
                import_errors = [i.render(exc.filename) for i in exc.issues]
            else:
                if job.is_finished:
                    s = job.summary
                    messages.success(
                        request,
                        f"Imported {upload.name}: {s['originals_added']} originals, "
                        f"{s['systems_added']} systems, {s['candidates_added']} candidates.",
                    )
                else:
                    messages.info(request, f"{upload.name} is being imported in the background.")
                return redirect("annotation:study_detail", study_id=study.pk)
    return render(
        request,
        "annotation/study_detail.html",
        study_context(
            study,
            counts=selectors.study_counts(study=study),
            members=selectors.study_members(study=study),
            role_conflicts=selectors.study_role_conflicts(study=study),
            jobs=selectors.import_jobs_for_study(study=study),
            import_form=import_form,
            import_errors=import_errors,
            member_form=member_form,
            settings_form=settings_form,
            people_form=people_form or PeopleAddForm(prefix="people"),
            people_errors=people_errors or [],
        ),
        status=status,
    )


@researcher_study_required
@require_POST
def study_member_add(request, study):
    form = MemberAddForm(request.POST)
    if form.is_valid():
        user = User.objects.filter(username=form.cleaned_data["username"]).first()
        if user is None:
            messages.error(
                request,
                f"No user named “{form.cleaned_data['username']}”. Make a new account below (Add judges or annotators in bulk).",
            )
        else:
            role = form.cleaned_data["role"]
            try:
                membership.study_member_add(study=study, user=user, role=role)
            except RoleConflict as exc:
                messages.error(request, exc.messages[0])
                return redirect("annotation:study_detail", study_id=study.pk)
            note = ""
            if role == Role.JUDGE:
                # A judge added after judging opened gets their own list at once.
                from annotation.judging.services.assignments import assignment_ensure_for_judge

                if assignment_ensure_for_judge(study=study, judge=user) is not None:
                    note = " Their list of items is ready."
            messages.success(request, f"{user.username} is now a {role} in this study.{note}")
    return redirect("annotation:study_detail", study_id=study.pk)


def _a(role: str) -> str:
    return f"an {role}" if role[:1] in "aeiou" else f"a {role}"


@never_cache
@researcher_study_required
@require_POST
def study_people_add(request, study):
    """Add judges or annotators in bulk. New accounts' passwords or sign-in links are shown
    on this one response and nowhere else (not stored in clear, not cached)."""
    form = PeopleAddForm(request.POST, prefix="people")
    if not form.is_valid():
        return _study_detail(request, study, people_form=form, status=400)
    role, mode = form.cleaned_data["role"], form.cleaned_data["mode"]
    lines = people_lines(form.cleaned_data["people"])
    try:
        if mode == "existing":
            users = study_people_add_existing(study=study, usernames=lines, role=role)
        else:
            made = study_people_create(study=study, lines=lines, role=role, delivery=mode, created_by=request.user)
    except PeopleError as exc:
        return _study_detail(request, study, people_form=form, people_errors=exc.issues, status=400)
    if mode == "existing":
        messages.success(
            request,
            f"{len(users)} {role}{'s' if len(users) != 1 else ''} added: {', '.join(u.username for u in users)}.",
        )
        return redirect("annotation:study_detail", study_id=study.pk)
    rows = [
        {
            "username": p.username,
            "email": p.email,
            "password": p.password,
            "link": request.build_absolute_uri(reverse("annotation:signin_link", kwargs={"token": p.signin_token}))
            if p.signin_token
            else None,
        }
        for p in made
    ]
    return render(
        request,
        "annotation/people_created.html",
        study_context(study, people=rows, role=role, mode=mode, hours=int(settings.PARAEVAL_SIGNIN_LINK_HOURS)),
    )


@never_cache
@require_http_methods(["GET", "POST"])
def signin_link(request, token: str):
    """A personal sign-in link. GET only shows a button: mail scanners and link previews
    fetch links, and must not use up a single-use one. POST signs in."""
    if request.method == "GET":
        return render(request, "annotation/signin_link.html", {"token": token})
    try:
        user = signin_link_redeem(token=token)
    except SignInLinkInvalid as exc:
        return render(request, "annotation/signin_link.html", {"error": str(exc)}, status=exc.status)
    login(request, user, backend="django.contrib.auth.backends.ModelBackend")
    messages.success(
        request,
        f"Welcome, {user.username}. You are signed in."
        + ("" if user.has_usable_password() else " Bookmark this site: the link worked only once."),
    )
    return redirect("home")


@researcher_study_required
@require_POST
def study_member_remove(request, study):
    """Take one role away from one member (how a researcher resolves a judge+annotator conflict)."""
    form = MemberRemoveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Say whose role to remove, and which role.")
        return redirect("annotation:study_detail", study_id=study.pk)
    username, role = form.cleaned_data["username"], form.cleaned_data["role"]
    user = User.objects.filter(username=username).first()
    try:
        removed = user is not None and membership.study_member_remove(study=study, user=user, role=role)
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    else:
        if removed:
            messages.success(request, f"{username} is no longer {_a(role)} in this study.")
        else:
            messages.error(request, f"{username} is not {_a(role)} in this study.")
    return redirect("annotation:study_detail", study_id=study.pk)


@researcher_study_required
@require_GET
def import_job_status(request, study, job_id: int):
    job = get_object_or_404(ImportJob, pk=job_id, study=study)
    return JsonResponse(
        {
            "id": job.pk,
            "status": job.status,
            "phase": job.phase,
            "percent": job.percent,
            "done": job.progress_done,
            "total": job.progress_total,
            "error": job.error,
            "summary": job.summary,
        }
    )


# The "Add a system" page: a paraphraser run over the study's originals (service: annotation.generation).


@researcher_study_required
def study_generate(request, study):
    """The "Add a system" page: pick a paraphraser, run it over the study's originals."""
    paraphrasers = available_paraphrasers()
    form = SystemGenerateForm(request.POST or None, paraphrasers=paraphrasers)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            system = study_system_generate(
                study=study,
                paraphraser=data["paraphraser"],
                params=data["params"],
                seed=data["seed"],
                user=request.user,
                name=data["name"] or None,
            )
        except SystemGenerateError as exc:
            form.add_error(None, str(exc))
        else:
            n = Candidate.objects.filter(system=system).count()
            if n:
                messages.success(request, f"Added system “{system.name}” ({data['paraphraser']}): {n} candidates.")
            else:
                messages.info(
                    request,
                    f"System “{system.name}” is being generated in the background; "
                    "its progress is under Recent imports.",
                )
            return redirect("annotation:study_detail", study_id=study.pk)
    generated = System.objects.filter(study=study, kind=SystemKind.GENERATED).order_by("name")
    return render(
        request,
        "annotation/generate.html",
        study_context(
            study,
            form=form,
            paraphrasers=paraphrasers,
            generated=[{"name": s.name, "description": s.description, "n": s.candidates.count()} for s in generated],
        ),
    )

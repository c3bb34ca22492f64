"""The dashboard's API (JSON, for a lab watching from a notebook): the cached snapshot, the
per-item rate, the planner and the adaptive-allocation setting. Researchers of the study only.

Serializer names start with ``Dashboard`` so that they stay unique in the OpenAPI schema.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from django.utils.http import parse_etags
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.adaptive import services as adaptive_services
from annotation.adaptive.selectors import adaptive_summary
from annotation.web import get_managed_study

from .services import queueing, snapshot

TAGS = ["dashboard"]


def _drf_error(exc: DjangoValidationError) -> ValidationError:
    if hasattr(exc, "message_dict"):
        return ValidationError({("detail" if k == "__all__" else k): v for k, v in exc.message_dict.items()})
    return ValidationError({"detail": exc.messages})


class DashboardTotalsSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Items rated (first submissions) over every assignment.")
    total = serializers.IntegerField(help_text="Items assigned over every assignment.")
    judgments = serializers.IntegerField(help_text="Latest judgments (revisions not counted).")
    revisions = serializers.IntegerField()
    judges = serializers.IntegerField()
    waiting = serializers.ListField(child=serializers.CharField(), help_text="Judges without an assignment yet.")


class DashboardProjectionSerializer(serializers.Serializer):
    per_hour = serializers.FloatField(allow_null=True, help_text="Judgments per hour over the recent window.")
    items_left = serializers.IntegerField()
    finish_at = serializers.DateTimeField(allow_null=True, help_text="When the study ends at this pace.")
    rate = serializers.CharField(help_text="Cost of one judged item (the researcher's rate).")
    currency = serializers.CharField()
    cost_spent = serializers.CharField(help_text="done × rate")
    cost_projected = serializers.CharField(help_text="total × rate")


class DashboardSnapshotSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="The data's version stamp the snapshot was computed at.")
    computed_at = serializers.DateTimeField()
    status = serializers.CharField()
    protocol = serializers.CharField(allow_null=True)
    totals = DashboardTotalsSerializer()
    judges = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per judge: done, total, judgments, active_seconds, last_submitted_at, excluded, joined_late.",
    )
    systems = serializers.ListField(child=serializers.DictField(), help_text="Per genuine system: assigned, rated.")
    coverage = serializers.DictField(
        help_text="Items, k, items with k judges, coverage share and the histogram of judges per item."
    )
    links = serializers.ListField(child=serializers.DictField(), help_text="Join links: state, seats, taken, joined.")
    time = serializers.DictField(help_text="Active seconds per item (median, mean), total hours, recent pace.")
    projection = DashboardProjectionSerializer()
    qc = serializers.ListField(
        child=serializers.DictField(),
        help_text="Per judge: verdict, flags, control tests "
        "with p-values, attention checks, screen-out rule and reason.",
    )
    answers = serializers.DictField(
        help_text="The protocol's figures: agreement with its interval per criterion, "
        "the ranking with significance clusters, metric–human correlations."
    )
    answers_at = serializers.DateTimeField(allow_null=True)
    answers_current = serializers.BooleanField(help_text="Whether the answers were computed at this version.")
    adaptive = serializers.DictField()


class DashboardOutputSerializer(serializers.Serializer):
    version = serializers.CharField(help_text="The study's version stamp now.")
    current = serializers.BooleanField(help_text="Whether the snapshot was computed at the current version.")
    snapshot = DashboardSnapshotSerializer(allow_null=True, help_text="Null until the worker's first refresh.")
    plan = serializers.DictField(help_text="The last planner answer (status computing, done or failed).")
    item_rate = serializers.CharField()
    currency = serializers.CharField()


class DashboardApi(APIView):
    @extend_schema(
        tags=TAGS,
        responses={
            200: DashboardOutputSerializer,
            304: OpenApiResponse(description="unchanged since the answer whose ETag the poll sent in If-None-Match"),
            403: OpenApiResponse(description="not yours"),
        },
        summary="A study's live dashboard (the cached snapshot; poll it every few seconds)",
        description="Serves the snapshot the worker computed last. When the study's data moved since, "
        "`current` is false and one refresh is queued; poll again. The `Paraeval-Poll-After` header says "
        "in how many seconds the answer may next change (3 to 30); send the `ETag` back in `If-None-Match` "
        "to get `304` while it has not. The `Paraeval-Current` header (`true`/`false`) says what `current` "
        "says, on a `304` too: the study moving past the snapshot does not change the answer's `ETag`.",
    )
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        dashboard, version = queueing.dashboard_poll(study=study)
        headers = snapshot.dashboard_poll_headers(dashboard=dashboard, version=version)
        if headers["ETag"] in parse_etags(request.headers.get("If-None-Match", "")):
            return Response(status=status.HTTP_304_NOT_MODIFIED, headers=headers)
        if isinstance(request.accepted_renderer, JSONRenderer):
            # The snapshot is sent as the JSON text the worker stored, not decoded and walked
            # through the serializer (which documents its shape) and encoded again.
            body = snapshot.dashboard_answer_bytes(dashboard=dashboard, version=version)
            return HttpResponse(body, content_type="application/json", headers=headers)
        return Response(snapshot.dashboard_answer(dashboard=dashboard, version=version), headers=headers)


class DashboardSettingsInputSerializer(serializers.Serializer):
    item_rate = serializers.DecimalField(max_digits=9, decimal_places=4, min_value=0, required=False)
    currency = serializers.RegexField(r"^[A-Za-z]{1,8}$", required=False)


class DashboardSettingsApi(APIView):
    @extend_schema(
        tags=TAGS,
        request=DashboardSettingsInputSerializer,
        responses={200: DashboardSettingsInputSerializer, 400: OpenApiResponse(description="bad value")},
        summary="Set the per-item rate and currency of the projected cost",
    )
    def patch(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = DashboardSettingsInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            d = snapshot.dashboard_settings_update(study=study, **data.validated_data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        return Response({"item_rate": str(d.item_rate), "currency": d.currency})


class DashboardPlanInputSerializer(serializers.Serializer):
    # DRF's metaclass takes declared fields off the class, so this does not shadow Field.source at
    # run time; drf-stubs cannot see that, and the API's field is named "source".
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=["pilot", "stated"],
        default="pilot",
        help_text="pilot: estimate noise and system means from the study's judgments.",
    )
    criterion = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        max_length=64,
        help_text="The criterion a pilot is read on (empty: the protocol's primary score: overall, else "
        "the design's first criterion; ESA and ranking: the 0–100 score).",
    )
    n_originals = serializers.IntegerField(required=False, help_text="Originals in the planned study.")
    n_judges = serializers.IntegerField(required=False)
    judges_per_item = serializers.IntegerField(required=False, allow_null=True)
    n_simulations = serializers.IntegerField(required=False)
    level = serializers.FloatField(required=False, help_text="The study's significance level.")
    delta = serializers.FloatField(required=False, help_text="The system difference to separate (scale points).")
    power = serializers.FloatField(required=False)
    seed = serializers.IntegerField(required=False)
    item_sd = serializers.FloatField(required=False)
    judge_bias_sd = serializers.FloatField(required=False)
    noise_sd = serializers.FloatField(required=False)
    system_means = serializers.DictField(child=serializers.FloatField(), required=False, allow_null=True)


class DashboardProportionSerializer(serializers.Serializer):
    estimate = serializers.FloatField(allow_null=True)
    low = serializers.FloatField(help_text="Wilson 95 % interval over the simulations.")
    high = serializers.FloatField()
    n = serializers.IntegerField(help_text="Simulations.")


class DashboardPlanOutputSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=["computing", "done", "failed"], required=False)
    error = serializers.CharField(required=False)
    params = serializers.DictField(required=False, help_text="The request, cleaned.")
    assumptions = serializers.DictField(
        required=False, help_text="System means, item sd, judge bias sd, noise sd, source (pilot or stated)."
    )
    n_originals = serializers.IntegerField(required=False)
    n_judges = serializers.IntegerField(required=False)
    judges_per_item = serializers.IntegerField(required=False, allow_null=True)
    level = serializers.FloatField(required=False)
    n_simulations = serializers.IntegerField(required=False)
    ranking_right = DashboardProportionSerializer(required=False, help_text="P(the final ranking is right).")
    pairs_separated = DashboardProportionSerializer(
        required=False, help_text="P(every neighbouring pair separated at the level)."
    )
    agreement_alpha = serializers.FloatField(required=False, allow_null=True)
    agreement_width = serializers.FloatField(
        required=False, allow_null=True, help_text="Expected width of α's bootstrap interval."
    )
    judgments = serializers.IntegerField(required=False)
    separation = serializers.ListField(
        child=serializers.DictField(),
        required=False,
        help_text="Per k: originals and judgments to separate delta, simulated power.",
    )
    delta = serializers.FloatField(required=False, allow_null=True)


class DashboardAdaptiveOutputSerializer(serializers.Serializer):
    enabled = serializers.BooleanField()
    level = serializers.FloatField(required=False)
    stop_when_stable = serializers.BooleanField(required=False)
    min_judgments = serializers.IntegerField(required=False)
    min_judges = serializers.IntegerField(required=False)
    max_judge_share = serializers.FloatField(required=False)
    window = serializers.IntegerField(required=False)
    criterion = serializers.CharField(required=False)
    wrong_bound = serializers.FloatField(
        required=False, allow_null=True, help_text="Upper bound on P(the ranking is wrong), last refresh."
    )
    judgments_seen = serializers.IntegerField(required=False)
    judges_seen = serializers.IntegerField(
        required=False, help_text="Judges counted (not excluded, not screened out), last refresh."
    )
    largest_judge_share = serializers.FloatField(
        required=False, allow_null=True, help_text="The largest share of the counted judgments one judge gave."
    )
    refreshed_at = serializers.DateTimeField(required=False, allow_null=True)
    stopped_at = serializers.DateTimeField(required=False, allow_null=True)
    stop_reason = serializers.CharField(required=False, allow_blank=True)


class DashboardPlanApi(APIView):
    @extend_schema(tags=TAGS, responses={200: DashboardPlanOutputSerializer}, summary="The last plan of a study")
    def get(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        return Response(snapshot.dashboard_get_or_create(study=study).plan or {})

    @extend_schema(
        tags=TAGS,
        request=DashboardPlanInputSerializer,
        responses={202: DashboardPlanOutputSerializer, 400: OpenApiResponse(description="bad value")},
        summary="Plan the study: simulate it and say how likely its answer is right",
        description="Queues the simulation; GET returns the plan once `status` is `done`.",
    )
    def post(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = DashboardPlanInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            dashboard = queueing.study_plan_request(study=study, raw=data.validated_data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        return Response(dashboard.plan, status=status.HTTP_202_ACCEPTED)


class DashboardAdaptiveInputSerializer(serializers.Serializer):
    enabled = serializers.BooleanField(required=False)
    level = serializers.FloatField(required=False, min_value=0.001, max_value=0.5)
    stop_when_stable = serializers.BooleanField(required=False)
    min_judgments = serializers.IntegerField(required=False, min_value=0)
    min_judges = serializers.IntegerField(required=False, min_value=2, max_value=1000)
    max_judge_share = serializers.FloatField(required=False, min_value=0.05, max_value=0.9)
    window = serializers.IntegerField(required=False, min_value=1, max_value=100)


class DashboardAdaptiveApi(APIView):
    @extend_schema(
        tags=TAGS,
        request=DashboardAdaptiveInputSerializer,
        responses={200: DashboardAdaptiveOutputSerializer, 400: OpenApiResponse(description="bad value")},
        summary="Turn adaptive allocation on or off, and set when the study stops by itself",
    )
    def patch(self, request, study_id: int):
        study = get_managed_study(request, study_id)
        data = DashboardAdaptiveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            adaptive_services.adaptive_settings_update(study=study, changes=data.validated_data)
        except DjangoValidationError as exc:
            raise _drf_error(exc) from exc
        return Response(adaptive_summary(study=study))

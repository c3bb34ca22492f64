"""Every URL pattern of the project, with the people allowed to use it and real
parameters to call it with.

:func:`all_routes` walks ``get_resolver().url_patterns`` recursively (namespaces
and converters included). :func:`access_rule` says who may use a route, from its
name — the table is in :mod:`tests.hardening.test_authorization_matrix`.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from django.urls import URLPattern, URLResolver, get_resolver, reverse

#: Everyone the matrix tries. The study and its objects belong to ``owner``; the
#: item-level parameters (an item token, an alignment assignment) belong to
#: ``judge`` and ``annotator``; ``other_judge``/``other_annotator`` work on the same
#: study with their own items.
ROLES = ("owner", "other_researcher", "judge", "other_judge", "annotator", "other_annotator", "anonymous")
UNSAFE = ("post", "put", "patch", "delete")


@dataclass(frozen=True)
class Route:
    name: str
    pattern: str
    params: tuple[str, ...]
    methods: tuple[str, ...]

    @property
    def namespace(self) -> str:
        return self.name.rpartition(":")[0]

    @property
    def short(self) -> str:
        return self.name.rpartition(":")[2]


def _methods(callback) -> tuple[str, ...]:
    cls = getattr(callback, "cls", None) or getattr(callback, "view_class", None)
    if cls is None:
        # Function views: GET and POST, whatever the decorators allow; a wrong
        # method must be refused like anything else.
        return ("get", "post")
    return tuple(m for m in ("get", "post", "put", "patch", "delete") if hasattr(cls, m))


def _walk(patterns, prefix: str = "", namespace: str | None = None, params: tuple = ()):
    for p in patterns:
        names = tuple(getattr(p.pattern, "converters", {})) or tuple(p.pattern.regex.groupindex)
        if isinstance(p, URLResolver):
            ns = ":".join(x for x in (namespace, p.namespace) if x) or None
            yield from _walk(p.url_patterns, prefix + str(p.pattern), ns, params + names)
        elif isinstance(p, URLPattern):
            name = f"{namespace}:{p.name}" if namespace and p.name else (p.name or "")
            yield Route(name, prefix + str(p.pattern), params + names, _methods(p.callback))


def all_routes() -> list[Route]:
    """Every URL pattern of the project, named or not (unnamed ones have name '')."""
    return list(_walk(get_resolver().url_patterns))


# --- who may use what --------------------------------------------------------------------

PUBLIC = {
    "login",
    "logout",
    "api_token",
    "schema",
    "api_docs",
    "admin:login",
    "admin:logout",
    "favicon",
    "annotation:signin_link",
    # a join link (shared with everyone invited) and a participant's personal resume link (its secret)
    "participation:join",
    "participation:resume",
    # this documentation (config/docs.py): the project's own pages, no one's data
    "docs",
    "docs_page",
}
#: Any signed-in person; these pages and lists show only that person's own things.
AUTHENTICATED = {
    "home",
    "account",
    "account_token_revoke",
    "api_token_revoke",
    "judging:home",
    "alignment:home",
    "alignment:next",
    "alignment:guidelines",
    "annotation-api:study_list",
    "alignment-api:assignment_list",
    "metrics-api:metric_list",
    "metrics-api:resource_list",
    "metrics-api:pem_model_list",
}
#: Members of the 'researchers' group (creating studies, the list of studies one manages).
RESEARCHERS = {"annotation:study_list", "annotation:study_create", "annotation-api:study_create"}
#: A judge of the study, on their own assignment.
STUDY_JUDGE = {
    "judging:rate",
    "judging:instructions",
    "judging:submit",
    "judging:finished",
    "judging-api:item_next",
    "judging-api:item_last",
    "judging-api:judgment_submit",
    # training, attention checks, screened out; the side-by-side pages, which send a judge of
    # this (absolute) world's study to its rating page, whatever the pair token
    "judging:compare",
    "judging:compare_submit",
    "judging:compare_revise",
    # the ESA pages, likewise
    "judging:esa",
    "judging:esa_submit",
    "judging:esa_revise",
    # the ranking pages, which do the same
    "judging:rank",
    "judging:rank_submit",
    "judging:rank_revise",
    "judging:training",
    "judging:training_feedback",
    "judging:attention",
    "judging:screened_out",
    "judging-api:training",
    "judging-api:training_answer",
    "judging-api:attention",
}
#: A judge, on an item of their own assignment (``token``).
JUDGE_ITEM = {"judging:revise", "judging-api:item_detail", "judging-api:item_previous"}
#: The side-by-side protocol's API: on this world's absolute study every judge of it gets 409
#: ("not a side-by-side comparison", the same for any token), everyone else is refused.
#: Whose pair is whose in a comparison study: tests/annotation/judging/protocols/side_by_side/test_judging.py.
OTHER_PROTOCOL_API = {
    "judging-api:pair_next",
    "judging-api:pair_detail",
    "judging-api:comparison_submit",
    # the ESA protocol's API, likewise (tests/annotation/judging/protocols/esa/test_judging.py)
    "judging-api:esa_next",
    "judging-api:esa_item_detail",
    "judging-api:esa_submit",
    # the ranking protocol's API: the same ("not a ranking study")
    "judging-api:ranking_next",
    "judging-api:ranking_detail",
    "judging-api:ranking_submit",
}
#: An annotator, on their own assignment (``assignment_id``).
#: A join-link participant's own pages (none of the world's roles is one: all are refused).
PARTICIPANT_OWN = {"participation:continue", "participation:questions"}
ANNOTATOR_ITEM = {
    "alignment:grid",
    "alignment-api:assignment_detail",
    "alignment-api:assignment_draft",
    "alignment-api:assignment_submit",
}

ALLOWED = {
    "public": set(ROLES),
    "authenticated": set(ROLES) - {"anonymous"},
    "researchers": {"owner", "other_researcher"},
    "study researcher": {"owner"},
    "study judge": {"judge", "other_judge"},
    "judge's own item": {"judge"},
    "study judge, other protocol": {"judge", "other_judge"},
    "annotator's own item": {"annotator"},
    "participant's own pages": set(),
    "staff": set(),
}


def access_rule(route: Route) -> str | None:
    """The rule of a route (a key of :data:`ALLOWED`), or None when no rule covers it."""
    for names, rule in (
        (PUBLIC, "public"),
        (AUTHENTICATED, "authenticated"),
        (RESEARCHERS, "researchers"),
        (STUDY_JUDGE, "study judge"),
        (JUDGE_ITEM, "judge's own item"),
        (ANNOTATOR_ITEM, "annotator's own item"),
        (PARTICIPANT_OWN, "participant's own pages"),
        (OTHER_PROTOCOL_API, "study judge, other protocol"),
    ):
        if route.name in names:
            return rule
    if route.namespace == "admin":
        return "staff"
    # Everything else under a study is the study's researchers' (pages and API alike).
    if "study_id" in route.params and route.namespace in {
        "annotation",
        "annotation-api",
        "judging",
        "judging-api",
        "alignment",
        "alignment-api",
        "metrics",
        "metrics-api",
        "reports",
        "reports-api",
        "participation",
        "participation-api",
        "dashboard",
        "dashboard-api",
    }:
        return "study researcher"
    return None


# --- parameters ------------------------------------------------------------------------------


def url_for(route: Route, world: SimpleNamespace) -> str | None:
    """The route's URL with real objects of the world; None if the world lacks one."""
    if route.namespace == "admin":
        values = {"object_id": "1", "id": "1", "app_label": "annotation", "content_type_id": 1}
    else:
        run = world.metric_run
        if route.namespace in {"alignment", "alignment-api"}:
            run = world.aligner_run if route.short == "aligner_run_status" else world.scoring_run
        fmt = {
            "alignment:pairs_export": "jsonl",
            "alignment:run_export": "csv",
            "metrics:run_export": "csv",
            "reports:export": "json",
        }.get(route.name, "csv")
        values = {
            "study_id": world.study,
            "job_id": world.job,
            "token": world.token,
            "username": "w-judge",
            "assignment_id": world.assignment,
            "pair_id": world.pair,
            "system_id": world.alignment_system,
            "pem_id": world.pem,
            "open_job_id": world.open_job,
            "report_id": world.report,
            "slug": world.plot,
            "table": world.table,
            "run_id": run,
            "fmt": fmt,
            "link_id": world.join_link,
            "phase": "before",
            "path": "field-studies/",
        }
        if route.name == "participation:join":
            values["token"] = world.join_token
        elif route.name == "participation:resume":
            values["token"] = world.resume_token
    kwargs = {p: values.get(p) for p in route.params}
    if any(v is None for v in kwargs.values()):
        return None
    return reverse(route.name, kwargs=kwargs)

from django.conf import settings

from .enums import Role
from .selectors import studies_for_member, user_is_researcher


def navigation(request):
    """What the navigation bar offers this user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav": {}}
    return {
        "docs_url": settings.PARAEVAL_DOCS_URL,
        "nav": {
            "researcher": user_is_researcher(user) or user.study_memberships.filter(role=Role.RESEARCHER).exists(),
            "judge": studies_for_member(user=user, role=Role.JUDGE).exists(),
            "annotator": studies_for_member(user=user, role=Role.ANNOTATOR).exists(),
        },
    }

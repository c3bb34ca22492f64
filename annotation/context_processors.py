from .enums import Role
from .selectors import studies_for_member, user_is_researcher


def navigation(request):
    """What the navigation bar offers this user."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"nav": {}}
    return {
        "nav": {
            "researcher": user_is_researcher(user) or user.study_memberships.filter(role=Role.RESEARCHER).exists(),
            "judge": studies_for_member(user=user, role=Role.JUDGE).exists(),
            "annotator": studies_for_member(user=user, role=Role.ANNOTATOR).exists(),
        }
    }

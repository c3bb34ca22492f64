"""The project package as a Django app, so that its system checks are registered."""

from django.apps import AppConfig


class ParaevalConfig(AppConfig):
    name = "config"
    label = "paraeval_config"
    verbose_name = "paraeval configuration"

    def ready(self):
        from . import checks  # noqa: F401 - registers the checks

from importlib import import_module

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "annotation.judging"
    label = "judging"

    def import_models(self) -> None:
        """The judging app's shared tables (``models.py``), then each registered protocol's
        own (``protocols/<name>/models.py``, app label ``judging``).

        Django imports only an app's ``models`` module; a protocol's tables live in its
        package, so they are imported here, while Django is still loading models (before
        ``ready``), so that relations to them resolve as for any other table. The modules
        are the registry's: a new protocol's tables load with its registry line.
        ``models.py`` does not import them itself: each protocol's models import the
        shared bases, and the protocols may not import each other (protocol-units).
        """
        super().import_models()
        from annotation.judging.protocols.registry import BUILTIN_MODULES

        for unit_module in BUILTIN_MODULES:
            import_module(f"{unit_module.rpartition('.')[0]}.models")

    def ready(self) -> None:
        from config.recovery import requeuer_register

        requeuer_register("annotation.judging.services.queueing.jobs_requeue_stale", "judging opening(s)")

from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Studies and annotation"

    def ready(self) -> None:
        from config.recovery import requeuer_register

        requeuer_register("annotation.services.queueing.jobs_requeue_stale", "import/generation job(s)")

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "annotation.judging"
    label = "judging"

    def ready(self) -> None:
        from annotation.judging.services.queueing import jobs_requeue_stale
        from config.recovery import requeuer_register

        requeuer_register(jobs_requeue_stale, "judging opening(s)")

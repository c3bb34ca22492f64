from django.apps import AppConfig


class AlignmentConfig(AppConfig):
    name = "annotation.alignment"
    label = "alignment"

    def ready(self) -> None:
        from config.recovery import requeuer_register

        requeuer_register(
            "annotation.alignment.services.queueing.jobs_requeue_stale", "alignment scoring/aligner run(s)"
        )

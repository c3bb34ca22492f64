from django.apps import AppConfig


class AlignmentConfig(AppConfig):
    name = "annotation.alignment"
    label = "alignment"

    def ready(self) -> None:
        from annotation.alignment.services.queueing import jobs_requeue_stale
        from config.recovery import requeuer_register

        requeuer_register(jobs_requeue_stale, "alignment scoring/aligner run(s)")

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "annotation.judging"
    label = "judging"

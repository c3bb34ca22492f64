from django.apps import AppConfig


class AlignmentConfig(AppConfig):
    name = "annotation.alignment"
    label = "alignment"

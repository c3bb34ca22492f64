"""Field studies: join links, pseudonymous participants, crowd platforms, consent and questions.

See docs/field-studies.md. Views and APIs call :mod:`.services` (writes) and
:mod:`.selectors` (reads); the models live in :mod:`annotation.models`.
"""

"""Judging protocols as units: one package a protocol, one registry of them.

A *protocol* is a way of judging a study: absolute rating of one pair at a time
(:mod:`.absolute`), side-by-side comparison of two candidates (:mod:`.side_by_side`),
and the ones to come (error spans, k-way ranking). Each declares, in its own package,
its items and assignment, its judge page and keys, its API, its submission (on the
shared core of :mod:`annotation.judging.services.submission`), its QC, its report,
its exports and how it runs through a join link, as a subclass of
:class:`.base.JudgingProtocol` registered in :mod:`.registry`.

Code that needs to know what a study's protocol does asks its unit
(``protocol_for_study(study=...).judge_page``); nothing outside :mod:`.registry`
compares protocol names (``tests/test_architecture.py`` fails otherwise). How to
add a protocol: ``docs/protocols.md``.
"""

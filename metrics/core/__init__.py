"""Every metric and statistic of paraeval, in pure Python: the library beneath both apps.

It imports nothing of Django, DRF or Celery, and nothing of the project outside itself
(``annotation``, ``config``, and every other module of ``metrics``), so every metric runs,
and is tested, from a plain Python script. ``.importlinter``'s ``core-no-django`` contract
says so without naming the apps' modules one by one (``metrics.*``), and
``tests/test_architecture.py`` checks it from the files.
"""

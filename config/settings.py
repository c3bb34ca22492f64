"""paraeval settings, read from the environment (django-environ).

With nothing set, paraeval runs on an embedded default: a SQLite file under
``var/`` (WAL mode, busy timeout) and a Celery broker that needs no server
(kombu's SQLAlchemy transport over another SQLite file). ``DATABASE_URL`` and
``CELERY_BROKER_URL`` switch to PostgreSQL and Redis/RabbitMQ. README.md lists
every variable.
"""

import os
import time
from datetime import timedelta
from decimal import Decimal, InvalidOperation
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Exchange, Queue
from whitenoise.compress import Compressor

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("PARAEVAL_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env()
env_file = BASE_DIR / ".env"
if env_file.exists():
    environ.Env.read_env(str(env_file))

PARAEVAL_ENV = env.str("PARAEVAL_ENV", default="development")
PRODUCTION = PARAEVAL_ENV == "production"
if PARAEVAL_ENV not in {"development", "production", "test"}:
    raise ImproperlyConfigured("PARAEVAL_ENV must be development, production or test")

DEBUG = env.bool("DEBUG", default=not PRODUCTION)
if PRODUCTION:
    # A production server must never run with a known key or with debug pages.
    if not env.str("SECRET_KEY", default=""):
        raise ImproperlyConfigured("PARAEVAL_ENV=production needs SECRET_KEY to be set")
    if DEBUG:
        raise ImproperlyConfigured("PARAEVAL_ENV=production refuses DEBUG=on")


# --- secret key ---------------------------------------------------------------
def _install_secret_key(path: Path) -> str:
    """This installation's own random key, made on first start and kept in ``var/`` (mode 600).

    Development used to share one key written in this file: anyone could forge
    sessions, password-reset links and signed values of any install left on it.
    ``O_EXCL`` makes two processes starting at once agree on a single key.
    """
    from django.core.management.utils import get_random_secret_key

    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        for _ in range(50):  # another process may be writing it right now
            key = path.read_text(encoding="ascii").strip()
            if key:
                return key
            time.sleep(0.1)
        raise ImproperlyConfigured(f"{path} is empty: delete it to make a new key") from None
    key = get_random_secret_key()
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(key + "\n")
    return key


SECRET_KEY = env.str("SECRET_KEY", default="") or _install_secret_key(VAR_DIR / "secret_key")
# -------------------------------------------------------------------------------

ALLOWED_HOSTS = env.list(
    "ALLOWED_HOSTS", default=[] if PRODUCTION else ["localhost", "127.0.0.1", "[::1]", "testserver"]
)
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "config.apps.ParaevalConfig",
    "annotation",
    "annotation.judging",
    "annotation.alignment",
    "annotation.adaptive",
    "metrics",
    "metrics.reports",
    "metrics.dashboard",
]

MIDDLEWARE = [
    # First: a chunked body (no Content-Length) is refused before anything reads it as empty.
    "config.middleware.LengthRequiredMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "config.middleware.ProxyHeadersWatchMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "config.middleware.ContentSecurityPolicyMiddleware",
    "config.middleware.RejectNulMiddleware",
    # A cache (Redis) or broker outage answers 503 with Retry-After, never a 500 traceback.
    "config.middleware.ServiceUnavailableMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "config.middleware.PrivateNoStoreMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last: turns a login that axes refused into the lockout page/JSON (config.auth.lockout_response).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
#: Each judging protocol's package holds its own ``templates/`` and ``static/`` (its pages, their
#: scripts and styles, its part of the report and of the QC page: docs/protocols.md). Found by
#: folder, since settings load before the protocol registry can be asked; a test checks that
#: every registered unit's templates and static files are found here and only in its package.
PROTOCOL_PACKAGES = sorted(
    p for p in (BASE_DIR / "annotation" / "judging" / "protocols").iterdir() if (p / "__init__.py").is_file()
)
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates", *(p / "templates" for p in PROTOCOL_PACKAGES if (p / "templates").is_dir())],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotation.context_processors.navigation",
            ],
        },
    },
]
WSGI_APPLICATION = "config.wsgi.application"

# --- database -------------------------------------------------------------
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'paraeval.sqlite3'}")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            # Many judges write at once: WAL lets readers go on while one writer
            # commits, IMMEDIATE takes the write lock up front (no mid-transaction
            # upgrade deadlocks), and the timeout makes writers queue, not fail.
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;",
            "transaction_mode": "IMMEDIATE",
            "timeout": env.int("SQLITE_BUSY_TIMEOUT", default=30),
        }
    )
else:
    DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("CONN_MAX_AGE", default=60))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- celery ---------------------------------------------------------------
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=f"sqla+sqlite:///{VAR_DIR / 'celery-broker.sqlite3'}")
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
# A web request must not hang or fail because the broker is away: publishing
# gives up quickly and the job stays queued in our own tables (see jobs).
CELERY_BROKER_TRANSPORT_OPTIONS = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
CELERY_TASK_PUBLISH_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
# Recovery of background work (config/recovery.py). While a worker runs a job it
# touches the job's row every PARAEVAL_JOB_HEARTBEAT_SECONDS. A job 'running' whose
# row has not been touched for PARAEVAL_REQUEUE_STALE_SECONDS lost its worker; a
# job 'queued' that long was probably never delivered. Celery beat (``make run``
# embeds it in its worker; ``make beat`` runs it alone) sends both again every
# PARAEVAL_REQUEUE_INTERVAL_SECONDS; a resent job runs only if it can claim the job,
# so a live slow job is never run twice at once. Every worker also sends the jobs
# still queued when it starts (PARAEVAL_REQUEUE_ON_WORKER_START=off disables that).
PARAEVAL_JOB_HEARTBEAT_SECONDS = env.float("PARAEVAL_JOB_HEARTBEAT_SECONDS", default=30)
PARAEVAL_REQUEUE_STALE_SECONDS = env.float("PARAEVAL_REQUEUE_STALE_SECONDS", default=300)
PARAEVAL_REQUEUE_INTERVAL_SECONDS = env.float("PARAEVAL_REQUEUE_INTERVAL_SECONDS", default=120)
PARAEVAL_REQUEUE_ON_WORKER_START = env.bool("PARAEVAL_REQUEUE_ON_WORKER_START", default=True)
if PARAEVAL_JOB_HEARTBEAT_SECONDS <= 0 or PARAEVAL_REQUEUE_INTERVAL_SECONDS <= 0:
    raise ImproperlyConfigured("PARAEVAL_JOB_HEARTBEAT_SECONDS and PARAEVAL_REQUEUE_INTERVAL_SECONDS must be positive")
if PARAEVAL_REQUEUE_STALE_SECONDS < 3 * PARAEVAL_JOB_HEARTBEAT_SECONDS:
    raise ImproperlyConfigured(
        "PARAEVAL_REQUEUE_STALE_SECONDS must be at least 3 x PARAEVAL_JOB_HEARTBEAT_SECONDS "
        "(a live job would look stale between two heartbeats)"
    )
#: Join links (docs/field-studies.md): how often beat expires the seats of participants idle past
#: their link's timeout, so that a link filled by people who never came back opens again by itself.
PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS = env.float("PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS", default=60)
if PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS <= 0:
    raise ImproperlyConfigured("PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS must be positive")
#: Dashboards (docs/deployment.md, "A pool for dashboards"): a lab that serves the dashboard API
#: from its own lower-priority gunicorn may give the dashboards' background work (the snapshot
#: refreshes) a queue of its own, for a worker started with `nice` and `-Q` that name. Empty (the
#: default): the default queue, which every worker consumes.
PARAEVAL_DASHBOARD_QUEUE = env.str("PARAEVAL_DASHBOARD_QUEUE", default="")
#: The planner's simulations (docs/planning.md, "Where plans run"): a queue of their own, never the
#: dashboards' refreshes' (a plan runs up to tens of seconds; a refresh must not wait behind it).
#: Declared below, so a worker started without -Q (make run, make worker) consumes it as well as
#: the default queue; a lab may give it a worker of its own (-Q plans) and start the others with
#: -Q celery. Empty: plans share the default queue.
PARAEVAL_PLAN_QUEUE = env.str("PARAEVAL_PLAN_QUEUE", default="plans")
if PARAEVAL_PLAN_QUEUE and PARAEVAL_PLAN_QUEUE == PARAEVAL_DASHBOARD_QUEUE:
    raise ImproperlyConfigured(
        "PARAEVAL_PLAN_QUEUE must differ from PARAEVAL_DASHBOARD_QUEUE (a plan blocks refreshes)"
    )
CELERY_TASK_DEFAULT_QUEUE = "celery"


def task_queues(default: str, plans: str) -> list[Queue]:
    """The queues a worker started without -Q consumes: the default one and the plans'.

    Each is bound to an exchange and routing key of its own name, as Celery binds a queue
    it creates by itself: a ``Queue(name)`` without them is bound to the default exchange
    and key, so two of them would each receive every task (every job run twice).
    """
    names = [default] + ([plans] if plans and plans != default else [])
    return [Queue(name, Exchange(name, type="direct"), routing_key=name) for name in names]


CELERY_TASK_QUEUES = task_queues(CELERY_TASK_DEFAULT_QUEUE, PARAEVAL_PLAN_QUEUE)
CELERY_TASK_ROUTES = {
    **({"dashboard.refresh": {"queue": PARAEVAL_DASHBOARD_QUEUE}} if PARAEVAL_DASHBOARD_QUEUE else {}),
    **({"dashboard.plan": {"queue": PARAEVAL_PLAN_QUEUE}} if PARAEVAL_PLAN_QUEUE else {}),
}
CELERY_BEAT_SCHEDULE = {
    "paraeval-requeue-stale-jobs": {
        "task": "paraeval.requeue_stale_jobs",
        "schedule": PARAEVAL_REQUEUE_INTERVAL_SECONDS,
        # If every worker is busy, one pending pass is enough: older ones expire unrun.
        "options": {"expires": PARAEVAL_REQUEUE_INTERVAL_SECONDS},
    },
    "paraeval-release-timed-out-participants": {
        "task": "participation.release_timed_out",
        "schedule": PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS,
        "options": {"expires": PARAEVAL_SEAT_RELEASE_INTERVAL_SECONDS},
    },
}
#: How often a study dashboard's heavy figures (agreement, ranking, correlations) may be recomputed;
#: the counts follow every change (docs/dashboard.md).
PARAEVAL_DASHBOARD_ANSWERS_SECONDS = env.float("PARAEVAL_DASHBOARD_ANSWERS_SECONDS", default=30)
# A dashboard's snapshot (counts, judge QC) is recomputed at most this often (docs/dashboard.md).
PARAEVAL_DASHBOARD_REFRESH_SECONDS = env.float("PARAEVAL_DASHBOARD_REFRESH_SECONDS", default=5)
#: The share of the time a study's dashboard refreshes may take: after a refresh that took
#: W seconds (worker and database), the next waits at least W × (1 / duty − 1) — a 2 s refresh
#: at 500 judges rests 18 s, a 50 ms one the 5 s above (docs/dashboard.md).
PARAEVAL_DASHBOARD_DUTY = env.float("PARAEVAL_DASHBOARD_DUTY", default=0.1)
CELERY_BEAT_SCHEDULE_FILENAME = env.str("CELERY_BEAT_SCHEDULE_FILENAME", default=str(VAR_DIR / "celerybeat-schedule"))

# --- auth, sessions, security --------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": env.int("PARAEVAL_PASSWORD_MIN_LENGTH", default=10)},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
#: Django's cache. Without CACHE_URL each process has its own memory; set it to Redis
#: (e.g. redis://127.0.0.1:6379/1) so that every gunicorn worker shares one cache.
CACHES = {"default": env.cache_url("CACHE_URL", default="locmemcache://paraeval")}
#: Seconds a request waits for Redis before giving up (a dead or unreachable Redis must
#: not hang a worker: the request answers 503, see config.middleware.ServiceUnavailableMiddleware).
PARAEVAL_CACHE_TIMEOUT = env.float("PARAEVAL_CACHE_TIMEOUT", default=1.0)
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    CACHES["default"].setdefault("OPTIONS", {}).update(
        {"socket_connect_timeout": PARAEVAL_CACHE_TIMEOUT, "socket_timeout": PARAEVAL_CACHE_TIMEOUT}
    )

# --- brute-force guard (django-axes) and API tokens ------------------------
# One guard for every way in: axes' backend refuses a locked-out login before any
# password is checked, and its signal handlers count every failed
# django.contrib.auth.authenticate() call (login form, admin login, API token).
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
#: Failures counted per username and per (username, client address): never per
#: address alone, so guesses at made-up names from a shared address (a proxy, a
#: lab's NAT) never lock out anyone else.
AXES_LOCKOUT_PARAMETERS = ["username", ["username", "ip_address"]]
AXES_FAILURE_LIMIT = env.int("LOGIN_FAILURE_LIMIT", default=10)
#: Seconds a locked-out username stays locked, counted from the failure that locked it.
AXES_COOLOFF_TIME = timedelta(seconds=env.int("LOGIN_LOCKOUT_SECONDS", default=900))
#: Attempts made while locked are refused and NOT counted: otherwise one request every
#: 14 minutes restarts a 15-minute cool-off and keeps the owner out forever (issue 23).
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "config.auth.lockout_response"
AXES_CLIENT_IP_CALLABLE = "config.auth.client_ip"
AXES_VERBOSE = False
#: Counters live in the database, which every process shares, whatever CACHE_URL says:
#: signing in (form, admin, API token) then keeps working while Redis is down
#: (docs/reliability.md), and a cache flush cannot wipe a lockout.
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
#: How many proxies (each appending to X-Forwarded-For) stand between clients and
#: gunicorn. 0: the header is ignored and the socket's address is the client's.
PARAEVAL_NUM_PROXIES = env.int("PARAEVAL_NUM_PROXIES", default=0)
if PARAEVAL_NUM_PROXIES < 0:
    raise ImproperlyConfigured("PARAEVAL_NUM_PROXIES must be 0 or more")
#: Where a declared proxy may connect from (addresses or networks). X-Forwarded-For is read only on
#: connections from these; anyone reaching gunicorn directly from elsewhere is known by their socket's
#: address, whatever header they send. Default: loopback and private networks.
PARAEVAL_TRUSTED_PROXIES = env.list(
    "PARAEVAL_TRUSTED_PROXIES",
    default=["127.0.0.0/8", "::1/128", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"],
)
#: API tokens expire this many seconds after they were issued (default 30 days).
PARAEVAL_TOKEN_TTL = env.int("PARAEVAL_TOKEN_TTL", default=30 * 24 * 3600)
if PARAEVAL_TOKEN_TTL <= 0:
    raise ImproperlyConfigured("PARAEVAL_TOKEN_TTL must be a positive number of seconds")
# ---------------------------------------------------------------------------
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
#: A stale token on a join or resume page (another tab signed the browser in) sends the browser back
#: to the page (a GET) instead of a 403; everywhere else Django's 403 (config/csrf.py).
CSRF_FAILURE_VIEW = "config.csrf.csrf_failure"
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
if PRODUCTION:
    SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=True)
    CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=True)
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_PROXY", default=False) else None

# --- i18n, static, media --------------------------------------------------
LANGUAGE_CODE = "en-us"
#: The languages a study's judge and annotator pages can be shown in (Study.language).
#: The researcher pages stay in LANGUAGE_CODE. Adding one: docs/researchers.md, "Languages".
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static", *(p / "static" for p in PROTOCOL_PACKAGES if (p / "static").is_dir())]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
MEDIA_ROOT = VAR_DIR / "media"
MEDIA_URL = "media/"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "config.storage.ManifestStaticStorage"  # whitenoise + JS module imports
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# Source maps (.map: 12 MB of the API docs' and the admin's bundles) are fetched only by a
# browser's developer tools: whitenoise serves them as they are instead of compressing them
# with brotli and gzip at every collectstatic (half its time).
WHITENOISE_SKIP_COMPRESS_EXTENSIONS = (*Compressor.SKIP_COMPRESS_EXTENSIONS, "map")
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

# --- REST framework -------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Token first: a request without credentials or with a bad/expired token gets
        # 401 with a WWW-Authenticate header (403 would say "forbidden", not "sign in").
        "config.tokens.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    # X-Forwarded-For is trusted only as far as PARAEVAL_NUM_PROXIES says (see config.auth.client_ip).
    "NUM_PROXIES": PARAEVAL_NUM_PROXIES,
    "EXCEPTION_HANDLER": "rest_framework.views.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "paraeval API",
    "DESCRIPTION": "Human and automatic evaluation of paraphrases: studies, imports, judging, alignment, metrics, reports.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Memberships take any role; the people endpoints only judges and annotators.
    "ENUM_NAME_OVERRIDES": {"RoleEnum": "annotation.enums.Role", "ParticipantRoleEnum": ["judge", "annotator"]},
}

# --- paraeval -------------------------------------------------------------
#: How long a personal sign-in link made for a new account stays valid (it works once).
PARAEVAL_SIGNIN_LINK_HOURS = env.float("PARAEVAL_SIGNIN_LINK_HOURS", default=72)
#: Join links (docs/field-studies.md): at most this many new participants per client address per hour
#: (a guard against a script making accounts; 0 turns it off).
PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR = env.int("PARAEVAL_JOIN_PER_ADDRESS_PER_HOUR", default=120)
#: ... and at most this many through one link per minute, from all addresses together (0 turns it off).
#: The default is above what one server can admit (docs/field-studies.md, "Load"); lower it for a small link.
PARAEVAL_JOIN_PER_LINK_PER_MINUTE = env.int("PARAEVAL_JOIN_PER_LINK_PER_MINUTE", default=600)
#: The most one participant may be paid through a bonus export (docs/dashboard.md), in the platform's
#: currency: a rule that would pay anyone more is refused (400), so a slip (600000 typed for 0.60) never
#: reaches a payment file. Raise it for a study that really pays more.
try:
    PARAEVAL_BONUS_MAX_PER_PERSON = Decimal(env.str("PARAEVAL_BONUS_MAX_PER_PERSON", default="100.00"))
except InvalidOperation:
    raise ImproperlyConfigured("PARAEVAL_BONUS_MAX_PER_PERSON must be an amount such as 100.00") from None
if not PARAEVAL_BONUS_MAX_PER_PERSON.is_finite() or PARAEVAL_BONUS_MAX_PER_PERSON <= 0:
    raise ImproperlyConfigured("PARAEVAL_BONUS_MAX_PER_PERSON must be an amount above 0, such as 100.00")
#: Where this site is reached from outside: sign-in links printed by manage.py commands start with it.
#: Unset, it is the address the last `make run` on this var/ serves (var/server-url, written by
#: config/run.py with its HOST and PORT), else http://127.0.0.1:8000, `make run`'s default.
_SERVER_URL_FILE = VAR_DIR / "server-url"
PARAEVAL_BASE_URL = (
    env.str("PARAEVAL_BASE_URL", default="")
    or (_SERVER_URL_FILE.read_text(encoding="utf-8").strip() if _SERVER_URL_FILE.is_file() else "")
    or "http://127.0.0.1:8000"
)
#: Where the documentation is read; the pages link to it. Default: this app's own /docs/ (config/docs.py).
PARAEVAL_DOCS_URL = env.str("PARAEVAL_DOCS_URL", default="/docs/").rstrip("/") + "/"
#: The built documentation site the app serves at /docs/ (config/docs.py; `make docs-build`).
PARAEVAL_DOCS_SITE = env.str("PARAEVAL_DOCS_SITE", default=str(BASE_DIR / "site"))
#: Uploads above this size are refused before parsing (bytes).
PARAEVAL_IMPORT_MAX_BYTES = env.int("PARAEVAL_IMPORT_MAX_BYTES", default=50 * 1024 * 1024)
#: Imports with more rows than this run in a Celery worker with a progress bar.
PARAEVAL_IMPORT_BACKGROUND_ROWS = env.int("PARAEVAL_IMPORT_BACKGROUND_ROWS", default=2000)
#: Generating a system for more originals than this runs in a Celery worker.
PARAEVAL_GENERATE_BACKGROUND_ORIGINALS = env.int("PARAEVAL_GENERATE_BACKGROUND_ORIGINALS", default=100)
#: Opening judging that writes more assignment items (judges x items) runs in a worker.
PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS = env.int("PARAEVAL_JUDGING_OPEN_BACKGROUND_ITEMS", default=10000)
#: Where built resources (language models, trained classifiers) are cached.
PARAEVAL_CACHE_DIR = Path(env.str("PARAEVAL_CACHE_DIR", default=str(VAR_DIR / "cache")))

# --- limits before work (docs/limits.md) ------------------------------------
#: Largest JSON request body an API endpoint reads (bytes); file uploads keep their own limits.
PARAEVAL_JSON_MAX_BYTES = env.int("PARAEVAL_JSON_MAX_BYTES", default=1024 * 1024)
#: Most links one alignment draft or submission may hold (besides one per grid cell).
PARAEVAL_ALIGNMENT_MAX_LINKS = env.int("PARAEVAL_ALIGNMENT_MAX_LINKS", default=10_000)
#: Uploaded metric resources (phrase tables, LMs, vectors, PEM models) above this size are refused.
PARAEVAL_RESOURCE_MAX_BYTES = env.int("PARAEVAL_RESOURCE_MAX_BYTES", default=4 * 1024**3)
#: Most bytes a compressed resource (.xz, .gz, .bz2, .zip) may expand to when unpacked.
PARAEVAL_DECOMPRESSED_MAX_BYTES = env.int("PARAEVAL_DECOMPRESSED_MAX_BYTES", default=1024**3)
#: Deliveries of one metric-run chunk (a worker that dies on it counts) before the run fails.
PARAEVAL_CHUNK_MAX_ATTEMPTS = env.int("PARAEVAL_CHUNK_MAX_ATTEMPTS", default=3)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A refused request (403) is an answer, not a failure: log its one line without the
    # traceback Django attaches (config.logging_filters.DropPermissionDeniedTraceback).
    # Participants' platform ids (?PROLIFIC_PID=...) never reach a log line (config/access_log.py).
    "filters": {
        "no_403_traceback": {"()": "config.logging_filters.DropPermissionDeniedTraceback"},
        "no_platform_ids": {"()": "config.logging_filters.RedactPlatformIds"},
    },
    "formatters": {
        "django.server": {"()": "django.utils.log.ServerFormatter", "format": "[{server_time}] {message}", "style": "{"}
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["no_403_traceback", "no_platform_ids"]},
        # Django's own runserver handler, with the same filter.
        "django.server": {
            "level": "INFO",
            "class": "logging.StreamHandler",
            "formatter": "django.server",
            "filters": ["no_platform_ids"],
        },
    },
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
    },
}

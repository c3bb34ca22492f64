"""Answers cached on disk by (model, prompt, item): a re-run, a retried chunk or a second
study with the same pairs asks the model nothing it has answered before.

One SQLite file (the standard library's ``sqlite3``: safe across the processes of
a worker pool, no server), ``$PARAEVAL_CACHE_DIR/llm-judge.sqlite3`` by default.
The key is the SHA-256 of the model's name, the decoding settings and the rendered
messages (which hold the template, the rubric's wording and the item's two
sentences), so any change to any of them asks again. The raw answer text is
stored, parsed or not, so a parser change never needs the model.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable
from pathlib import Path

__all__ = ["AnswerCache", "answer_key", "default_cache_path"]

_REPO = Path(__file__).resolve().parents[3]


def default_cache_path() -> Path:
    return Path(os.environ.get("PARAEVAL_CACHE_DIR") or _REPO / "var" / "cache") / "llm-judge.sqlite3"


def answer_key(model: str, decoding: str, messages: list[dict]) -> str:
    """Hex SHA-256 of (model, decoding, messages) in canonical JSON."""
    blob = json.dumps([model, decoding, messages], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class AnswerCache:
    """``get_many(keys)`` and ``put(key, answer)`` over one SQLite file (created on first use)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._conn is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("CREATE TABLE IF NOT EXISTS answer (key TEXT PRIMARY KEY, model TEXT, answer TEXT)")
            self._conn = conn
        return self._conn

    def get_many(self, keys: Iterable[str]) -> dict[str, str]:
        keys = list(dict.fromkeys(keys))
        out: dict[str, str] = {}
        with self._lock:
            db = self._db()
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                out.update(db.execute(f"SELECT key, answer FROM answer WHERE key IN ({marks})", part).fetchall())
        return out

    def put(self, key: str, model: str, answer: str) -> None:
        with self._lock:
            db = self._db()
            db.execute("INSERT OR REPLACE INTO answer (key, model, answer) VALUES (?, ?, ?)", (key, model, answer))
            db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db().execute("SELECT COUNT(*) FROM answer").fetchone()[0])

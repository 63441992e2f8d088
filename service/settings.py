"""Service settings from environment variables, overridable from the CLI."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sqlalchemy.engine import make_url

from core.contract import DEFAULT_EMBEDDER, DEFAULT_RETRAIN_BUFFER
from service.testhooks import ENV as TEST_HOOKS_ENV
from service.testhooks import TestHooks

# A cursor secret shared by a fleet must be random: these are the words example and placeholder values are
# made of (deploy/.env.example's is "change-me-…"), and a short one can be guessed.
PLACEHOLDER_MARKERS = ("change", "replace", "placeholder", "example", "secret", "…", "...")
MIN_CURSOR_SECRET_CHARS = 32


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    # The Huey queue: None = in the database (a SQLite file next to it, or tables on PostgreSQL);
    # "redis://host:port/db" = Redis. Runs live in the database either way; the queue only delivers ids.
    queue_url: str | None = None
    embedder: str = DEFAULT_EMBEDDER
    retrain_buffer: int = DEFAULT_RETRAIN_BUFFER
    cursor_secret: bytes = b""
    # A running run whose heartbeat is older than this is considered dead (and a queued run this old
    # is enqueued again, in case its queue message died with a worker). A dead worker's run is re-queued at
    # most timeout + recovery interval after its last heartbeat: 20 s (it was 60 + 30). The timeout is 7
    # missed heartbeats, and must outlast the longest wait of a heartbeat for the database (a long write
    # transaction on SQLite); a live run recovered by mistake is fenced off, never applied twice.
    heartbeat_timeout_s: float = 15.0
    heartbeat_interval_s: float = 2.0
    recovery_interval_s: float = 5.0
    max_attempts: int = 3
    # On SIGTERM a worker finishes its runs for at most this long, then hands them back to the queue.
    shutdown_grace_s: float = 30.0
    # Start the in-process Huey consumer with the app (off for `serve --no-worker` and `worker`).
    run_worker: bool = True
    # Scoring requests' texts encoded at once (one core each); 0 = one per core. With N API processes on
    # one machine, cores / N keeps them from oversubscribing the cores.
    scoring_threads: int = 0
    # How long a write waits for SQLite's write lock before the request gets 503 `database_busy`.
    lock_timeout_s: float = 30.0
    # A training of at least twice this many distinct texts embeds them in shards of this many, which every
    # worker process claims (service/runs/shards.py); 0 = never shard.
    shard_texts: int = 5_000
    # The model `POST /v1alpha1/comments:analyze` scores when a request names none (docs/perspective.md).
    perspective_model: str | None = None
    # The externally visible base URL (behind a proxy): the Perspective discovery document's rootUrl.
    public_url: str | None = None
    test_hooks: TestHooks = TestHooks()

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:  # Any: each field's own type, checked by the dataclass
        """Build settings from SCORING_* variables; non-None keyword overrides win."""
        env = os.environ
        data_dir = Path(overrides.pop("data_dir", None) or env.get("SCORING_DATA_DIR", "./.data")).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        url = (
            overrides.pop("database_url", None)
            or env.get("SCORING_DATABASE_URL")
            or (f"sqlite:///{data_dir / 'scoring.sqlite'}")
        )
        if env.get("SCORING_DATABASE_PASSWORD"):
            url = with_password(url, env["SCORING_DATABASE_PASSWORD"])
        queue_url = overrides.pop("queue_url", None) or env.get("SCORING_QUEUE_URL") or None
        secret_text = env.get("SCORING_CURSOR_SECRET")
        secret = secret_text.encode() if secret_text else _persisted_secret(data_dir)
        settings = cls(
            data_dir=data_dir,
            database_url=url,
            queue_url=queue_url,
            embedder=env.get("SCORING_EMBEDDER", DEFAULT_EMBEDDER),
            retrain_buffer=int(env.get("SCORING_RETRAIN_BUFFER", DEFAULT_RETRAIN_BUFFER)),
            cursor_secret=secret,
            heartbeat_timeout_s=float(env.get("SCORING_HEARTBEAT_TIMEOUT_S", "15")),
            heartbeat_interval_s=float(env.get("SCORING_HEARTBEAT_INTERVAL_S", "2")),
            recovery_interval_s=float(env.get("SCORING_RECOVERY_INTERVAL_S", "5")),
            max_attempts=int(env.get("SCORING_MAX_ATTEMPTS", "3")),
            shutdown_grace_s=float(env.get("SCORING_SHUTDOWN_GRACE_S", "30")),
            scoring_threads=int(env.get("SCORING_SCORING_THREADS", "0")),
            lock_timeout_s=float(env.get("SCORING_LOCK_TIMEOUT_S", "30")),
            shard_texts=int(env.get("SCORING_SHARD_TEXTS", "5000")),
            perspective_model=env.get("SCORING_PERSPECTIVE_MODEL") or None,
            public_url=env.get("SCORING_API_PUBLIC_URL") or None,
            test_hooks=TestHooks.parse(env.get(TEST_HOOKS_ENV)),
        )
        settings = replace(settings, **{k: v for k, v in overrides.items() if v is not None})
        settings.check()
        return settings

    def check(self) -> None:
        if self.heartbeat_interval_s >= self.heartbeat_timeout_s:
            raise ValueError("the heartbeat interval must be shorter than the heartbeat timeout")
        if self.queue_url is not None and not self.queue_url.startswith(("redis://", "rediss://", "unix://")):
            raise ValueError(f"queue URL {self.queue_url!r}: only Redis URLs (redis://, rediss://, unix://)")
        if self.public_url is not None and not self.public_url.startswith(("http://", "https://")):
            raise ValueError(f"SCORING_API_PUBLIC_URL {self.public_url!r}: an absolute http(s):// URL")
        if self.shard_texts < 0:
            raise ValueError("shard_texts must be 0 (never shard) or more")
        if self.scoring_threads < 0:
            raise ValueError("scoring_threads must be 0 (one per core) or more")
        if self.test_hooks.active and self.embedder != "hashing":
            raise ValueError(f"{TEST_HOOKS_ENV} is for tests only: it needs the test embedder 'hashing'")
        # One process on SQLite may keep any secret; several processes (PostgreSQL, or API processes without
        # their own worker) sign cursors that each other must accept, so the secret is a shared credential.
        problem = weak_secret(self.cursor_secret.decode(errors="replace"))
        if problem and (not self.is_sqlite or not self.run_worker):
            raise ValueError(
                f"SCORING_CURSOR_SECRET {problem}. Every API process of a PostgreSQL database or of a "
                "fleet signs pagination cursors with it, so it must be random and the same everywhere; "
                "make one with `python -c 'import secrets; print(secrets.token_hex(32))'`"
            )

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def weak_secret(secret: str) -> str | None:
    """Why `secret` is unfit to sign a fleet's cursors, or None."""
    lowered = secret.lower()
    marker = next((m for m in PLACEHOLDER_MARKERS if m in lowered), None)
    if marker is not None:
        return f"looks like a placeholder (it contains {marker!r})"
    if len(secret) < MIN_CURSOR_SECRET_CHARS:
        return f"is {len(secret)} characters long; use at least {MIN_CURSOR_SECRET_CHARS} random ones"
    return None


def with_password(url: str, password: str) -> str:
    """`url` with `password` set, percent-encoded, so `@ / : # ? %` in it cannot break the URL."""
    return make_url(url).set(password=password).render_as_string(hide_password=False)


def _persisted_secret(data_dir: Path) -> bytes:
    """A random cursor secret kept in the data dir so cursors survive restarts."""
    path = data_dir / "cursor_secret"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(secrets.token_hex(32))
        os.replace(tmp, path)
    return path.read_text().strip().encode()

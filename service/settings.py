"""Service settings from environment variables, overridable from the CLI."""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Settings:
    data_dir: Path
    database_url: str
    embedder: str = "minilm"
    retrain_buffer: int = 20
    cursor_secret: bytes = b""
    # A running run whose heartbeat is older than this is considered dead.
    heartbeat_timeout_s: float = 60.0
    heartbeat_interval_s: float = 10.0
    recovery_interval_s: float = 30.0
    max_attempts: int = 3
    # Start the in-process Huey consumer with the app (off for a separate worker process).
    run_worker: bool = True

    @classmethod
    def from_env(cls, **overrides: Any) -> Settings:
        """Build settings from SCORING_* variables; non-None keyword overrides win."""
        env = os.environ
        data_dir = Path(overrides.pop("data_dir", None) or env.get("SCORING_DATA_DIR", "./.data")).resolve()
        data_dir.mkdir(parents=True, exist_ok=True)
        url = (
            overrides.pop("database_url", None)
            or env.get("SCORING_DATABASE_URL")
            or (f"sqlite:///{data_dir / 'scoring.sqlite'}")
        )
        secret_text = env.get("SCORING_CURSOR_SECRET")
        secret = secret_text.encode() if secret_text else _persisted_secret(data_dir)
        settings = cls(
            data_dir=data_dir,
            database_url=url,
            embedder=env.get("SCORING_EMBEDDER", "minilm"),
            retrain_buffer=int(env.get("SCORING_RETRAIN_BUFFER", "20")),
            cursor_secret=secret,
        )
        return replace(settings, **{k: v for k, v in overrides.items() if v is not None})

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")


def _persisted_secret(data_dir: Path) -> bytes:
    """A random cursor secret kept in the data dir so cursors survive restarts."""
    path = data_dir / "cursor_secret"
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_text(secrets.token_hex(32))
        os.replace(tmp, path)
    return path.read_text().strip().encode()

"""What every command shares: where its data lives (`--data-dir`, `--database-url`, `--queue-url`) and its
settings, read once and refused with a message rather than a traceback."""

from __future__ import annotations

import argparse

from core.contract import AUTO_EMBEDDER
from service.config.settings import Settings

EMBEDDER_HELP = f"embedder name or id of new models (default $SCORING_EMBEDDER or {AUTO_EMBEDDER})"


def add_storage_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data-dir", help="data directory (default $SCORING_DATA_DIR or ./.data)")
    p.add_argument("--database-url", help="SQLAlchemy URL (default: SQLite file in the data dir)")
    p.add_argument(
        "--queue-url", help="redis://… for a Redis queue (default $SCORING_QUEUE_URL, else the database)"
    )


def settings_of(args: argparse.Namespace, **extra: object) -> Settings:
    try:
        return Settings.from_env(
            data_dir=args.data_dir, database_url=args.database_url, queue_url=args.queue_url, **extra
        )
    except ValueError as exc:  # a setting that must not start a process: say why, no traceback
        raise SystemExit(f"error: {exc}") from None

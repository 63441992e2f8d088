"""`backfill`, `backup` and `restore`: commands over a deployment's whole data."""

from __future__ import annotations

import argparse
import sys

from service.commands.options import EMBEDDER_HELP, add_storage_options, settings_of


def backfill(args: argparse.Namespace) -> int:
    from service.context import Context
    from service.process.backfill import run_backfill

    settings = settings_of(args, embedder=args.embedder)
    ctx = Context.build(settings)
    try:
        report = run_backfill(ctx)
    finally:
        ctx.close()
    for line in report:
        print(line)
    return 0


def backup_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from service.process.backup import BackupError, backup

    try:
        manifest = backup(settings_of(args), Path(args.path), include_cache=not args.without_cache)
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    counts = ", ".join(f"{n} {table}" for table, n in manifest["counts"].items())
    print(
        f"Backed up ({manifest['database']}, schema {manifest['schema_revision']}) to {args.path}: {counts}"
    )
    return 0


def restore_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from service.process.backup import BackupError, restore

    try:
        manifest = restore(settings_of(args), Path(args.path))
    except BackupError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"Restored the backup of {manifest['created_at']} from {args.path}")
    return 0


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("backfill", help="retrain every ready model with the current engine")
    p.add_argument("--embedder", help=EMBEDDER_HELP)
    add_storage_options(p)
    p.set_defaults(func=backfill)

    p = sub.add_parser(
        "backup", help="copy the database, cursor secret and embedding cache into PATH (while serving)"
    )
    p.add_argument("path", help="a new or empty directory")
    p.add_argument(
        "--without-cache",
        action="store_true",
        help="leave out the embedding cache (texts are embedded again)",
    )
    add_storage_options(p)
    p.set_defaults(func=backup_command)

    p = sub.add_parser("restore", help="restore a backup into an empty data directory (or database)")
    p.add_argument("path", help="a directory written by `backup`")
    add_storage_options(p)
    p.set_defaults(func=restore_command)

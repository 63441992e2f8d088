"""The command line: `python -m service serve | worker | migrate | keys … | people … | audit | backfill |
backup | restore`; each group's commands and options live in service/commands/."""

from __future__ import annotations

import argparse
import logging
import sys

from service.commands import data, keys, people, serving


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service", description="Model Scoring Service")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in (serving, keys, people, data):
        group.add_parsers(sub)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())

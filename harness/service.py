"""The service's command lines as tests and benchmarks run it: `python -m service serve …`, `keys …`.

`core/local.py` (the workbench's launcher, which ships) builds its own: `core` never imports this package.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def service_command(*args: str) -> list[str]:
    """`python -m service <args>` with this interpreter."""
    return [sys.executable, "-m", "service", *args]


def serve_command(port: int, data_dir: Path, *options: str, database_url: str | None = None) -> list[str]:
    """`serve` on 127.0.0.1:`port` over `data_dir` (and `database_url` when given), then `options`."""
    database = ["--database-url", database_url] if database_url else []
    address = ["--host", "127.0.0.1", "--port", str(port)]
    return service_command("serve", *address, "--data-dir", str(data_dir), *database, *options)

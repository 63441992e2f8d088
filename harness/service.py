"""The service's command lines as tests and benchmarks run it: `python -m service serve …`, `keys create`.

`core/local.py` (the workbench's launcher, which ships) builds its own: `core` never imports this package.
"""

from __future__ import annotations

import os
import subprocess
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


def create_key(
    data_dir: Path,
    namespace: str,
    scope: str = "authoring",
    *,
    database_url: str | None = None,
    env: dict[str, str] | None = None,
) -> str:
    """A new API key from `keys create` (the last line it prints); a failure raises with its output."""
    database = ["--database-url", database_url] if database_url else []
    cmd = service_command(
        "keys", "create", "--namespace", namespace, "--scope", scope, "--data-dir", str(data_dir), *database
    )
    environ = env or dict(os.environ)
    done = subprocess.run(cmd, cwd=ROOT, env=environ, capture_output=True, text=True, timeout=120)
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"keys create failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return lines[-1]

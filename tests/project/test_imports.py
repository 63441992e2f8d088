"""Every module of core, service and app imports: a circular import, or a top level that raises (a schema
declared wrong, a registry's own check), fails here, in `make test-commit`, rather than in whichever test
first needs the module. The scripts Streamlit runs draw a page when imported: test_navigation.py opens each
of them; the migrations are alembic's scripts, which test_migrations.py runs."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "service", "app")
NOT_IMPORTED = {ROOT / "app" / "main.py", ROOT / "service" / "migrations"}


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.name == "__main__.py" or NOT_IMPORTED & {path, *path.parents}:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_imports() -> None:
    names = _modules()
    assert len(names) > 300, len(names)  # the walk found the packages
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as error:  # noqa: BLE001 - each failure named below, all at once
            failed[name] = f"{type(error).__name__}: {error}"
    assert not failed, failed

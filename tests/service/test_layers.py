"""The service's layers (docs/service.md, "Where a request goes"): routes parse and call the domain; the
domain and the background runs never call back into the HTTP layer."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
# The score path reads its target version in one read transaction of its own (docs/service.md): the only
# routes that touch the database without the domain.
SCORE_PATH = {"score.py", "perspective.py"}


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_a_route_imports_no_other_route_nor_the_runs_package() -> None:
    for path in sorted((SERVICE / "routes").glob("*.py")):
        wrong = {
            m
            for m in imports(path)
            if (m.startswith("service.routes.") and not m.startswith("service.routes.common"))
            or m.startswith("service.runs")
        }
        assert wrong == set(), path.name


def test_only_the_score_path_reads_tables_outside_the_domain() -> None:
    for path in sorted((SERVICE / "routes").glob("*.py")):
        if path.name in SCORE_PATH:
            continue
        touches = {m for m in imports(path) if m.startswith(("service.tables", "service.db", "sqlalchemy"))}
        assert touches == set(), path.name


def test_the_domain_and_the_runs_never_import_a_route() -> None:
    for folder in ("domain", "runs"):
        for path in sorted((SERVICE / folder).glob("*.py")):
            assert not {m for m in imports(path) if m.startswith("service.routes")}, f"{folder}/{path.name}"

"""The service's layers hold at run time. pyproject.toml's import-linter contracts (`lint-imports`, run by
`make lint`, `make test` and `make test-fast`) check the imports as written;
this test, what an interpreter loads."""

from __future__ import annotations

from tests.support.processes import FreshPython


def loaded_after(fresh_python: FreshPython, module: str) -> set[str]:
    """The service modules a fresh interpreter holds after importing `module`."""
    script = f"import sys, {module}\nprint(' '.join(m for m in sys.modules if m.startswith('service')))"
    return set(fresh_python(script).stdout.split())


def test_the_domain_loads_neither_the_runs_nor_the_context(fresh_python: FreshPython) -> None:
    # Before the store layer, importing the pool's domain module loaded the context, hence the executor and
    # every run kind.
    loaded = loaded_after(fresh_python, "service.domain.pool")
    assert "service.domain.pool" in loaded and "service.store.schema" in loaded
    assert "service.runs.executor" not in loaded
    assert not {m for m in loaded if m.startswith(("service.runs", "service.context", "service.routes"))}


def test_the_store_loads_nothing_above_it(fresh_python: FreshPython) -> None:
    loaded = loaded_after(fresh_python, "service.store.ledger, service.store.samples, service.store.history")
    assert not {m for m in loaded if m.startswith(("service.domain", "service.runs", "service.context"))}

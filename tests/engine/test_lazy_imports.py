"""Importing the light parts of the engine does not load scikit-learn or SciPy (seconds of a cold
page or of `service keys create` on two busy cores); the engine's names still resolve when used."""

from __future__ import annotations

from benchmarks import process_start
from tests.support.processes import FreshPython


def modules_after(fresh_python: FreshPython, code: str) -> set[str]:
    script = f"{code}\nimport sys\nprint(' '.join(sorted({{m.split('.')[0] for m in sys.modules}})))"
    return set(fresh_python(script).stdout.split())


def test_errors_embedders_and_the_key_store_leave_scikit_learn_unloaded(fresh_python: FreshPython) -> None:
    loaded = modules_after(
        fresh_python, "import core.engine.errors, core.embedders, service.store.db, service.store.api_keys"
    )
    assert not loaded & {"sklearn", "scipy"}, sorted(loaded & {"sklearn", "scipy"})


def test_a_service_process_starts_without_scikit_learn_or_the_sign_in_verifier(
    fresh_python: FreshPython,
) -> None:
    """An API process and a worker load scikit-learn with their first run or score, and the ID-token
    verifier's libraries with the first token, not at start: every process of a fleet (and of the suite)
    would otherwise pay about 1.5 s and 0.3 s of CPU for them."""
    later = {"sklearn", "scipy", "joserfc", "httpx"}
    loaded = modules_after(fresh_python, process_start.START)
    assert not loaded & later, sorted(loaded & later)


def test_the_engines_names_load_on_first_use() -> None:
    import core.engine
    from core.engine import Scorer, train
    from core.engine.scorer import Scorer as defined_scorer
    from core.engine.training import train as defined_train

    assert (Scorer, train) == (defined_scorer, defined_train)
    assert all(getattr(core.engine, name) is not None for name in core.engine.__all__)

"""What `make run` installs: the install target's compile step, run as make expands it, the environment it
leaves (the packages import from anywhere, as `streamlit run` and `python -m service` import them), and a
lock in step with pyproject.toml.

The target's `uv sync` lines are not run here: they need the package index, and a test that only read
their text would pass whatever they did. The first-run benchmark times the whole install
(docs/benchmarks/README.md)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from pathlib import Path

from tests.support.processes import FreshPython, RunProgram


def recipe(run_program: RunProgram, venv: Path) -> list[str]:
    """The commands `make` would run for the runtime install stamp of a venv at `venv` (not run: `-n`)."""
    done = run_program(["make", "-n", "-B", f"VENV={venv}", f"{venv}/.installed-runtime"])
    return [line for line in done.stdout.splitlines() if line.strip()]


def test_make_run_byte_compiles_the_environment_but_test_suites_and_sympy(
    tmp_path: Path, run_program: RunProgram
) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    site = venv / "lib" / "python3" / "site-packages"
    modules = {
        name: site / name / "mod.py"
        for name in ("fastapi", "sympy", "numpy/tests", "numpy/core", "pandas/test", "streamlit")
    }
    for path in modules.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("VALUE = 1\n")
    (compile_step,) = [line for line in recipe(run_program, venv) if " -m compileall " in line]
    run_program(shlex.split(compile_step))

    def compiled(path: Path) -> bool:
        return any((path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"))

    assert {name for name, path in modules.items() if compiled(path)} == {
        "fastapi",
        "numpy/core",
        "streamlit",
    }


def test_make_run_and_test_byte_compile_our_packages(tmp_path: Path, run_program: RunProgram) -> None:
    # Under PYTHONDONTWRITEBYTECODE nothing else writes their bytecode: every process would compile them.
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    ours = {"core", "service", "app", "pages", "harness", "benchmarks", "tests/app"}
    for name in (*ours, "docs"):
        (tmp_path / name).mkdir(parents=True, exist_ok=True)
        (tmp_path / name / "mod.py").write_text("VALUE = 1\n")
    for target in ("run", "test"):
        lines = run_program(["make", "-n", f"VENV={venv}", target]).stdout.splitlines()
        # Not the install stamps' compile step (of the venv's lib), tested above.
        (step,) = [x.lstrip("@") for x in lines if " -m compileall " in x and f"{venv}/lib" not in x]
        for cache in tmp_path.glob("**/__pycache__"):
            shutil.rmtree(cache)
        run_program(shlex.split(step), cwd=tmp_path)
        compiled = {name for name in (*ours, "docs") if list((tmp_path / name / "__pycache__").glob("*.pyc"))}
        assert compiled == ours, target


def test_the_installed_packages_import_from_anywhere(tmp_path: Path, fresh_python: FreshPython) -> None:
    # Outside the checkout and without PYTHONPATH: only the install (an editable one) makes them importable.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    code = "import app, core.client, core.engine, service.process.api; print('ok')"
    assert fresh_python(code, cwd=tmp_path, env=env).stdout.strip() == "ok"


def test_the_lock_is_in_step_with_pyproject(tmp_path: Path, run_program: RunProgram) -> None:
    # `make` installs uv.lock (`uv sync --locked`): a dependency changed without `make lock` fails here rather
    # than at the next install. Offline: checking needs no package index.
    here = Path(sys.executable).parent  # make bootstraps uv into the venv when it is not on PATH
    uv = shutil.which("uv", path=os.pathsep.join([str(here), os.environ.get("PATH", "")]))
    assert uv is not None, "uv is missing: `make .venv/.installed` installs it"
    env = os.environ | {"UV_CACHE_DIR": str(tmp_path)}
    run_program([uv, "lock", "--check", "--offline"], env=env)


def test_make_stops_at_once_without_a_python_312(tmp_path: Path, run_program: RunProgram) -> None:
    # Nothing found (PY empty), or a PY of another version: one line says what is needed and how to name it,
    # before anything is created (uv would otherwise try to download a 3.12 into a .venv made on another).
    venv = tmp_path / "venv"
    for py, why in (("", "none found on PATH or in ~/.pyenv"), ("/bin/false", "/bin/false is not one")):
        done = run_program(["make", f"VENV={venv}", f"PY={py}", "run"], check=False)
        assert done.returncode != 0
        said = [line for line in done.stderr.splitlines() if not line.startswith("make")]
        assert said == [
            f"Python 3.12 is needed to create {venv}: {why}; name one with make PY=/path/to/python3.12"
        ]
        assert not venv.exists()


def test_a_venv_made_on_another_python_is_rebuilt(tmp_path: Path, run_program: RunProgram) -> None:
    # Its interpreter no longer runs (a pyenv version removed) or answers another version: both are
    # "not a 3.12" to the check. The install stamps it carries are made again, from a new venv.
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(tmp_path / "removed-python3.11")
    (venv / ".installed-runtime").touch()
    (venv / ".installed").touch()
    planned = run_program(["make", "-n", f"VENV={venv}", f"PY={sys.executable}", f"{venv}/.installed"]).stdout
    assert f"rm -rf {venv}\n" in planned
    assert f"{sys.executable} -m venv {venv}" in planned
    assert "uv sync --locked --inexact --extra dev" in planned
    done = run_program(["make", f"VENV={venv}", f"PY={sys.executable}", "check-python"])
    assert "was made with a Python that no longer runs: rebuilding it" in done.stdout
    assert not venv.exists()
    # A right one is left alone, whatever PY says (it is only asked when a venv must be created).
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(sys.executable)
    run_program(["make", f"VENV={venv}", "PY=", "check-python"])
    assert (venv / "bin" / "python").exists()

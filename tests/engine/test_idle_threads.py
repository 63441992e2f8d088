"""An embedder's idle threads sleep: they never spin on cores that a request, a run or a worker needs
(what spinning cost: docs/benchmarks/start.md, "Idle threads")."""

from __future__ import annotations

import json
import os

import pytest

from core.embedders import MiniLMEmbedder
from core.embedders.onnx_session import open_session
from tests.support.processes import FreshPython

SPIN_KEYS = ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning")


def _spinning(session: object) -> list[str]:
    options = session.get_session_options()  # type: ignore[attr-defined]
    return [options.get_session_config_entry(key) for key in SPIN_KEYS]


def test_every_onnx_session_opens_with_spinning_off() -> None:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "x"], ["y"])], "square", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9  # what every onnxruntime here reads
    session = open_session(model.SerializeToString(), threads=2)
    assert _spinning(session) == ["0", "0"]
    assert session.get_session_options().intra_op_num_threads == 2


@pytest.mark.slow
def test_minilm_scoring_and_training_sessions_do_not_spin() -> None:
    emb = MiniLMEmbedder(threads=2).load()
    assert _spinning(emb._session) == ["0", "0"]
    assert _spinning(emb.with_threads(1).load()._session) == ["0", "0"]


def test_e5_engine_threads_wait_passively_unless_the_environment_says_otherwise(
    fresh_python: FreshPython,
) -> None:
    # In a process of its own: OpenMP reads the variable once, when the engine's library loads.
    probe = (
        "import json, os; from core.embedders.e5 import E5Embedder; E5Embedder(threads=2).load(); "
        "print(json.dumps([os.environ.get('OMP_WAIT_POLICY'), os.environ.get('OMP_NUM_THREADS')]))"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    out = fresh_python(probe, env=env)
    assert json.loads(out.stdout.splitlines()[-1]) == ["PASSIVE", "2"]
    chosen = fresh_python(probe, env={**env, "OMP_WAIT_POLICY": "ACTIVE"})
    assert json.loads(chosen.stdout.splitlines()[-1])[0] == "ACTIVE"

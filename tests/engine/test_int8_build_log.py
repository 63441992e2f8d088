"""An int8 build keeps the log readable: onnxruntime's quantizer logs a line per tensor, and advice for its
own users, on the root logger; a service's first start builds two graphs (core/embedders/int8_build.py)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from core.embedders.int8_build import quantize_matmuls


def test_the_quantizer_logs_nothing_below_an_error(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    weights = np.random.default_rng(0).normal(size=(8, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")],
        "one-matmul",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
        [numpy_helper.from_array(weights, "w")],
    )
    source, dest = tmp_path / "float.onnx", tmp_path / "int8.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(source))
    with caplog.at_level(logging.DEBUG):
        logging.info("a line of the service's own")
        quantize_matmuls(source, dest, [], per_token=False)
    # This thread's records: an earlier test's queue consumer, still stopping in this process, logs too.
    mine = [r.getMessage() for r in caplog.records if r.thread == threading.get_ident()]
    assert mine == ["a line of the service's own"]
    assert "MatMulInteger" in {n.op_type for n in onnx.load(str(dest)).graph.node}  # it did quantize

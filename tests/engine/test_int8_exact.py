"""The int8 graphs' integer products are exact on this CPU, whatever its instruction set: the same text gives
the same vector on every x86 machine a service or notebook runs on (core/embedders/int8_build.py, PER_TOKEN).

onnxruntime's AVX2 kernel for unsigned x signed int8 adds pairs of products in int16 and saturates; only
CPUs with VNNI computed the unsigned activations exactly. Signed activations and weights, each within
±127 (per-token activations and onnxruntime's symmetric per-channel weights), never reach int16's limit.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

ROWS, DEPTH, COLUMNS = 8, 384, 64  # tokens x hidden size (MiniLM's and e5-small's) x output columns
INT8 = st.integers(-127, 127)
EXTREMES = st.sampled_from([-127, 127])


def matmul_integer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """onnxruntime's MatMulInteger of `a` (an input) and `b` (a weight initializer, as in the built graphs),
    zero points 0, in a session with the embedders' graph optimizations."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    zero = numpy_helper.from_array(np.array(0, np.int8), "zero")
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b", "zero", "zero"], ["y"])],
        "exact",
        [helper.make_tensor_value_info("a", TensorProto.INT8, list(a.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [a.shape[0], b.shape[1]])],
        [numpy_helper.from_array(b, "b"), zero],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION, 9)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"a": a})
    return np.asarray(y)


@settings(max_examples=25, deadline=None)
@given(
    a=hnp.arrays(np.int8, (ROWS, DEPTH), elements=st.one_of(INT8, EXTREMES)),
    b=hnp.arrays(np.int8, (DEPTH, COLUMNS), elements=st.one_of(INT8, EXTREMES)),
)
def test_signed_int8_products_are_exact(a: np.ndarray, b: np.ndarray) -> None:
    expected = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(matmul_integer(a, b), expected)


def test_the_worst_case_is_exact_too() -> None:
    """Every pair of products at its largest: 2 x 127 x 127 = 32,258, within int16 (an unsigned activation
    of 255 reached 2 x 255 x 127 = 64,770, beyond it)."""
    a = np.full((ROWS, DEPTH), 127, np.int8)
    a[1::2] = -127
    b = np.full((DEPTH, COLUMNS), 127, np.int8)
    b[:, 1::2] = -127
    np.testing.assert_array_equal(matmul_integer(a, b), a.astype(np.int64) @ b.astype(np.int64))

"""The int8 graphs' integer products are exact on this CPU, whatever its instruction set: the same text gives
the same vector on every x86 machine a service or notebook runs on (core/embedders/int8_build.py, PER_TOKEN).

The graphs store activations and weights as uint8 around the zero point 128, each within ±127 of it (per-token
activations, onnxruntime's symmetric per-channel weights). onnxruntime's AVX2 kernel for unsigned x signed
int8 adds pairs of products in int16 and saturates; only CPUs with VNNI computed signed weights exactly.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

ROWS, DEPTH, COLUMNS = 8, 1536, 64  # tokens x the widest depth (the FFN's output projection) x columns
LEVEL = st.integers(1, 255)  # 128 ± 127
EXTREMES = st.sampled_from([1, 255])


def matmul_integer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """onnxruntime's MatMulInteger of `a` (an input) and `b` (a weight initializer, as in the built graphs),
    both around the zero point 128 (the weights' per column, as the graphs have them)."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["a", "b", "a_zero", "b_zero"], ["y"])],
        "exact",
        [helper.make_tensor_value_info("a", TensorProto.UINT8, list(a.shape))],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [a.shape[0], b.shape[1]])],
        [
            numpy_helper.from_array(b, "b"),
            numpy_helper.from_array(np.array(128, np.uint8), "a_zero"),
            numpy_helper.from_array(np.full(b.shape[1], 128, np.uint8), "b_zero"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = min(model.ir_version, onnx.IR_VERSION, 9)
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = session.run(None, {"a": a})
    return np.asarray(y)


def exact(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.astype(np.int64) - 128) @ (b.astype(np.int64) - 128)


@settings(max_examples=25, deadline=None)
@given(
    a=hnp.arrays(np.uint8, (ROWS, DEPTH), elements=st.one_of(LEVEL, EXTREMES)),
    b=hnp.arrays(np.uint8, (DEPTH, COLUMNS), elements=st.one_of(LEVEL, EXTREMES)),
)
def test_int8_products_are_exact(a: np.ndarray, b: np.ndarray) -> None:
    np.testing.assert_array_equal(matmul_integer(a, b), exact(a, b))


def test_the_worst_case_is_exact_too() -> None:
    """Every pair of products at its largest (2 x 255 x 127 = 64,770 in the unsigned x signed kernel, which
    int16 cannot hold)."""
    a = np.full((ROWS, DEPTH), 255, np.uint8)
    a[1::2] = 1
    b = np.full((DEPTH, COLUMNS), 255, np.uint8)
    b[:, 1::2] = 1
    np.testing.assert_array_equal(matmul_integer(a, b), exact(a, b))

"""What the int8 graph tests read of a built ONNX graph."""

from __future__ import annotations

from typing import Any

import numpy as np


def weight_types(
    model: Any,
) -> set[np.dtype]:  # Any: an onnx.ModelProto (onnx is imported where a test needs it)
    """The dtypes of every MatMulInteger's weights and their zero points."""
    from onnx import numpy_helper

    names = {i for n in model.graph.node if n.op_type == "MatMulInteger" for i in n.input[1::2]}
    return {numpy_helper.to_array(i).dtype for i in model.graph.initializer if i.name in names}

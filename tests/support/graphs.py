"""What the int8 graph tests read of a built ONNX graph."""

from __future__ import annotations

from typing import Any

import numpy as np

from core.embedders.int8_build import matmul_weights


def weight_types(model: Any) -> set[np.dtype]:  # Any: an onnx.ModelProto (onnx is imported where needed)
    """The dtypes of every MatMulInteger's weights and their zero points."""
    from onnx import numpy_helper

    names = matmul_weights(model)
    return {numpy_helper.to_array(i).dtype for i in model.graph.initializer if i.name in names}

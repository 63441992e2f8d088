"""The errors the engine and the embedders share: the base `EngineError` and the two an embedder raises.

They sit beneath both packages so an embedder never imports the engine (which uses the embedders);
`core.engine.errors` re-exports them beside the engine's own, and callers keep importing them from there.
"""

from __future__ import annotations


class EngineError(ValueError):
    """Base class; `code` is a stable machine-readable name."""

    code = "engine_error"


class EmbedderUnavailableError(EngineError):
    code = "embedder_unavailable"


class ModelFileError(EngineError):
    """A packaged model file is missing or its hash does not match."""

    code = "model_file"

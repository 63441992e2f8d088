"""What the environment says about the backend, readable before Streamlit runs.

`app.launch` reads it to prestart the embedded service before Streamlit's runtime exists: importing
`app.shell.backend` there instead declared its `st.cache_data` functions without a runtime, and each one
logged "No runtime found, using MemoryCacheStorageManager" on `make run`'s terminal.
"""

from __future__ import annotations

import os

from app.shell.team_mode import team_mode
from core.contract import DEFAULT_EMBEDDER


def embedder_name() -> str:
    """The embedder of the embedded service's new models and of the workbench's local engine."""
    return os.environ.get("SCORING_EMBEDDER", DEFAULT_EMBEDDER)


def remote_settings_from_env() -> dict[str, str] | None:
    """`SCORING_API_URL` and `SCORING_API_KEY`, when both are set (never in team mode: no shared key)."""
    if team_mode():
        return None
    url, key = os.environ.get("SCORING_API_URL"), os.environ.get("SCORING_API_KEY")
    if url and key:
        return {"url": url, "key": key}
    return None

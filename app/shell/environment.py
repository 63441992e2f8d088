"""What the environment says about the backend, readable before Streamlit runs.

`app.launch` reads it to prestart the embedded service before Streamlit's runtime exists: importing
`app.shell.backend` there instead declared its `st.cache_data` functions without a runtime, and each one
logged "No runtime found, using MemoryCacheStorageManager" on `make run`'s terminal.
"""

from __future__ import annotations

from app.config import workbench_settings
from app.shell.team_mode import team_mode


def embedder_name() -> str:
    """The embedder of the embedded service's new models (`auto` unless set). The local engine embeds a
    model's texts with that model's embedder instead (`engine_cache.model_embedder`)."""
    return workbench_settings().embedder


def remote_settings_from_env() -> dict[str, str] | None:
    """`SCORING_API_URL` and `SCORING_API_KEY`, when both are set (never in team mode: no shared key)."""
    if team_mode():
        return None
    settings = workbench_settings()
    url, key = settings.api_url, settings.api_key
    if url and key:
        return {"url": url, "key": key}
    return None

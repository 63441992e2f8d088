"""What the environment configures in `core` (the client's service, the local service's home, the embedders),
read here and nowhere else in `core`. The service's settings are `service/config/settings.py`, the
workbench's `app/config.py` (which extends these); docs/settings.md lists them all, rendered from the classes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

PREFIX = "SCORING_"
HOME = Path.home() / ".scoring-workbench"


def user_cache_dir() -> Path:
    """The user's cache directory: `$XDG_CACHE_HOME`, else `~/Library/Caches` on macOS, else `~/.cache`."""
    if xdg := os.environ.get("XDG_CACHE_HOME", "").strip():
        return Path(xdg).expanduser()
    return Path.home() / ("Library/Caches" if sys.platform == "darwin" else ".cache")


#: Where the int8 graphs are kept when `SCORING_EMBEDDER_DIR` is unset (shown in docs/settings.md as written).
GRAPH_CACHE = "scoring-workbench/embedders"


def env_name(field: str) -> str:
    """A field's environment variable: `SCORING_` + its name in capitals."""
    return PREFIX + field.upper()


def from_environ[M: BaseModel](model: type[M], environ: Mapping[str, str] | None = None) -> M:
    """`model` from its `SCORING_*` variables in `environ` (else the process's environment); an empty or
    blank value counts as unset, as the service's settings do."""
    source = os.environ if environ is None else environ
    given = {name: source.get(env_name(name), "").strip() for name in model.model_fields}
    return model.model_validate({name: value for name, value in given.items() if value})


class CoreSettings(BaseModel):
    """The client's and the embedders' variables."""

    model_config = ConfigDict(frozen=True)

    api_url: str | None = Field(
        None, description="The service a `Client` made without `base_url` talks to (its `/v1` base)."
    )
    api_key: str | None = Field(None, description="The API key a `Client` made without `api_key` sends.")
    data_dir: Path | None = Field(
        None,
        description="The local service's data directory (`core.start_local_service`); unset: "
        f"`~/{HOME.name}`.",
    )
    embedder_threads: int = Field(
        0, ge=0, description="onnxruntime threads of an embedder session not given `threads`; 0: all cores."
    )
    embedder_dir: Path | None = Field(
        None,
        description="The cache of the int8 embedder graphs, shared by every data directory, local "
        "service and test run of this user (each build code's graphs in a folder of their own); point every "
        f"user of a machine at one folder to build them once a machine. Unset: `{GRAPH_CACHE}` in the user's "
        "cache directory (`$XDG_CACHE_HOME`, else `~/.cache`; `~/Library/Caches` on macOS).",
    )

    @property
    def home(self) -> Path:
        """The local service's data directory."""
        return (self.data_dir or HOME).expanduser()

    @property
    def graph_cache(self) -> Path:
        """The int8 graphs' cache (`core.embedders.graphs` keys it by their build code)."""
        return self.embedder_dir.expanduser() if self.embedder_dir else user_cache_dir() / GRAPH_CACHE


def core_settings(environ: Mapping[str, str] | None = None) -> CoreSettings:
    """Read at each call: a test or a launcher may change the environment between two."""
    return from_environ(CoreSettings, environ)

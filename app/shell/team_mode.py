"""Team mode's setting, read from the environment (no Streamlit here: the start-up banner reads it too).

`SCORING_TEAM=1` with `SCORING_API_URL`: one workbench server for a team against one service, and no key
shared by everyone: each browser signs in with its own key (app/shell/backend.py, docs/deployment.md).
"""

from __future__ import annotations

import os
from collections.abc import Mapping


def team_mode(environ: Mapping[str, str] = os.environ) -> bool:
    """`SCORING_TEAM=1`: every browser signs in with its own key (the environment's key is never used)."""
    return environ.get("SCORING_TEAM", "0").strip().lower() in ("1", "true", "yes", "on")


def team_url(environ: Mapping[str, str] = os.environ) -> str:
    """The service a team's workbench works against; team mode without one is a start-up mistake."""
    url = environ.get("SCORING_API_URL", "").strip()
    if not url:
        raise ValueError(
            "SCORING_TEAM=1 needs SCORING_API_URL: the address of the scoring service the team shares "
            "(docs/deployment.md, “A workbench for a team”)."
        )
    return url

"""Team mode's setting, read from the environment (no Streamlit here: the start-up banner reads it too).

`SCORING_TEAM=1` with `SCORING_API_URL`: one workbench server for a team against one service, and no key
shared by everyone: each browser signs in with its own key (app/shell/backend.py, docs/deployment-team.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from app.config import workbench_settings


def team_mode(environ: Mapping[str, str] | None = None) -> bool:
    """`SCORING_TEAM=1`: every browser signs in with its own key (the environment's key is never used)."""
    return workbench_settings(environ).team


def team_url(environ: Mapping[str, str] | None = None) -> str:
    """The service a team's workbench works against; team mode without one is a start-up mistake."""
    url = workbench_settings(environ).api_url
    if not url:
        raise ValueError(
            "SCORING_TEAM=1 needs SCORING_API_URL: the address of the scoring service the team shares "
            "(docs/deployment-team.md)."
        )
    return url

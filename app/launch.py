"""`python -m app.launch [streamlit options]`: `streamlit run app/main.py`, the local service starting too.

What `make run` starts. Unless the environment names a remote service (SCORING_API_URL and SCORING_API_KEY),
the embedded service starts in this process now (`app.shell.prestart`), while Streamlit starts and before
anyone opens the page; the first visit then finds it running or nearly so. A team's workbench that signs
people in through the identity provider gets Streamlit's `[auth]` secrets written first
(app/shell/signin_config.py).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from app.config import workbench_settings

ROOT = Path(__file__).resolve().parents[1]


def secrets_options(write: Callable[[Path], Path | None]) -> list[str]:
    """Sign-in through the team's identity provider: its `[auth]` secrets, written now into the data
    directory (never the project), read by Streamlit beside the usual `.streamlit/secrets.toml` files."""
    written = write(workbench_settings().data_dir or Path(".data"))
    if written is None:
        return []
    usual = [Path.home() / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml"]
    return [option for path in (*usual, written) for option in ("--secrets.files", str(path))]


def main(argv: list[str]) -> None:
    from app.shell.environment import (  # not app.shell.backend: see there
        embedder_name,
        remote_settings_from_env,
    )
    from app.shell.prestart import prestart
    from app.shell.signin_config import write_auth_secrets
    from app.shell.team_mode import team_mode

    if remote_settings_from_env() is None and not team_mode():  # a team's workbench has a service of its own
        prestart(workbench_settings().local_data_dir, embedder_name())
    from streamlit.web import cli

    sys.argv = [
        "streamlit",
        "run",
        str(ROOT / "app" / "main.py"),
        *secrets_options(write_auth_secrets),
        *argv,
    ]
    cli.main()


if __name__ == "__main__":
    main(sys.argv[1:])

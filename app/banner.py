"""What `make run` prints before Streamlit starts: where the workbench is and what the first visit does.

Plain words instead of Streamlit's banner (hidden by the Makefile): its headless mode looks the machine's
external IP up on the internet and prints a warning when it cannot, which reads like a failure.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping

from app.team_mode import team_mode

FIRST_VISIT = "about 10 seconds"
DEMO_TRAINING = "under a minute"


def banner(port: int, environ: Mapping[str, str] = os.environ) -> str:
    url = f"http://localhost:{port}"
    lines = [
        "",
        f"  Scoring Workbench: open {url} in your browser (ready in a few seconds).",
        "",
    ]
    if team_mode(environ):
        lines.append(
            f"  Team mode: it works against the service at {environ.get('SCORING_API_URL') or '(unset!)'} "
            "and each browser signs in with its own key."
        )
        if environ.get("SCORING_API_KEY"):
            lines.append("  SCORING_API_KEY is ignored in team mode: no key is shared.")
    elif environ.get("SCORING_API_URL") and environ.get("SCORING_API_KEY"):
        lines.append(f"  It works against the service at {environ['SCORING_API_URL']} (SCORING_API_URL).")
    else:
        data = environ.get("SCORING_DATA_DIR") or "~/.scoring-workbench"
        lines += [
            "  It starts a local scoring service now (its data in "
            f"{data}); the first visit shows the Models page in {FIRST_VISIT}.",
        ]
        if environ.get("SCORING_DEMO", "1") != "0":
            lines.append(
                "  On the very first start it also loads three demo models and trains two of them in the "
                f"background ({DEMO_TRAINING}; the sidebar shows their progress)."
            )
    lines += ["  Stop the workbench with Ctrl+C.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(banner(int(sys.argv[1]) if len(sys.argv) > 1 else 8501), flush=True)

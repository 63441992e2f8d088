"""What `make run` prints before Streamlit starts: where the workbench is and what the first visit does.

Plain words instead of Streamlit's banner (hidden by the Makefile): its headless mode looks the machine's
external IP up on the internet and prints a warning when it cannot, which reads like a failure. The port is
checked first: a port in use is said, with what to do, instead of a banner that promises the address and a
Streamlit error after it.
"""

from __future__ import annotations

import errno
import socket
import sys
from collections.abc import Mapping

from app.config import workbench_settings
from core.config import HOME

FIRST_VISIT = "about 10 seconds"
DEMO_TRAINING = "under a minute"


def banner(port: int, environ: Mapping[str, str] | None = None) -> str:
    settings = workbench_settings(environ)
    # The address the identity provider sends people back to (SCORING_WORKBENCH_URL, else localhost): a
    # sign-in begun at another host name (127.0.0.1) loses its cookie on the way back and starts over.
    url = (settings.workbench_url or "http://localhost:{port}").rstrip("/").replace("{port}", str(port))
    lines = [
        "",
        f"  Scoring Workbench: open {url} in your browser (ready in a few seconds).",
        "",
    ]
    if settings.team:
        how = (
            "people sign in through the identity provider at " + settings.oidc_issuer
            if settings.oidc_issuer
            else "each browser signs in with its own key"
        )
        lines.append(
            f"  Team mode: it works against the service at {settings.api_url or '(unset!)'} and {how}."
        )
        if settings.api_key:
            lines.append("  SCORING_API_KEY is ignored in team mode: no key is shared.")
    elif settings.api_url and settings.api_key:
        lines.append(f"  It works against the service at {settings.api_url} (SCORING_API_URL).")
    else:
        data = settings.data_dir or f"~/{HOME.name}"
        lines += [
            "  It starts a local scoring service now (its data in "
            f"{data}); the first visit shows the Models page in {FIRST_VISIT}.",
        ]
        if settings.demo:
            lines.append(
                "  On the very first start it also loads three demo models and trains two of them in the "
                f"background ({DEMO_TRAINING}; the sidebar shows their progress)."
            )
    lines += ["  Stop the workbench with Ctrl+C.", ""]
    return "\n".join(lines)


def _bind_error(port: int) -> OSError | None:
    """Why Streamlit could not listen on `port`, if it could not: it binds every address (IPv6 `::` taking
    IPv4 too, else `0.0.0.0`) with SO_REUSEADDR, and so does this check."""
    for family, address in ((socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:  # no IPv6 on this machine
            continue
        with sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            try:
                sock.bind((address, port))
                sock.listen()
            except OSError as exc:
                if family == socket.AF_INET6 and exc.errno == errno.EADDRNOTAVAIL:
                    continue
                return exc
            return None
    return None


def _next_free(port: int) -> int | None:
    return next((p for p in range(port + 1, min(port + 100, 65536)) if _bind_error(p) is None), None)


def port_problem(port: int) -> str | None:
    """Why the workbench cannot start on `port`, in plain words with what to do; None when it can."""
    if not 0 < port < 65536:
        return f"  {port} is not a port: pick one from 1024 to 65535, e.g. make run PORT=8502."
    error = _bind_error(port)
    if error is None:
        return None
    free = _next_free(port)
    instead = f"make run PORT={free} ({free} is free)" if free else "make run PORT=<another port>"
    if error.errno == errno.EADDRINUSE:
        return (
            f"  Port {port} is in use by another program (perhaps a workbench started earlier, still "
            "running):\n  the workbench cannot start there. Stop that program, or start on another port:\n"
            f"  {instead}"
        )
    if error.errno == errno.EACCES:
        return (
            f"  Port {port} needs privileges this user does not have (ports below 1024 do).\n"
            f"  Start on another port: {instead}."
        )
    return f"  The workbench cannot listen on port {port} ({error.strerror}).\n  Try another port: {instead}."


def main(argv: list[str]) -> int:
    """Say what `make run` starts, or why it cannot start on the port asked for (exit status 1)."""
    raw = argv[0] if argv else "8501"
    if not raw.isdigit():
        print(f"  PORT={raw} is not a port number: e.g. make run PORT=8502.", file=sys.stderr, flush=True)
        return 1
    port = int(raw)
    if (problem := port_problem(port)) is not None:
        print(f"\n{problem}\n", file=sys.stderr, flush=True)
        return 1
    print(banner(port), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

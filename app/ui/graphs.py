"""Says on the pages while an embedder's int8 graph is being built (minutes, once a machine, from the
service's first start): a training on both embedders started meanwhile waits for it."""

from __future__ import annotations

from core.client import ApiError, Client


def building_note(client: Client) -> str | None:
    """Words for the graphs `GET /v1/health` says are being built; None when none is (or it cannot tell)."""
    try:
        names = client.health().building
    except (ApiError, OSError):
        return None
    if not names:
        return None
    it = "its int8 graph is" if len(names) == 1 else "their int8 graphs are"
    return (
        f"{', '.join(names)}: {it} being built on this machine (once, a few minutes, from the service's "
        "first start). A training on both embedders started meanwhile waits for it; scoring and other "
        "trainings do not."
    )

"""Says on the pages while an embedder's int8 graph is being built (minutes, once a machine, from the
service's first start or the install), and when a version that took e5-small alone meanwhile can be followed
by one on both embedders."""

from __future__ import annotations

from collections.abc import Sequence

from core.client import ApiError, Client, Health, Version
from core.contract import MPNET_EMBEDDER
from core.embedder_words import GRAPH_NOT_BUILT


def health(client: Client) -> Health | None:
    """`GET /v1/health` (each int8 graph's state); None when it cannot tell."""
    try:
        return client.health()
    except (ApiError, OSError):
        return None


def building_note(health: Health | None) -> str | None:
    """Words for the graphs `health` says are being built; None when none is (or it cannot tell)."""
    names = health.building if health is not None else []
    if not names:
        return None
    it = "its int8 graph is" if len(names) == 1 else "their int8 graphs are"
    return (
        f"{', '.join(names)}: {it} being built on this machine, once for all its users. A model that "
        "trains on both embedders by default takes e5-small alone meanwhile; one pinned to mpnet-base or "
        "to both waits for it; scoring and other trainings do not."
    )


def both_embedders_ready(health: Health | None, versions: Sequence[Version], version_no: int | None) -> bool:
    """Whether the serving version (`version_no` of `versions`) took e5-small alone only because
    mpnet-base's int8 graph was not built yet, and `health` says it is built now: the owner may train on
    both."""
    active = next((v for v in versions if v.version_no == version_no), None)
    if active is None or active.embedder is None or active.embedder.not_compared_because != GRAPH_NOT_BUILT:
        return False
    graphs = health.embedders if health is not None else []
    return any(g.name == MPNET_EMBEDDER and g.state == "built" for g in graphs)

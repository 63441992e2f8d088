"""`Client`: one method per endpoint of the scoring service (docs/api.md), gathered from `core.client.calls`,
one module per resource."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from core.client.calls.assignments import AssignmentCalls
from core.client.calls.base import ENV_KEY, ENV_URL, ClientBase, normalize_base_url
from core.client.calls.evaluation import EvaluationCalls
from core.client.calls.exports import ExportCalls
from core.client.calls.feedback import FeedbackCalls
from core.client.calls.gold import GoldCalls
from core.client.calls.labels import LabelCalls
from core.client.calls.models import ModelCalls
from core.client.calls.namespaces import NamespaceCalls
from core.client.calls.perspective import PerspectiveCalls
from core.client.calls.pool import PoolCalls
from core.client.calls.review import ReviewCalls
from core.client.calls.samples import SampleCalls
from core.client.calls.scoring import ScoringCalls
from core.client.calls.team import TeamCalls
from core.client.calls.traits import TraitCalls
from core.client.calls.versions import VersionCalls

if TYPE_CHECKING:
    from core.client.perspective_migration import LoggedComment, MigrationReport

__all__ = ["ENV_KEY", "ENV_URL", "Client", "normalize_base_url"]


class Client(
    ExportCalls,  # before the samples and versions it reads
    VersionCalls,  # before ModelCalls, which it builds on
    SampleCalls,  # before the models, traits and key it reads
    EvaluationCalls,  # before the traits it reads
    ModelCalls,
    TraitCalls,
    NamespaceCalls,
    PoolCalls,
    AssignmentCalls,
    FeedbackCalls,
    LabelCalls,
    ReviewCalls,
    TeamCalls,
    GoldCalls,
    ScoringCalls,
    PerspectiveCalls,
    ClientBase,
):
    """Typed client for the scoring service.

    `base_url` (ending in `/v1`; added if missing) and `api_key` default to the environment
    variables `SCORING_API_URL` and `SCORING_API_KEY`. Idempotent calls are retried on
    connection errors, 429 and 5xx with exponential backoff and jitter (honouring
    `Retry-After`); calls that create something are retried only when the request never left.
    """

    # Here, not in a resource's module: a migration uses traits, samples, training and scoring alike.

    def migrate_from_perspective(
        self,
        handle: str,
        rows: Sequence[LoggedComment],
        *,
        old_threshold: float | Mapping[str, float],
        holdout: float = 0.2,
        seed: int = 0,
        effort: str | None = "low",
        timeout: float = 1800.0,
        progress: Callable[[str], None] | None = None,
    ) -> MigrationReport:
        """Logged Perspective scores (`read_log`) as soft labels of traits named after the attributes (added
        when missing); train; report agreement on the held-out share and the threshold here that keeps the
        old flag rate (docs/perspective.md, "A migration, end to end")."""
        from core.client.perspective_migration import migrate

        return migrate(
            self,
            handle,
            rows,
            old_threshold=old_threshold,
            holdout=holdout,
            seed=seed,
            effort=effort,
            timeout=timeout,
            progress=progress,
        )

"""Model states: which operation may start from which state, and where a run leaves its model (spec section 3,
docs/api.md "States"). The service refuses what this table does not allow; the workbench offers only what it
allows. Like core.contract, it depends on nothing but the standard library.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Literal, get_args

from core.contract import ModelState, RunKind

#: What a caller (or the service itself) does to a model that its state decides (spec section 3, docs/api.md
#: "States"): `edit` is any trait or sample edit; `train` a first training or a reopened draft's next
#: version; `retune` POST /train with `reoptimize_params` on a ready model (without it, a no-op); `retrain` an
#: automatic retraining or a backfill; `label` a write of a label's state (a label, a review, a settle, a
#: correction, a withdrawal or removal), no run: a busy model takes it unless its run reads the labels.
Operation = Literal[
    "edit", "train", "retune", "retrain", "discover", "synthesize", "evaluate", "reopen", "delete", "label"
]
OPERATIONS: tuple[Operation, ...] = get_args(Operation)


def _table(
    rows: Mapping[Operation, Mapping[ModelState, ModelState]],
) -> Mapping[Operation, Mapping[ModelState, ModelState]]:
    return MappingProxyType({op: MappingProxyType(dict(moves)) for op, moves in rows.items()})


#: The one table of state transitions: per operation, the states it may start from and the state it leads to.
#: The service refuses it from any other state (archived: 409 `model_archived`; busy: 409 `model_busy`; a
#: trained model's edits: 409 `model_not_draft`) and the workbench offers it only from these. A run keeps its
#: model `busy` until it ends; where it ends: `state_after_run`.
TRANSITIONS: Mapping[Operation, Mapping[ModelState, ModelState]] = _table(
    {
        "edit": {
            "draft": "draft",
            "failed": "failed",
        },  # `failed` is untrained too: fix the data, train again
        "train": {"draft": "busy", "failed": "busy"},
        "retune": {"ready": "busy"},
        "retrain": {"ready": "busy"},
        "discover": {"draft": "busy", "failed": "busy"},
        "synthesize": {"draft": "busy", "failed": "busy"},
        "evaluate": {
            "draft": "busy",
            "ready": "busy",
            "failed": "busy",
        },  # a version of its own, if it has one
        "reopen": {"draft": "draft", "ready": "draft", "failed": "draft"},  # from draft: nothing changes
        "delete": {"draft": "archived", "ready": "archived", "failed": "archived", "archived": "archived"},
        # No read blocks a write: a run that reads a version (an evaluation) leaves labels open; only a
        # run in `LABEL_READING_RUNS` refuses them while busy (`can`'s `running`).
        "label": {"draft": "draft", "ready": "ready", "failed": "failed", "busy": "busy"},
    }
)
#: Runs that train a version (their kinds).
TRAINING_RUNS: tuple[RunKind, ...] = ("train", "retrain", "backfill")
#: Runs that read the model's labels (samples and feedback buffer) when they start: a label's write while one
#: is in flight would not be honoured (409 `model_busy`, retryable). Every other run leaves labels open.
LABEL_READING_RUNS: tuple[RunKind, ...] = TRAINING_RUNS


def can(operation: Operation, state: str, running: str | None = None) -> bool:
    """Whether `operation` may start from `state` (a state this table does not know: no); `running`, the
    kind of the run in flight of a busy model, decides a `label` write (`LABEL_READING_RUNS`)."""
    if operation == "label" and state == "busy" and (running is None or running in LABEL_READING_RUNS):
        return False
    return state in TRANSITIONS[operation]


def state_after_run(kind: str, started_from: ModelState, *, succeeded: bool, has_version: bool) -> ModelState:
    """Where a run of `kind` leaves its model: where it started, except that a training that succeeds makes
    the model `ready`, and one that fails while no version serves (a first training) makes it `failed`."""
    if kind in TRAINING_RUNS and (succeeded or not has_version):
        return "ready" if succeeded else "failed"
    return started_from

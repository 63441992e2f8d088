"""Training and its runs, versions, tags and the model's history."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator

from core.client import errors
from core.client import progress as progress_mod
from core.client.calls.base import _clean, _require_name, _version_ref
from core.client.calls.models import ModelCalls
from core.client.calls.traits import TraitCalls
from core.client.models import (
    HistoryEvent,
    LastOperation,
    Model,
    Page,
    RunRef,
    TagDeleteResult,
    TagResult,
    Version,
)
from core.client.paths import path as _path
from core.json_types import JsonObject

# A run the model does not show while idle for this long is not the model's (a remote service may turn a model
# busy a moment after its 202, so not the first poll alone): `wait` raises NotFoundError, never waits it out.
UNKNOWN_RUN_GRACE = 2.0
logger = logging.getLogger(__name__)


def _unknown_run(handle: str, run_id: str, op: LastOperation | None) -> errors.NotFoundError:
    last = (
        f"its last run is {op.run_id} ({op.kind}, {op.status})"
        if op is not None and op.run_id
        else "it has no run"
    )
    return errors.NotFoundError(
        404,
        "run_not_found",
        f"{handle} is not running {run_id!r} and {last}: wait for a run id that train, discover, "
        f"synthesize or evaluate answered for this model, or client.wait({handle!r}) for what it runs now",
        run_id=run_id,
    )


class VersionCalls(ModelCalls, TraitCalls):  # waiting reads the model, training its traits
    def train(self, handle: str, effort: str | None = None, reoptimize_params: bool = False) -> RunRef:
        """Start (or join) training. Safe to retry: a repeat returns the run in flight.

        A trait without samples trains zero-shot, from its pole labels and description: the service allows
        it (a model can start before anyone labels), but after an import that failed it is rarely what was
        meant, so the answer names those traits (`RunRef.zero_shot`, `RunRef.note`) and the note is logged
        as a warning (shown in a notebook)."""
        body: JsonObject = _clean({"effort": effort})
        if reoptimize_params:
            body["reoptimize_params"] = True
        ref = self._run_ref(self.request("POST", _path("models", handle, "train"), json=body))
        try:
            traits = self.list_traits(handle)
        except errors.ScoringClientError:  # the run has started: its id matters more than the note
            return ref
        empty = [
            t.key
            for t in traits
            if not t.sample_count and t.method in (None, "zero_shot")  # never trained from samples
        ]
        if empty:
            ref.zero_shot = empty
            ref.note = (
                f"{handle}: trait{'s' if len(empty) > 1 else ''} {', '.join(map(repr, empty))} "
                f"ha{'ve' if len(empty) > 1 else 's'} no samples and train{'' if len(empty) > 1 else 's'} "
                "zero-shot from the pole labels alone; if an import failed, import the samples, train again"
            )
            logger.warning(ref.note)
        return ref

    def cancel(self, handle: str, run_id: str) -> Model:
        """Cancel a queued or running run (train, retrain, discover, synthesize, evaluate): the model goes
        back to the state the run started from (a first training's draft; a retraining's serving version
        keeps serving), `last_operation.status` is `cancelled`. Safe to repeat; a run that already ended
        otherwise raises `ConflictError` (`run_finished`)."""
        return Model.model_validate(
            self.request("POST", _path("models", handle, "runs", run_id, "cancel")).json()
        )

    def wait(
        self,
        handle: str,
        run_id: str | RunRef | None = None,
        *,
        timeout: float = 600.0,
        poll_interval: float = 0.5,
        progress: progress_mod.Progress = None,
        on_operation: Callable[[LastOperation], None] | None = None,
    ) -> Model:
        """Poll the model until it is no longer busy (and, given `run_id`, its last run is that one).

        `run_id` None (a no-op train's `RunRef.run_id`): the run the model has in flight, if any; a model
        idle at the first look is answered at once, whatever its last run did (`last_operation` says).
        A `RunRef` stands for its `run_id`.
        `progress`: `True`/`"tqdm"` for a bar or `progress(percent_done, 100)` (core.client.progress);
        `on_operation` is called with each `LastOperation` seen (phase, message, run id).
        Raises `RunFailedError` if the run failed (`RunCancelledError`, one of them, if it was cancelled) and
        `WaitTimeoutError` after `timeout` seconds. An interrupt
        (Ctrl-C, a notebook's stop) stops the waiting, not the run: it goes on in the service.
        """
        if isinstance(run_id, RunRef):
            run_id = run_id.run_id
        if run_id is not None and not isinstance(run_id, str):
            raise TypeError(
                "wait takes the run's id (a str, as train answers it in .run_id), not "
                f"{type(run_id).__name__}"
            )
        reporter = progress_mod.resolve(progress, handle, unit="%")
        deadline = time.monotonic() + timeout
        model: Model | None = None
        succeeded = False
        idle_since: float | None = None  # when the model was first seen idle on another run than run_id
        idle_at_first: bool | None = None  # without run_id: nothing in flight, no run of this wait's to judge
        try:
            while True:
                model = self.get_model(handle)
                op = model.last_operation
                if idle_at_first is None:
                    idle_at_first = run_id is None and model.state != "busy"
                if run_id is not None and model.state != "busy" and (op is None or op.run_id != run_id):
                    idle_since = time.monotonic() if idle_since is None else idle_since
                    if time.monotonic() - idle_since >= min(UNKNOWN_RUN_GRACE, timeout):
                        raise _unknown_run(handle, run_id, op)
                else:
                    idle_since = None
                if op is not None and (run_id is None or op.run_id == run_id):
                    if on_operation is not None:
                        on_operation(op)
                    label = " · ".join(p for p in (op.kind, op.phase, op.progress_message) if p)
                    done = 100 if op.status == "succeeded" else round((op.fraction or 0.0) * 100)
                    reporter.update(done, 100, label)
                if model.state != "busy" and (run_id is None or (op is not None and op.run_id == run_id)):
                    if op is not None and op.status == "failed" and not idle_at_first:
                        raise errors.RunFailedError(model, op)
                    if op is not None and op.status == "cancelled" and not idle_at_first:
                        raise errors.RunCancelledError(model, op)
                    succeeded = True
                    return model
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    if idle_since is not None and run_id is not None:  # idle on another run: not going
                        raise _unknown_run(handle, run_id, op)
                    raise errors.WaitTimeoutError(handle, run_id, timeout, model)
                time.sleep(min(poll_interval, remaining))
        except KeyboardInterrupt:
            run = run_id or (model.last_operation.run_id if model and model.last_operation else None)
            raise KeyboardInterrupt(
                f"stopped waiting for {handle}: the run{f' {run}' if run else ''} goes on in the service; "
                f"wait again with client.wait({handle!r}{f', {run!r}' if run else ''})"
            ) from None
        finally:
            reporter.close(succeeded)

    def list_versions_page(
        self, handle: str, limit: int | None = None, cursor: str | None = None
    ) -> Page[Version]:
        params = {"limit": limit, "cursor": cursor}
        return Page[Version].model_validate(self._get(_path("models", handle, "versions"), params))

    def list_versions(self, handle: str, page_size: int | None = None) -> Iterator[Version]:
        """Versions newest first, without snapshots."""
        return self._paginate(lambda cursor: self.list_versions_page(handle, limit=page_size, cursor=cursor))

    def get_version(self, handle: str, v: str | int) -> Version:
        """`v` is `"vN"`, a tag, or the number N."""
        ref = f"v{v}" if isinstance(v, int) else v
        return Version.model_validate(self._get(_path("models", handle, "versions", ref)))

    def tag_version(self, handle: str, name: str, version: str | int | None = None) -> TagResult:
        """Point tag `name` at the active version, or at `version` (`vN`, N or a tag); a tag moves."""
        _require_name(name, "tag name")
        body = {"version": _version_ref(version)} if version is not None else None
        response = self.request("POST", _path("models", handle, "versions", name), json=body)
        return TagResult.model_validate(response.json())

    def untag_version(self, handle: str, name: str) -> TagDeleteResult:
        _require_name(name, "tag name")
        response = self.request("DELETE", _path("models", handle, "versions", name))
        return TagDeleteResult.model_validate(response.json())

    def history(self, handle: str) -> list[HistoryEvent]:
        """When each version became active and when each tag pointed where, oldest first."""
        body = self._get(_path("models", handle, "history"))
        return [HistoryEvent.model_validate(e) for e in body["events"]]

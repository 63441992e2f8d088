"""Backfill: retrain every ready model with the current engine (versions say triggered_by backfill)."""

from __future__ import annotations

from sqlalchemy import select

from core.json_types import JsonObject
from core.model_states import TRANSITIONS, can
from service.context import Context
from service.domain.training import check_trainable
from service.errors import ApiError
from service.store import audit, ledger
from service.store.db import transaction
from service.store.schema import Model, Run, Version


def run_backfill(ctx: Context) -> list[str]:
    """Runs inline (no server needed); returns one report line per model."""
    with transaction(ctx.sessions) as s:
        retrainable = TRANSITIONS["retrain"].keys()
        ids = list(s.scalars(select(Model.id).where(Model.state.in_(retrainable)).order_by(Model.id)))
    report = []
    for model_id in ids:
        with transaction(ctx.sessions) as s:
            model = s.get(Model, model_id)
            if model is None or not can("retrain", model.state):
                continue
            handle = model.handle
            try:
                check_trainable(s, model)
            except ApiError as exc:  # e.g. zero-data-retention purged the samples
                report.append(f"{handle}: skipped ({exc.message})")
                continue
            prev = s.get(Version, model.current_version_id) if model.current_version_id else None
            effort = (prev.metrics.get("effort") if prev else None) or "medium"
            options: JsonObject = {"effort": effort, "triggered_by": "backfill"}
            run_id = ledger.create_run(s, model, "backfill", options).id
            audit.run_started(s, audit.OPERATOR, model, run_id, "backfill", options)
        ctx.executor.execute(run_id)
        with transaction(ctx.sessions) as s:
            run = s.get(Run, run_id)
            model = s.get(Model, model_id)
            assert run is not None and model is not None
            if run.status == "succeeded":
                no = s.scalar(select(Version.version_no).where(Version.id == model.current_version_id))
                report.append(f"{handle}: v{no} (backfill)")
            else:
                report.append(
                    f"{handle}: failed ({run.error.get('message', run.status) if run.error else run.status})"
                )
    report.append(f"Backfilled {sum(1 for r in report if '(backfill)' in r)} of {len(ids)} ready models.")
    return report

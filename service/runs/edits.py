"""What the run kinds that edit a draft (discover, synthesize) share: inputs, and the state they leave."""

from __future__ import annotations

from sqlalchemy.orm import Session

from core.embedders import Embedder
from core.engine.types import Sample, TraitSpec
from core.json_types import JsonObject
from service.runs.attempt import Attempt
from service.store import ledger
from service.store.db import transaction
from service.store.embedders import model_embedder
from service.store.samples import load_samples, load_traits, trait_specs
from service.store.schema import Model, Run, utcnow


def edit_inputs(at: Attempt) -> tuple[JsonObject, list[TraitSpec], list[Sample], Embedder]:
    """Run options, traits, samples, and the model's embedder (caching unless the model is under
    zero-data-retention)."""
    with transaction(at.reads) as s:
        run = s.get(Run, at.run_id)
        assert run is not None
        model = s.get(Model, run.model_id)
        assert model is not None
        return (
            dict(run.options),
            trait_specs(load_traits(s, model.id)),
            load_samples(s, model.id),
            at.watched(at.embedders.get(model_embedder(s, model), retain=not model.zero_data_retention)),
        )


def back_to_draft(s: Session, run_id: str) -> Model:
    """The model the run edited, returned to the state it came from (a draft, or a failed model)."""
    run = s.get(Run, run_id)
    assert run is not None
    model = s.get(Model, run.model_id)
    assert model is not None
    model.state = ledger.state_after(model, run, succeeded=True)
    model.updated_at = utcnow()
    return model

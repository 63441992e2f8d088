"""Run kind discover: find up to three new traits in the stored samples and add them with their exemplars."""

from __future__ import annotations

from core import engine
from core.contract import MAX_DISCOVERED_TRAITS, MAX_LABEL_CHARS, MAX_TRAITS, trait_key, unique_trait_key
from core.engine.types import Sample
from service.runs.attempt import Attempt
from service.runs.edits import back_to_draft, edit_inputs
from service.store import ledger
from service.store.db import transaction
from service.store.samples import add_samples, load_traits
from service.store.schema import Trait


def execute(at: Attempt) -> None:
    options, specs, samples, embedder = edit_inputs(at)
    found = engine.discover(
        samples,
        embedder=embedder,
        effort=options.get("effort") or "medium",
        existing=specs,
        progress=at.engine_progress(0.0, 0.95),
    )
    at.report(0.97, "saving")
    # Traits cannot change while the model is busy, so the room left under the cap is known here.
    found = found[: max(0, min(MAX_DISCOVERED_TRAITS, MAX_TRAITS - len(specs)))]
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, f"Discovered {len(found)} traits"):
            return
        model = back_to_draft(s, at.run_id)
        taken = {t.key for t in load_traits(s, model.id)}
        for d in found:
            key = unique_trait_key(trait_key(d.spec.name), taken)
            taken.add(key)
            trait = Trait(
                model_id=model.id,
                key=key,
                name=d.spec.name[:MAX_LABEL_CHARS],
                positive_label=d.spec.positive_label[:MAX_LABEL_CHARS],
                negative_label=d.spec.negative_label[:MAX_LABEL_CHARS],
                description=d.spec.description,
                aggregation=d.spec.aggregation,
                kind="intrinsic",
                explained_variance=float(d.explained_variance),
            )
            s.add(trait)
            s.flush()
            exemplars = [Sample(trait=key, text=x.text, quality=x.quality) for x in d.samples]
            add_samples(s, model.id, {key: trait.id}, exemplars, "discovered")

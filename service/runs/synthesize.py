"""Run kind synthesize: write new samples for the traits from their poles and the stored samples."""

from __future__ import annotations

from core.engine import synthesize
from service.runs.attempt import Attempt
from service.runs.edits import back_to_draft, edit_inputs
from service.store import ledger
from service.store.db import transaction
from service.store.samples import add_samples, load_traits


def execute(at: Attempt) -> None:
    options, specs, samples, embedder = edit_inputs(at)
    new = synthesize(
        specs,
        samples,
        synth_type=options.get("synth_type", "from_traits"),
        effort=options.get("effort") or "medium",
        embedder=embedder,
        progress=at.engine_progress(0.0, 0.95),
    )
    at.report(0.97, "saving")
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, f"Synthesized {len(new)} samples"):
            return
        model = back_to_draft(s, at.run_id)
        trait_ids = {t.key: t.id for t in load_traits(s, model.id)}
        add_samples(s, model.id, trait_ids, [x for x in new if x.trait in trait_ids], "synthesized")

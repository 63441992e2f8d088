"""Run kind synthesize: write new samples for the traits from their poles and the stored samples.

With an unlabelled pool the new samples are real texts picked from it (never a text of the evaluation
set); without one they are built-in descriptions of the poles, and the run's result says so."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core.engine import synthesize
from core.engine.synthesis import synthesis_source
from service.runs.attempt import Attempt
from service.runs.edits import back_to_draft, edit_inputs
from service.store import ledger
from service.store.db import transaction
from service.store.heldout import evaluation_pool_ids
from service.store.samples import add_samples, load_traits
from service.store.tables import PoolText, Run, SampleRow

#: Pool texts synthesis reads at most (the oldest first): enough to choose from, bounded to embed.
MAX_POOL_TEXTS = 25_000

TEMPLATE_NOTE = (
    "these are built-in descriptions of the poles, not real texts of them; add unlabelled texts to the "
    "model's pool (POST /models/{handle}/pool) and synthesize again to get real exemplars"
)


def pool_for_synthesis(s: Session, model_id: int) -> list[str]:
    """The model's pool texts synthesis may pick from: none of the evaluation set."""
    held = evaluation_pool_ids(s, model_id)
    rows = s.execute(
        select(PoolText.id, PoolText.text).where(PoolText.model_id == model_id).order_by(PoolText.id)
    )
    texts: list[str] = []
    for pool_id, text in rows:
        if pool_id not in held:
            texts.append(text)
            if len(texts) == MAX_POOL_TEXTS:
                break
    return texts


def result_message(count: int, source: str) -> str:
    if source == "pool":
        return f"Synthesized {count} samples: real texts picked from the model's pool"
    return f"Synthesized {count} samples: {TEMPLATE_NOTE}"


def execute(at: Attempt) -> None:
    options, specs, samples, embedder = edit_inputs(at)
    with transaction(at.reads) as s:
        run = s.get(Run, at.run_id)
        assert run is not None
        pool = pool_for_synthesis(s, run.model_id)
    source = synthesis_source(pool, None)
    new = synthesize(
        specs,
        samples,
        synth_type=options.get("synth_type", "from_traits"),
        effort=options.get("effort") or "medium",
        embedder=embedder,
        pool=pool,
        progress=at.engine_progress(0.0, 0.95),
    )
    at.report(0.97, "saving")
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, result_message(len(new), source)):
            return
        model = back_to_draft(s, at.run_id)
        trait_ids = {t.key: t.id for t in load_traits(s, model.id)}
        ids = add_samples(s, model.id, trait_ids, [x for x in new if x.trait in trait_ids], "synthesized")
        if ids:
            s.execute(
                update(SampleRow)
                .where(SampleRow.id.in_(ids), SampleRow.source.is_(None))
                .values(source=source)
            )

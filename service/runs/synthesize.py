"""Run kind synthesize: write new samples for the traits from their poles and the stored samples.

With the deployment's generator (`SCORING_GENERATOR_URL`) the new samples are texts it wrote (a few pool
texts show it the domain's style); else with an unlabelled pool they are real texts picked from it (never a
text of the evaluation set); with neither they are built-in descriptions of the poles, and the run's result
says so. A generator that fails fails the run (`generator_failed`), and nothing is stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from core import engine
from service.config.settings import Settings
from service.runs.attempt import Attempt
from service.runs.edits import back_to_draft, edit_inputs
from service.store import ledger
from service.store.db import transaction
from service.store.heldout import evaluation_pool_ids
from service.store.samples import add_samples, load_traits
from service.store.schema import PoolText, Run, SampleRow

if TYPE_CHECKING:
    from core.engine.generators import OpenAICompatibleGenerator

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


def generator_for(settings: Settings) -> OpenAICompatibleGenerator | None:
    """The deployment's text generator, or None when it has none."""
    if settings.generator_url is None or settings.generator_model is None:
        return None
    from core.engine.generators import OpenAICompatibleGenerator  # the engine: loaded by a first run

    key = settings.generator_key.get_secret_value() if settings.generator_key is not None else None
    return OpenAICompatibleGenerator(
        settings.generator_url, key, settings.generator_model, timeout=settings.generator_timeout_s
    )


def result_message(count: int, source: str, model: str | None = None) -> str:
    if source == "pool":
        return f"Synthesized {count} samples: real texts picked from the model's pool"
    if source == "generator":
        return f"Synthesized {count} samples: written by the text generator {model}, each on its pole"
    return f"Synthesized {count} samples: {TEMPLATE_NOTE}"


def execute(at: Attempt) -> None:
    from core.engine.synthesis import synthesis_source  # scikit-learn: loaded by the first synthesis

    options, specs, samples, embedder = edit_inputs(at)
    with transaction(at.reads) as s:
        run = s.get(Run, at.run_id)
        assert run is not None
        pool = pool_for_synthesis(s, run.model_id)
    generator = generator_for(at.settings)
    model_name = generator.model if generator is not None else None
    source = synthesis_source(pool, generator)
    new = engine.synthesize(
        specs,
        samples,
        synth_type=options.get("synth_type", "from_traits"),
        effort=options.get("effort") or "medium",
        embedder=embedder,
        generator=generator,
        pool=pool,
        progress=at.engine_progress(0.0, 0.95),
    )
    at.report(0.97, "saving")
    with transaction(at.sessions) as s:
        if not ledger.succeed(s, at.run_id, at.number, result_message(len(new), source, model_name)):
            return
        model = back_to_draft(s, at.run_id)
        trait_ids = {t.key: t.id for t in load_traits(s, model.id)}
        ids = add_samples(s, model.id, trait_ids, [x for x in new if x.trait in trait_ids], "synthesized")
        if ids:
            s.execute(
                update(SampleRow)
                .where(SampleRow.id.in_(ids), SampleRow.source.is_(None))
                .values(source=source, generator_model=model_name)
            )

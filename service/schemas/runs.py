"""Runs: train, discover and synthesize (`routes/runs.py`)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from core.contract import DiscoverEffort, ModelState, SynthType, TrainEffort
from service.schemas.common import Strict


class TrainIn(Strict):
    effort: TrainEffort | None = None
    reoptimize_params: bool = False


class DiscoverIn(Strict):
    effort: DiscoverEffort | None = None


class SynthesizeIn(Strict):
    synth_type: SynthType = Field(default="from_traits", description="`enrich` is not supported (422).")
    effort: DiscoverEffort | None = None


class RunStarted(BaseModel):
    state: ModelState
    run_id: str | None

"""Two evaluations of one set compared (`routes/eval_compare.py`)."""

from __future__ import annotations

from pydantic import BaseModel

from core.json_types import JsonObject


class ComparedRun(BaseModel):
    version_no: int
    run_id: str


class Disagreement(BaseModel):
    item_id: int
    trait: str
    text: str
    quality: float
    score_a: float
    score_b: float
    difference: float


class EvalCompareOut(BaseModel):
    handle: str
    a: ComparedRun
    b: ComparedRun
    items: int
    traits: dict[str, JsonObject]
    disagreements: list[Disagreement]

"""Evaluation sets and a version's evaluation (`routes/evaluation.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from core.contract import MAX_EVAL_ITEMS_PER_REQUEST
from core.json_types import JsonObject
from service.schemas.common import Strict
from service.schemas.samples import LabelIn


class EvalItemsIn(Strict):
    items: list[LabelIn] = Field(min_length=1, max_length=MAX_EVAL_ITEMS_PER_REQUEST)


class EvalAdded(BaseModel):
    added: int
    total: int
    duplicates: list[int] = Field(
        default_factory=list,
        description="The positions (from 0) of the items that added nothing: identical to an item of the "
        "set (same trait, text, quality and annotator), or to one earlier in this request.",
    )
    gold_texts: list[int] = Field(
        default_factory=list,
        description="The positions of the items left out as texts of gold items: a known answer that "
        "checks people never measures a version (addition).",
    )
    in_pool: int = Field(
        default=0,
        description="The distinct texts of this request that are texts of the model's unlabelled pool: from "
        "now on they are left out of the pool's list, suggestions and assignments, and labelling one is "
        "refused (addition).",
    )
    in_samples: int = Field(
        default=0,
        description="The distinct texts of this request that are texts of the model's samples (any trait): "
        "the samples stay, and no training takes them in from now on (addition).",
    )


class EvalTraitCounts(BaseModel):
    positive: int
    negative: int
    neutral: int = 0  # items of quality 0.5: on neither pole (addition)


class EvalSetOut(BaseModel):
    handle: str
    total: int
    traits: dict[str, EvalTraitCounts]


class EvalDeleted(BaseModel):
    handle: str
    deleted: int


class EvaluationStarted(BaseModel):
    state: str
    run_id: str
    version_no: int


class EvaluationOut(BaseModel):
    handle: str
    version_no: int
    run_id: str
    created_at: datetime
    items: int
    traits: JsonObject

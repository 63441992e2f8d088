"""Precision-recall curves and per-trait decision thresholds (`routes/thresholds.py`)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from service.schemas.common import Strict


class PrPoint(BaseModel):
    threshold: float
    precision: float
    recall: float


class PrTrait(BaseModel):
    positive: int
    negative: int
    neutral: int = 0  # items of quality 0.5, on neither pole: not on the curve (addition)
    points: list[PrPoint]


class PrCurveOut(BaseModel):
    handle: str
    version_no: int
    run_id: str
    traits: dict[str, PrTrait]


class ThresholdIn(Strict):
    target: Literal["precision", "recall"]
    value: float = Field(gt=0.0, le=1.0)


class ThresholdOut(BaseModel):
    trait: str
    threshold: float
    target: str
    value: float
    precision: float
    recall: float
    run_id: str
    items: int
    set_at: str = Field(json_schema_extra={"format": "date-time"})  # ISO 8601, as every other time


class ThresholdsOut(BaseModel):
    handle: str
    version_no: int
    thresholds: dict[str, ThresholdOut]


class ThresholdDeleted(BaseModel):
    handle: str
    version_no: int
    trait: str
    deleted: bool

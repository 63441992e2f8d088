"""Gold items: texts with a known answer, and each person's accuracy on them (`routes/gold.py`)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, field_validator
from pydantic_core import PydanticCustomError

from core.contract import (
    GOLD_CONFIDENCE,
    MAX_GOLD_ITEMS,
    MAX_GOLD_ITEMS_PER_REQUEST,
    GoldOrigin,
    pole_of,
)
from service.schemas.common import JsonInt, Metadata, Quality, Strict, Text, TraitRef


class GoldItemIn(Strict):
    trait: TraitRef
    text: Text
    quality: Quality = Field(description="The known answer: on a pole (an answer is right on the same pole).")
    metadata: Metadata | None = Field(
        default=None,
        description="The extra columns of the pool text the item adds, as the pool's other texts have them "
        "(a text in the pool before keeps its own) (addition).",
    )

    @field_validator("quality")
    @classmethod
    def _on_a_pole(cls, value: float) -> float:
        if pole_of(value) == "neutral":
            raise PydanticCustomError("neutral_gold", "a gold item's known answer must be on a pole, not 0.5")
        return value


class GoldIn(Strict):
    items: list[GoldItemIn] = Field(min_length=1, max_length=MAX_GOLD_ITEMS_PER_REQUEST)


class GoldPromoteIn(Strict):
    trait: TraitRef
    count: JsonInt = Field(
        ge=1,
        le=MAX_GOLD_ITEMS_PER_REQUEST,
        description="How many settled texts of the trait to promote, chosen at random among those that are "
        "not gold yet; fewer when fewer are settled.",
    )


class GoldAdded(BaseModel):
    handle: str
    added: int = Field(description="Gold items added by this request.")
    total: int = Field(description=f"The model's gold items now (at most {MAX_GOLD_ITEMS}).")
    duplicates: list[int] = Field(
        default_factory=list,
        description="The positions (from 0) of the items that added nothing: gold for the trait already, or "
        "earlier in this request.",
    )
    in_evaluation_set: list[int] = Field(
        default_factory=list,
        description="The positions of the items left out as texts of the evaluation set (a gold text never "
        "enters it, and an evaluation text is never gold).",
    )


class GoldItemOut(BaseModel):
    id: int
    trait: str
    text: str
    quality: float = Field(description="The known answer.")
    origin: GoldOrigin
    added_by: str
    created_at: datetime
    answers: int = Field(description="People who answered it.")
    correct: int = Field(description="Of those, the answers on the known answer's pole.")


class GoldSetOut(BaseModel):
    handle: str
    total: int
    items: list[GoldItemOut]


class GoldDeleted(BaseModel):
    handle: str
    deleted: int


class GoldPerson(BaseModel):
    annotator: str
    answered: int = Field(description="Gold items they answered (each counted once, their first answer).")
    correct: int
    accuracy: float = Field(description="correct / answered.")
    low: float = Field(description=f"The lower end of the {GOLD_CONFIDENCE:.0%} Wilson interval of accuracy.")
    high: float = Field(description="Its upper end.")
    flagged: bool = Field(
        description="Surely under the model's `gold_threshold`: the interval's upper end is under it."
    )


class GoldAccuracyOut(BaseModel):
    handle: str
    gold_rate: float
    gold_threshold: float
    confidence: float = Field(description="The intervals' confidence level.")
    gold_items: int
    people: list[GoldPerson] = Field(description="Everyone who answered a gold item, by annotator name.")

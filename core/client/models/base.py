"""What every model shares: responses accept unknown fields (`extra="allow"`) and type loosely what the
spec leaves open, so a newer or remote service never breaks parsing; request inputs are strict
(`extra="forbid"`, ranges checked) so a typo fails here, with the row it came from, instead of as a 422 for
a whole batch. Pages, run references and delete answers are shared by every resource."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Response(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)

    @model_validator(mode="before")
    @classmethod
    def _null_means_default(cls, data: object) -> object:
        # A null where we have a non-null default (e.g. "scores": null next to "results") means "absent".
        if isinstance(data, dict):
            nulls = [
                name
                for name, field in cls.model_fields.items()
                if data.get(name, 0) is None
                and not field.is_required()
                and field.get_default(call_default_factory=True) is not None
            ]
            if nulls:
                data = {k: v for k, v in data.items() if k not in nulls}
        return data


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class Page[T](_Response):
    items: list[T] = Field(default_factory=list)
    limit: int | None = None
    next_cursor: str | None = None


class RunRef(_Response):
    """Answer of train, discover and synthesize: the state after the call and the run to wait for.
    `zero_shot` (the client's, for `train`): the traits that have no samples, so they train from their pole
    labels and description alone; `note` says so in words (also logged as a warning)."""

    state: str
    run_id: str | None = None
    status_code: int = 202
    zero_shot: list[str] = Field(default_factory=list)
    note: str | None = None


class DeleteResult(_Response):
    handle: str
    deleted: bool
    id: int | None = None  # the sample's id, for a sample delete


def _counted(model: BaseModel) -> str:
    """A one-line repr of a report: each field's value, a list's length instead of its items (a notebook
    shows the repr of a 731-row import's report)."""
    parts = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        parts.append(f"{name}={len(value) if isinstance(value, list) else repr(value)}")
    return f"{type(model).__name__}({', '.join(parts)})"

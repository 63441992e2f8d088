"""pandas in and out: texts and rows as a notebook holds them, and scores as a table.

Texts may come as a list, a tuple, a numpy array or a pandas Series (the one rule: `core.texts`); rows as
dicts or a DataFrame whose columns are named with `text=`/`quality=`/`trait=` (as `core.tables.read_file`
names them). pandas loads only when a table is asked for, so plain lists never pay for it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from core.client.models import ScoreResult
from core.contract import id_column, source_id_text
from core.json_types import JsonObject
from core.texts import as_texts

if TYPE_CHECKING:
    import pandas as pd


def texts(values: object, call: str, column: str | None = None) -> list[str]:
    """`values` as a list of texts by the one rule (`core.texts.as_texts`): a wrong shape is a `TypeError`
    naming `call` and what to pass; `column` names a DataFrame's column of texts."""
    return as_texts(values, call, column=column)


def metadata(frame: pd.DataFrame, keep: Sequence[str]) -> list[JsonObject | None]:
    """Each row's `keep` columns as a text's metadata: plain values (a numpy number as a Python one), blank
    cells left out, None for a row with none. A column the frame lacks is a `ValueError`."""
    missing = [c for c in keep if c not in frame.columns]
    if missing:
        raise ValueError(f"the DataFrame has no column {missing[0]!r} (its columns: {list(frame.columns)})")
    kept = frame[list(keep)]
    records = kept.astype(object).where(kept.notna(), None).to_dict("records")
    out: list[JsonObject | None] = []
    for record in records:
        values = {
            str(k): v.item() if isinstance(v, np.generic) else v for k, v in record.items() if v is not None
        }
        out.append(values or None)
    return out


def rows(
    values: object,
    fields: Collection[str],
    *,
    call: str = "import_samples",
    text: str | None = None,
    quality: str | None = None,
    trait: str | None = None,
    source_id: str | None = None,
    keep: Sequence[str] | None = None,
) -> list[Mapping[str, object]]:
    """Rows as mappings. A DataFrame's columns named by `text=`/`quality=`/`trait=`/`source_id=` become those
    fields, the columns that are no field of a row (`fields`) are left out, and missing values (NaN, None)
    stay unset. Where rows have a `source_id` and `source_id=` names no column, a column named like an id
    (`core.contract.ID_COLUMNS`: `id`, `example_id`, ...) gives it, else each row's label in the frame's
    index (what joins it back: `df.loc[int(sample.source_id)]` for a frame read from a file). `keep` names a
    DataFrame's extra columns to keep as each row's `metadata` (their blank cells left out). Any other shape,
    or a row that is no mapping (a list of texts), is a `TypeError` naming `call` and the shapes it takes."""
    if is_frame(values):
        frame: pd.DataFrame = values  # type: ignore[assignment]  # checked by is_frame
        if keep:
            found = metadata(frame, keep)
            out = rows(frame, fields, call=call, text=text, quality=quality, trait=trait, source_id=source_id)
            return [{**r, "metadata": m} if m else r for r, m in zip(out, found, strict=True)]
        named = (("text", text), ("quality", quality), ("trait", trait), ("source_id", source_id))
        renames = {column: field for field, column in named if column is not None}
        if "source_id" in fields and source_id is None and "source_id" not in frame.columns:
            # The rows' own ids: a column named like one (as the workbench's file import proposes), else
            # each row's label in the frame's index.
            ids = id_column(c for c in frame.columns if c not in renames)
            if ids is not None:
                frame = frame.assign(source_id=frame[ids].map(source_id_text))
            elif frame.index.nlevels == 1:
                frame = frame.assign(source_id=list(frame.index))  # the row's id in the frame
        missing = [column for column in renames if column not in frame.columns]
        if missing:
            raise ValueError(
                f"the DataFrame has no column {missing[0]!r} (its columns: {list(frame.columns)})"
            )
        for column, field in renames.items():
            if column != field and field in frame.columns:  # two columns would both be `field`: never guess
                raise ValueError(
                    f"{field}={column!r} names the column {column!r}, but the DataFrame also has a column "
                    f"{field!r}: drop or rename one (df.drop(columns={field!r}))"
                )
        kept = frame.rename(columns=renames)
        kept = kept[[c for c in kept.columns if c in fields]]
        if "text" not in kept.columns:
            raise ValueError(
                f"the DataFrame has no 'text' column: name the texts' column with text= (its columns: "
                f"{list(frame.columns)})"
            )
        records = kept.astype(object).where(kept.notna(), None).to_dict("records")
        return [{str(k): v for k, v in r.items() if v is not None} for r in records]
    if text is not None or quality is not None or trait is not None or source_id is not None:
        raise TypeError("text=/quality=/trait= name a DataFrame's columns; these rows are not a DataFrame")
    if isinstance(values, str | bytes | Mapping) or not isinstance(values, Iterable):
        raise TypeError(_shape_message(call, fields, values))
    out = list(values)
    for row in out:
        if not isinstance(row, Mapping | BaseModel):
            raise TypeError(_shape_message(call, fields, values, row))
    return out


def _shape_message(call: str, fields: Collection[str], values: object, row: object = None) -> str:
    """What `call` takes, and why `values` is not that: said before anything is sent."""
    what = "samples" if "source_id" in fields else "evaluation items"
    takes = (
        f"{call} takes {what}, each a labelled text: a list of dicts with 'text', 'quality' (a number "
        "in [0, 1]: 1 the trait's positive pole, 0 its negative) and 'trait' (needless on a one-trait "
        "model), or a pandas DataFrame of such rows (text=, quality=, trait= name its columns; labels= maps "
        "a column of labels such as 'SUBJ'/'OBJ' to qualities)"
    )
    kind = type(values).__name__
    if kind == "Series":
        got = (
            "got a pandas Series, one column: pass the DataFrame it comes from, naming its columns "
            f"({call}(handle, df, text='Sentence', quality='Label'))"
        )
    elif isinstance(values, Mapping):
        got = (
            "got one dict: a row is one dict, so pass a list of them; a dict of columns is "
            "pd.DataFrame(columns)"
        )
    elif isinstance(row, str):
        got = f"got a {kind} of str, texts without labels"
        if what == "samples":
            got += "; unlabelled texts go to the pool: client.import_pool(handle, texts)"
    elif row is not None:
        got = f"got a {kind} holding a {type(row).__name__} ({row!r:.60})"
    else:
        got = f"got a {kind}"
    return f"{takes}; {got}. Nothing was sent."


def is_frame(values: object) -> bool:
    return type(values).__name__ == "DataFrame" and hasattr(values, "columns") and hasattr(values, "to_dict")


def index_of(values: object) -> Sequence[object] | None:
    """A pandas Series' index (so scores line up with the rows they came from), else None."""
    index = getattr(values, "index", None)
    return list(index) if type(values).__name__ == "Series" and index is not None else None


class ScoreResults(list[ScoreResult]):
    """`score_many`'s answer: one `ScoreResult` per text, in order, plus `.to_frame()` (one row per text,
    one column per trait key; the index of the Series scored, if it was one) and `.to_numpy()`."""

    def __init__(self, results: Iterable[ScoreResult], index: Sequence[object] | None = None) -> None:
        super().__init__(results)
        self.row_index = index

    @property
    def traits(self) -> list[str]:
        """The trait keys, in the service's order."""
        return [s.trait for s in self[0].scores] if self else []

    def to_numpy(self) -> np.ndarray:
        """Scores as a float array, one row per text and one column per trait (`.traits`)."""
        keys = self.traits
        rows = [[r.as_dict()[k] for k in keys] for r in self]
        return np.array(rows, dtype=np.float64).reshape(len(self), len(keys))

    def to_frame(self) -> pd.DataFrame:
        import pandas as pd

        index = list(self.row_index) if self.row_index is not None else list(range(len(self)))
        return pd.DataFrame(self.to_numpy(), columns=self.traits, index=index)

    def __repr__(self) -> str:
        traits = ", ".join(self.traits) or "no traits"
        version = f", version {self[0].version_no}" if self and self[0].version_no is not None else ""
        return f"ScoreResults({len(self)} texts × {len(self.traits)} traits: {traits}{version})"

    def _repr_html_(self) -> str:
        html: str = self.to_frame().to_html(max_rows=20)
        return html

"""The one rule for "texts" a call takes: which shapes are a list of texts, and what to pass instead.

A list, a tuple, a 1-D numpy array, a pandas Series or Index, or any other ordered iterable of strings is a
list of texts. A DataFrame, a 2-D array or a mapping is not: iterating them yields column names, rows or keys,
so scoring them would silently score the wrong thing. They raise a `TypeError` that says what to pass
(`df["column"]`), before anything is computed or sent; a DataFrame may name its column with `column=`. The
client's calls and the engine's scorer both read texts through `as_texts`. numpy and pandas are recognised by
their shape, never imported here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set


def _is_frame(values: object) -> bool:
    return type(values).__name__ == "DataFrame" and hasattr(values, "columns")


def _frame_column(frame: object, column: str, call: str) -> object:
    columns = [str(c) for c in getattr(frame, "columns", [])]
    if column not in columns:
        raise ValueError(f"{call}: the DataFrame has no column {column!r} (its columns: {columns})")
    return frame[column]  # type: ignore[index]  # a DataFrame, checked by _is_frame


def _refuse(values: object, call: str) -> None:
    """A `TypeError` for every shape that is not a list of texts, naming what to pass instead."""
    kind = type(values).__name__
    if isinstance(values, bytes | bytearray):
        raise TypeError(f"{call} takes texts as str, not {kind}: decode it first (value.decode('utf-8'))")
    if _is_frame(values):
        columns = [str(c) for c in getattr(values, "columns", [])]
        first = columns[0] if columns else "column"
        raise TypeError(
            f"{call} takes one column of texts, not a DataFrame (read as texts it gives its column "
            f'names, {columns[:5]}): pass df["{first}"], or the DataFrame with column="{first}"'
        )
    if isinstance(values, Mapping):
        raise TypeError(
            f"{call} takes a list of texts, not a {kind} (its keys would be scored): pass "
            "list(d.values()) or list(d)"
        )
    ndim = getattr(values, "ndim", 1)
    if isinstance(ndim, int) and ndim != 1 and not isinstance(values, str):
        raise TypeError(
            f"{call} takes a list of texts, not a {ndim}-D {kind}: pass one column (arr[:, 0]) or a "
            "flat array (arr.ravel())"
        )
    if isinstance(values, Set):
        raise TypeError(f"{call} takes texts in an order (a list), not a {kind}: pass sorted(texts)")
    if not isinstance(values, Iterable):
        raise TypeError(
            f"{call} takes a list of texts (list, tuple, numpy array or pandas Series), not {kind}"
        )


def as_texts(
    values: object,
    call: str,
    *,
    column: str | None = None,
    single: bool = False,
    not_text: type[TypeError] = TypeError,
) -> list[str]:
    """`values` as a list of str, or a `TypeError` naming `call` and what to pass.

    `column` names a DataFrame's column of texts. `single`: one string is a batch of one (the engine's
    `Scorer.score`); otherwise it is refused, as a client call that takes many texts means many. A value that
    is not a string is a `not_text` (a `TypeError`; the engine's `InvalidTextError`) naming its place.
    """
    if column is not None:
        if not _is_frame(values):
            raise TypeError(
                f"{call}: column= names a DataFrame's column; these texts are a {type(values).__name__}"
            )
        values = _frame_column(values, column, call)
    if isinstance(values, str):
        if single:
            return [values]
        raise TypeError(
            f"{call} takes a list of texts (list, tuple, numpy array or pandas Series), not one text: "
            "pass [text]"
        )
    _refuse(values, call)
    out = list(values)  # type: ignore[call-overload]  # an Iterable, checked by _refuse
    for i, value in enumerate(out):
        if not isinstance(value, str):
            raise not_text(f"{call}: text {i} is {type(value).__name__} {value!r:.80}, not a string")
    return [value if type(value) is str else str(value) for value in out]  # numpy's str_ as str

"""The Import tab's mapping options as the analyst set them, kept in session state per file and per file shape
(`Kept`): Streamlit forgets a widget's value in a run that does not draw it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st

from core.tables import Table

KEPT = "import_choices"  # session_state: a file's widget prefix -> {option: the analyst's value}
SHAPES = (
    "import_shapes"  # session_state: a file shape (prefix, columns) -> {option: the analyst's last value}
)


@st.cache_resource
def _imported_shapes() -> dict[tuple[str, str], dict[str, Any]]:
    """(handle, file shape) -> the options of the last import of a file of that shape into that model, kept
    across sessions: a reload or a new tab starts a new session, and its next file of the same columns (the
    evaluation set's, the other part of a split) was asked its scale, rule and label words again."""
    return {}


class Kept:
    """The analyst's mapping options for one file, kept in session state under the workbench's own keys.

    Streamlit drops a widget's state in a run that does not draw it (the scale boxes while "threshold" is
    picked, the label column while several raters are), and a widget drawn again starts from its default:
    the proposal, not what the analyst typed. So every option's widget is seeded from the value kept here
    whenever Streamlit holds none, and the analyst's own changes are kept here (its `on_change`): a value
    they set survives every switch of options until they change it; one they never touched follows the data.
    The keys carry a fingerprint of the file, so another file starts from its own proposal, except for what
    the analyst chose for the last file of the same shape (the same columns, as the other part of a
    published split has, for the samples or the evaluation set): those choices (scale, rule, threshold,
    columns) are proposed again. A session that mapped no file of that shape yet starts from the options of
    the last import of one into the model (`handle`), from whichever session made it."""

    def __init__(self, prefix: str, table: Table, handle: str | None = None) -> None:
        head = repr((table.columns, len(table.rows), table.rows[:5], table.rows[-5:], table.lines[-1:]))
        self.prefix = f"{prefix}_{hashlib.sha256(head.encode()).hexdigest()[:12]}"
        shape = repr(table.columns)
        self._imported = (handle, shape) if handle else None
        shapes: dict[str, dict[str, Any]] = st.session_state.setdefault(SHAPES, {})
        if shape not in shapes:  # none of this session's: the last import's of this shape into the model
            shapes[shape] = dict(_imported_shapes().get(self._imported, {})) if self._imported else {}
        self.shape = shapes[shape]
        files: dict[str, dict[str, Any]] = st.session_state.setdefault(KEPT, {})
        if self.prefix not in files:  # a file not seen yet: the choices made for its shape's last one
            files[self.prefix] = dict(self.shape)
        self.values: dict[str, Any] = files[self.prefix]

    def key(self, name: str) -> str:
        return f"{self.prefix}_{name}"

    def imported(self) -> None:
        """This file was imported into the model: its options are proposed for the model's next file of the
        same shape, also in another session."""
        if self._imported is not None:
            _imported_shapes()[self._imported] = dict(self.values)

    def get(self, name: str, default: Any) -> Any:
        return self.values.get(name, default)

    def put(self, name: str, value: Any) -> None:
        """Set an option for the analyst (a scale picked sets its two boxes), its widget included."""
        self.values[name] = self.shape[name] = value
        st.session_state[self.key(name)] = value

    def widget(
        self,
        name: str,
        default: Any,
        options: Sequence[Any] | None = None,
        then: Callable[[], None] | None = None,
    ) -> dict[str, Any]:
        """A widget's `key`, seeded with the kept value (else `default`) when Streamlit holds none, and the
        `on_change` that keeps what the analyst sets, then calls `then`. A kept choice no longer among
        `options` (a trait deleted meanwhile) gives way to `default`.

        The value it shows is also its own default (`index` among `options`, a multiselect's `default`, else
        `value`): a browser that draws the widget afresh from a run that did not seed it (the seeding run
        cut short by the next one, as happens on a busy machine) starts from that default and sends it
        back, so it must be the analyst's value, never Streamlit's (0.0 or the first option)."""
        key = self.key(name)
        if key not in st.session_state:
            value = self.get(name, default)
            st.session_state[key] = value if options is None or value in options or value is None else default
        shown = st.session_state[key]
        own: dict[str, Any]
        if options is not None:  # None: nothing picked yet (a choice the analyst must make)
            own = {"index": None if shown is None else list(options).index(shown)}
        elif isinstance(shown, list):
            own = {"default": shown}
        else:
            own = {"value": shown}
        return {"key": key, "on_change": self._took, "args": (name, then), **own}

    def _took(self, name: str, then: Callable[[], None] | None) -> None:
        self.values[name] = self.shape[name] = st.session_state[self.key(name)]
        if then is not None:
            then()

"""The one progress convention of the client's long calls (imports, wait, score_many, exports).

Each takes `progress=`: `True` or `"tqdm"` for a bar (tqdm's notebook widget under Jupyter, a text bar
elsewhere), or a callable called as `progress(done, total)` with whole numbers (rows, texts or, for a run,
percent of 100), or None for nothing.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, Protocol

ProgressCallback = Callable[[int, int], None]
Progress = ProgressCallback | bool | str | None


class Reporter(Protocol):
    def update(self, done: int, total: int, label: str | None = None) -> None: ...

    def close(self, succeeded: bool) -> None: ...


class _Silent:
    def update(self, done: int, total: int, label: str | None = None) -> None:
        pass

    def close(self, succeeded: bool) -> None:
        pass


class _Callback:
    def __init__(self, callback: ProgressCallback) -> None:
        self._callback = callback

    def update(self, done: int, total: int, label: str | None = None) -> None:
        self._callback(done, total)

    def close(self, succeeded: bool) -> None:
        pass


class TqdmProgress:
    """A tqdm bar (the notebook widget under Jupyter)."""

    def __init__(self, description: str, unit: str) -> None:
        self._shown: Any = None  # the widget's display handle, to show its final state (`close`)
        # Lazy: only callers asking for a bar pay for tqdm. Without ipywidgets, tqdm.auto falls back
        # to a text bar and warns about it; the text bar is fine, so the warning is noise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm
            from tqdm.notebook import tqdm as widget_bar

            if not issubclass(tqdm, widget_bar):
                self._bar: Any = tqdm(total=None, desc=description, unit=unit)
                return
            # The widget, displayed with an id: a notebook executed without a live frontend (nbconvert,
            # nbclient, papermill) saves only the text shown when it was displayed, "0%", unless the
            # display is updated once the bar is done.
            from IPython.display import display

            self._bar = widget_bar(total=None, desc=description, unit=unit, display=False)
            self._shown = display(self._bar.container, display_id=True)

    def update(self, done: int, total: int, label: str | None = None) -> None:
        if self._bar.total != total:
            self._bar.total = total
        if done > self._bar.n:
            self._bar.update(done - self._bar.n)
        if label:
            self._bar.set_postfix_str(label, refresh=False)
        self._bar.refresh()

    def close(self, succeeded: bool) -> None:
        if succeeded and self._bar.total is not None and self._bar.n < self._bar.total:
            self._bar.update(self._bar.total - self._bar.n)
        self._bar.close()
        if self._shown is not None:
            self._shown.update(self._bar.container)


def resolve(progress: Progress, description: str, unit: str = "it") -> Reporter:
    """`progress=` as a reporter: a bar, the caller's callable, or nothing."""
    if progress is None or progress is False:
        return _Silent()
    if progress is True or progress == "tqdm":
        return TqdmProgress(description, unit)
    if isinstance(progress, str) or not callable(progress):
        raise ValueError(f"progress is True, 'tqdm' or a callable(done, total), not {progress!r}")
    return _Callback(progress)

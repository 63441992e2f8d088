"""Progress reporting for `Client.wait`: a user callback, or a tqdm bar."""

from __future__ import annotations

import warnings
from collections.abc import Callable

from core.client.models import LastOperation

OperationCallback = Callable[[LastOperation], None]


class TqdmProgress:
    """A tqdm bar (the notebook widget under Jupyter) driven by `LastOperation.progress`."""

    def __init__(self, description: str = "") -> None:
        # Lazy: only callers asking for a bar pay for tqdm. Without ipywidgets, tqdm.auto falls back
        # to a text bar and warns about it; the text bar is fine, so the warning is noise.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from tqdm.auto import tqdm

            self._bar = tqdm(total=100, desc=description, unit="%", bar_format=_BAR_FORMAT)

    def __call__(self, op: LastOperation) -> None:
        fraction = op.fraction
        if fraction is not None:
            target = round(fraction * 100)
            if target > self._bar.n:
                self._bar.update(target - self._bar.n)
        label = " · ".join(p for p in (op.kind, op.phase) if p)
        if label:
            self._bar.set_description_str(label, refresh=False)
        if op.progress_message:
            self._bar.set_postfix_str(op.progress_message, refresh=False)
        self._bar.refresh()

    def close(self, succeeded: bool) -> None:
        if succeeded and self._bar.n < 100:
            self._bar.update(100 - self._bar.n)
        self._bar.close()


_BAR_FORMAT = "{desc}: {percentage:3.0f}%|{bar}| [{elapsed}{postfix}]"


def resolve(
    progress: OperationCallback | str | None, description: str
) -> tuple[OperationCallback | None, Callable[[bool], None]]:
    """Turn `wait(progress=...)` into (callback, close)."""
    if progress is None:
        return None, lambda _ok: None
    if progress == "tqdm":
        bar = TqdmProgress(description)
        return bar, bar.close
    if isinstance(progress, str):
        raise ValueError(f"progress must be a callable or 'tqdm', not {progress!r}")
    return progress, lambda _ok: None

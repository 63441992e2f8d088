"""Deselect (never skip: CI refuses skips) the parametrised cases that would run the same code again."""

from __future__ import annotations

import pytest


def deselect_marked(
    config: pytest.Config, items: list[pytest.Item], marker: str, param: str, value: str
) -> None:
    """Drop the cases of tests marked `marker` whose fixture parameter `param` is `value`: the marker says the
    test's code does not depend on that parameter, so its other cases already cover it."""
    again = [
        item
        for item in items
        if isinstance(item, pytest.Function)
        and item.get_closest_marker(marker)
        and hasattr(item, "callspec")
        and item.callspec.params.get(param) == value
    ]
    if again:
        config.hook.pytest_deselected(items=again)
        items[:] = [item for item in items if item not in again]

"""Figures as a person reads them in a table: a share as a percentage, a duration in whole seconds. The
service's numbers are exact ("0.6666666666666666", "15.038465"); a table shows what a reader compares."""

from __future__ import annotations


def share(value: float | None) -> str:
    """0.6667 → "67%"; "" where there is none (nothing compared yet)."""
    return "" if value is None else f"{value:.0%}"


def seconds(value: float | None) -> str:
    """15.038465 → "15 s"; "" where there is none."""
    return "" if value is None else f"{value:,.0f} s"

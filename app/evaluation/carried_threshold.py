"""An earlier version's decision threshold read against this version's scores (Versions page).

A threshold is stored with its version and decides only that version's scores: a new version, whose scores
may sit elsewhere, starts with none rather than silently reusing one. Where a version has no threshold for a
trait an earlier version has one for, the page shows what that threshold does on this version's evaluation,
and which threshold meets the same target here, both read off this version's precision-recall curve.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from core.client import PrPoint, Threshold
from core.contract import MAX_PR_POINTS, threshold_choice

_VERSION = re.compile(r"v(\d+)")


def earlier_refs(refs: Sequence[str], ref: str) -> list[str]:
    """The versions (`vN` of `refs`) older than `ref`, newest first."""
    numbers = {r: int(m.group(1)) for r in refs if (m := _VERSION.fullmatch(r))}
    if ref not in numbers:
        return []
    return sorted((r for r, n in numbers.items() if n < numbers[ref]), key=numbers.__getitem__, reverse=True)


def at_threshold(points: Sequence[PrPoint], threshold: float) -> tuple[float | None, float]:
    """Precision and recall of "score ≥ threshold" on a curve by rising threshold: those of its first point at
    or above it (the same items decide positive); (None, 0.0) when no score reaches it."""
    for p in points:
        if p.threshold >= threshold:
            return p.precision, p.recall
    return None, 0.0


def meeting_target(points: Sequence[PrPoint], target: str, value: float) -> PrPoint | None:
    """The point the service would choose for `target` ≥ `value`, by the service's own rule; None when none
    reaches it."""
    best = threshold_choice([(p.threshold, p.precision, p.recall) for p in points], target, value)
    return None if best is None else points[best]


@dataclass(frozen=True)
class Carried:
    source: str  # the earlier version whose threshold this is, "v2"
    old: Threshold
    precision: float | None  # this version's, at the old threshold; None when no score reaches it
    recall: float
    meeting: PrPoint | None  # this version's threshold for the old target; None when none reaches it
    approximate: bool  # a thinned curve: the figures are those of its nearest point


def carried_threshold(source: str, old: Threshold, points: Sequence[PrPoint]) -> Carried:
    precision, recall = at_threshold(points, old.threshold)
    meeting = (
        meeting_target(points, old.target, old.value)
        if old.target is not None and old.value is not None
        else None
    )
    return Carried(source, old, precision, recall, meeting, approximate=len(points) >= MAX_PR_POINTS)


def carried_sentence(ref: str, c: Carried) -> str:
    """ "v2's threshold 0.612 (precision ≥ 0.9) on v3's evaluation: precision 0.84, recall 0.71 — the
    threshold meeting precision ≥ 0.9 on v3 is 0.688 (precision 0.90, recall 0.66)."."""
    about = "about " if c.approximate else ""
    goal = f"{c.old.target} ≥ {c.old.value:g}" if c.old.target and c.old.value is not None else None
    head = f"{c.source}'s threshold {c.old.threshold:.3f}" + (f" ({goal})" if goal else "")
    if c.precision is None:
        shown = "no item scores that high (recall 0)"
    else:
        shown = f"{about}precision {c.precision:.2f}, recall {c.recall:.2f}"
    line = f"{head} on {ref}'s evaluation: {shown}"
    if goal is None:
        return line + "."
    if c.meeting is None:
        return f"{line} — no threshold reaches {goal} on {ref}."
    m = c.meeting
    return (
        f"{line} — the threshold meeting {goal} on {ref} is {about}{m.threshold:.3f} "
        f"(precision {m.precision:.2f}, recall {m.recall:.2f})."
    )

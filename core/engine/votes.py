"""Votes: several people's labels of one text, and THE rule that counts them (docs/engine-labels.md, "Votes").

A vote is one stored label row (a sample, a feedback label or an evaluation-set item) with its annotator.
Training, evaluation, agreement and the flags all count votes with `count_votes`:

- rows are grouped by (trait, text as stored, i.e. trimmed);
- within a group the latest row of each annotator counts (they changed their mind), and every unattributed
  row (annotator None: stored before annotators existed, or made by a machine) counts as a vote of its own;
- if a counted vote is adjudicated, the latest adjudicated one decides the group's quality (the other votes
  stay); otherwise the group's quality is the mean of its counted votes (a soft label);
- groups come in the order of their first row, so data with one vote per text trains exactly as before;
- a text is contested when its counted votes lie on both poles (a neutral vote is on neither) at least
  `CONTESTED_GAP` apart, and no vote settles it: graded votes nearer each other than a rating scale's step,
  on either side of the middle (0.49 and 0.51), are noise on that scale, not a contradiction to settle.

"Latest" and "first" are the order the rows are given in: the order the labels were given. The service gives
them in label-id order, one id sequence shared by the samples and the feedback buffer, a buffered label
keeping its id when a training folds it in (service/store/votes.py `in_order`), so a settle given after
buffered votes stays the latest whichever table each waits in.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from core.contract import pole_of
from core.engine.types import Sample

#: Votes on both poles nearer each other than this do not contest a text: the step of the finest rating scale
#: a file of graded labels is commonly on, -4..+4 (nine points, 1/8 apart). Whole points of any scale of up
#: to nine points on either side of the middle are at least a step apart, so they still contest; only graded
#: votes (means of ratings, fractional ratings) that straddle the middle by less stay uncontested.
CONTESTED_GAP = 1 / 8


@dataclass(frozen=True)
class Vote:
    trait: str  # trait key
    text: str
    quality: float
    annotator: str | None = None  # None: unattributed, each such row is a vote of its own
    id: int = 0  # the stored row's id (carried to `CountedText.first_id`, a Sample's id, the disagreed list)
    adjudicated: bool = False


@dataclass(frozen=True)
class CountedText:
    trait: str
    text: str  # trimmed
    quality: float  # the counted quality: the latest adjudicated vote's, else the mean of the counted votes
    votes: tuple[Vote, ...]  # the counted votes, oldest first
    first_id: int  # the id of the group's first row (counted or not)
    adjudicated: bool
    contested: bool  # counted votes on both poles (a neutral vote is on neither) and not adjudicated

    @property
    def spread(self) -> float:
        """Population standard deviation of the counted votes' qualities (0 for one vote)."""
        qualities = [v.quality for v in self.votes]
        mean = math.fsum(qualities) / len(qualities)
        return math.sqrt(math.fsum((q - mean) ** 2 for q in qualities) / len(qualities))


def count_votes(votes: Iterable[Vote]) -> list[CountedText]:
    """One `CountedText` per (trait, trimmed text), in the order of each group's first row.

    `votes` come oldest first (see the module's docstring). Qualities are not checked here: the routes and
    `validate_samples` check them where they enter.
    """
    groups: dict[tuple[str, str], list[Vote]] = {}
    for vote in votes:
        groups.setdefault((vote.trait, vote.text.strip()), []).append(vote)
    return [_count(trait, text, rows) for (trait, text), rows in groups.items()]


def _count(trait: str, text: str, rows: list[Vote]) -> CountedText:
    # The latest row of each annotator, kept at that row's place; unattributed rows each at their own.
    latest = {row.annotator: i for i, row in enumerate(rows) if row.annotator is not None}
    counted = tuple(row for i, row in enumerate(rows) if row.annotator is None or latest[row.annotator] == i)
    adjudicated = [v for v in counted if v.adjudicated]
    # fsum / n: one vote keeps its quality bit for bit (one vote per text trains as before).
    quality = adjudicated[-1].quality if adjudicated else math.fsum(v.quality for v in counted) / len(counted)
    return CountedText(
        trait=trait,
        text=text,
        quality=quality,
        votes=counted,
        first_id=rows[0].id,
        adjudicated=bool(adjudicated),
        contested=not adjudicated and opposed(v.quality for v in counted),
    )


def opposed(qualities: Iterable[float], gap: float = CONTESTED_GAP) -> bool:
    """THE rule of a contradiction: votes on both poles (a neutral vote takes neither side) whose extremes lie
    at least `gap` apart. Training's `contested`, the agreement's listing and an import's "labelled both
    ways" all ask it."""
    values = list(qualities)
    poles = {pole_of(q) for q in values} - {"neutral"}
    # A hair under the gap still counts as the gap: qualities arrive rounded to 6 decimals (1/8 as 0.125).
    return len(poles) == 2 and max(values) - min(values) >= gap - 1e-6


def training_samples(counted: Sequence[CountedText]) -> list[Sample]:
    """One Sample per counted text (its counted quality, id = its first row's id), weighted as one."""
    return [Sample(trait=c.trait, text=c.text, quality=c.quality, id=c.first_id) for c in counted]


def vote_counts(counted: Sequence[CountedText]) -> dict[str, dict[str, int]]:
    """Per trait key: how many texts and how many counted votes (a version's `texts` and `votes`)."""
    out: dict[str, dict[str, int]] = {}
    for c in counted:
        entry = out.setdefault(c.trait, {"texts": 0, "votes": 0})
        entry["texts"] += 1
        entry["votes"] += len(c.votes)
    return out


def contested_counts(counted: Sequence[CountedText]) -> dict[str, dict[str, int]]:
    """Per trait key: `contested`, the unsettled texts with votes on both poles (a person should settle them),
    and `contested_neutral`, those of them whose mean is the neutral middle: training leaves them out with
    the neutral texts, so they are counted apart from texts labelled neutral."""
    out: dict[str, dict[str, int]] = {}
    for c in counted:
        entry = out.setdefault(c.trait, {"contested": 0, "contested_neutral": 0})
        if c.contested:
            entry["contested"] += 1
            entry["contested_neutral"] += pole_of(c.quality) == "neutral"
    return out

"""A labelling team's progress, per person and trait (docs/api.md, "Team progress"; docs/engine-labels.md).

Pure: the service hands in the model's labels with their times, the unsure marks and the day, and gets the
numbers back. The rules, each in one place:

- **Labels** of a person: every label row they gave (samples and buffered feedback labels, settling votes
  included), except rows of a file import (provenance `imported`): those are a file's rater's votes, not
  work done here. `labels_today` counts those of the given UTC day.
- **Seconds per decision**: a person's decisions on a trait (labels and unsure marks) in time order; the gap
  from one to the next counts when it is at most `SESSION_GAP_S` (a longer gap is a break, not work); the
  median of the gaps that count, None without any.
- **Agreement with the others**: on each text of the trait, the person's independent vote (their latest
  that is not a settling one, as `core.engine.agreement` counts) against each other named annotator's:
  a pair is compared when both votes are on a pole (`pole_of`: the neutral middle is on none), and agrees
  when the poles are equal. The share of agreeing pairs, None without any compared.
- **Agreement with settled texts**: the person's independent votes on texts someone else settled, compared
  with the settled quality's pole when both are on a pole. The share that match, None without any compared.
- **Wanting votes**: `wants_votes`, the one rule (point it at a model's votes-wanted setting when it has
  one). A person's `wanting` counts the texts that want votes which they have neither voted on nor marked
  unsure: what they could still do.

Unsure marks are never votes: they take no pole, count in no agreement and reach no training.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from core.contract import pole_of
from core.engine.agreement import independent_votes
from core.engine.votes import CountedText, Vote, count_votes

#: The longest gap between two decisions of one person that still counts as labelling (10 minutes).
SESSION_GAP_S = 600.0


@dataclass(frozen=True)
class TimedVote:
    vote: Vote
    at: datetime
    imported: bool = False  # a file import's row: a rater's vote, not labelling done here
    rejected: bool = False  # a reviewer rejected it: labelling done, but never a vote that counts


@dataclass(frozen=True)
class Mark:
    """A person's unsure mark on a text of a trait (text as stored: trimmed)."""

    trait: str
    text: str
    annotator: str
    at: datetime


@dataclass(frozen=True)
class PersonTrait:
    annotator: str
    trait: str
    labels: int
    labels_today: int
    unsure: int
    median_seconds: float | None
    compared_others: int  # vote pairs with a colleague, both on a pole
    agreement_others: float | None
    compared_settled: int  # votes on settled texts, both on a pole
    agreement_settled: float | None
    wanting: int  # texts wanting votes the person has neither voted on nor marked unsure


@dataclass(frozen=True)
class TraitProgress:
    texts: int  # texts with at least one counted vote
    settled: int
    wanting: int  # texts wanting votes (`wants_votes`)


@dataclass(frozen=True)
class TeamProgress:
    people: tuple[PersonTrait, ...]  # by (annotator, trait)
    traits: dict[str, TraitProgress]


def wants_votes(text: CountedText, votes_wanted: int = 1) -> bool:
    """THE rule for a text that still wants votes: not settled, and either fewer counted votes than the
    model wants (only when it wants more than one) or votes on both poles (a disagreement to settle)."""
    if text.adjudicated:
        return False
    return len(text.votes) < votes_wanted or text.contested


def median_gap(times: Iterable[datetime]) -> float | None:
    """The median of the gaps (seconds) between consecutive times that are at most `SESSION_GAP_S`."""
    ordered = sorted(times)
    gaps = [(b - a).total_seconds() for a, b in zip(ordered, ordered[1:], strict=False)]
    counted = [g for g in gaps if g <= SESSION_GAP_S]
    return statistics.median(counted) if counted else None


def _share(same: int, compared: int) -> float | None:
    return same / compared if compared else None


def team_progress(
    labels: Sequence[TimedVote],
    marks: Sequence[Mark],
    traits: Sequence[str],
    today: date,
    votes_wanted: int = 1,
) -> TeamProgress:
    """Every person (a named annotator with labels of their own or unsure marks) x every trait key in
    `traits`. `labels` come oldest first, as `count_votes` wants them."""
    people = sorted(
        {t.vote.annotator for t in labels if t.vote.annotator is not None and not t.imported}
        | {m.annotator for m in marks}
    )
    out: list[PersonTrait] = []
    summary: dict[str, TraitProgress] = {}
    for trait in traits:
        mine = [t for t in labels if t.vote.trait == trait]
        live = [t for t in mine if not t.rejected]  # a rejected label counts as the person's work only
        votes = [t.vote for t in live]
        counted = count_votes(votes)
        independent = {c.text: c for c in independent_votes(votes)}
        # Imported rows are a file's, not the campaign's votes: a text only a file labelled wants none.
        campaign = count_votes([t.vote for t in live if not t.imported])
        wanting = [c for c in campaign if wants_votes(c, votes_wanted)]
        summary[trait] = TraitProgress(
            texts=len(counted), settled=sum(c.adjudicated for c in counted), wanting=len(wanting)
        )
        trait_marks = [m for m in marks if m.trait == trait]
        for person in people:
            own = [t for t in mine if t.vote.annotator == person and not t.imported]
            own_marks = [m for m in trait_marks if m.annotator == person]
            others, same_others, settled, same_settled = _agreement(person, counted, independent)
            touched = {m.text for m in own_marks}
            out.append(
                PersonTrait(
                    annotator=person,
                    trait=trait,
                    labels=len(own),
                    labels_today=sum(t.at.date() == today for t in own),
                    unsure=len(own_marks),
                    median_seconds=median_gap([t.at for t in own] + [m.at for m in own_marks]),
                    compared_others=others,
                    agreement_others=_share(same_others, others),
                    compared_settled=settled,
                    agreement_settled=_share(same_settled, settled),
                    wanting=sum(
                        1
                        for c in wanting
                        if c.text not in touched and all(v.annotator != person for v in c.votes)
                    ),
                )
            )
    return TeamProgress(people=tuple(out), traits=summary)


def _agreement(
    person: str, counted: Sequence[CountedText], independent: dict[str, CountedText]
) -> tuple[int, int, int, int]:
    """(pairs compared with colleagues, of them the same pole, settled texts compared, of them matching)."""
    others = same_others = settled = same_settled = 0
    for c in counted:
        group = independent.get(c.text)
        if group is None:
            continue
        own = next((v for v in group.votes if v.annotator == person), None)
        if own is None or (pole := pole_of(own.quality)) == "neutral":
            continue
        for v in group.votes:
            if v.annotator != person and (theirs := pole_of(v.quality)) != "neutral":
                others += 1
                same_others += theirs == pole
        # One's own settle is no check of one's own vote: agreement with settled texts is others' settles.
        settler = next((v.annotator for v in reversed(c.votes) if v.adjudicated), None)
        if c.adjudicated and settler != person and (decided := pole_of(c.quality)) != "neutral":
            settled += 1
            same_settled += decided == pole
    return others, same_others, settled, same_settled

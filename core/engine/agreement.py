"""How far a trait's annotators agree with each other (docs/engine-labels.md, "Agreement").

Only independent votes count: each named annotator's latest vote that is not adjudicated (a reviewer who
settles a text has seen the others' votes), counted with `count_votes`. Unattributed votes (no rater to
compare) are left out too. A reviewer's own earlier vote on a text they later settled still counts, so
settling a text leaves the agreement as it was.

Krippendorff's alpha is computed here from its definition (the `krippendorff` package, which the tests and
`benchmarks/agreement.py` check it against, is GPL-3.0-or-later, so it is a dev dependency only). With the
squared-difference metric both alphas are one computation: on qualities it is the interval alpha, and on
poles coded one-hot (positive, negative, neutral) the squared distance of two codes is 2 when they differ and
0 when they agree, the nominal metric up to a factor that alpha's ratio cancels, so it is the nominal alpha.

A trait rated on a scale also has the ordinal alpha: its metric between two values is the squared count of
the pairable values from one to the other, each end counting half (Krippendorff 2011, "Computing
Krippendorff's Alpha-Reliability"), which is the squared difference of the values' mid-ranks, so it is the
squared-difference alpha on mid-ranks. It needs only the votes' order, so it reads their qualities (a point's
quality grows with the point). Ordinal, not interval: the words of a scale's points ("rather", "very") say
which is more, not by how much, and the interval alpha on qualities stays beside it.

A neutral vote (quality 0.5, `core.contract.pole_of`) is a category of its own in the nominal alpha and in
`same_pole`, not left out: an annotator who calls a text neutral while another calls it positive disagrees
with them, and dropping the neutral votes would hide exactly that.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from core.contract import POLES, pole_of
from core.engine.types import JsonObject
from core.engine.votes import CountedText, Vote, count_votes, opposed

DIGITS = 6  # as the evaluation's figures


@dataclass(frozen=True)
class AnnotatorVotes:
    annotator: str
    votes: int  # independent counted votes on this trait


@dataclass(frozen=True)
class PairAgreement:
    a: str  # a < b
    b: str
    texts: int  # texts both voted on
    same_pole: int  # of those, how many they put on the same pole (both neutral counts as the same)

    @property
    def agreement(self) -> float:
        return self.same_pole / self.texts


@dataclass(frozen=True)
class DisagreedText:
    counted: CountedText  # as training counts it: every counted vote, adjudicated and unattributed too
    spread: float  # population standard deviation of its independent votes' qualities (the ranking)
    # A settler's own vote from before they settled the text: training counts their settling vote instead,
    # but it was a vote of theirs, and the agreement still counts it (module docstring), so it is listed.
    earlier: tuple[Vote, ...] = ()

    def listed_votes(self) -> tuple[Vote, ...]:
        """Every vote shown for the text: the counted ones, each settler's earlier vote just before the
        settling one."""
        before = {v.annotator: v for v in self.earlier}
        out: list[Vote] = []
        for v in self.counted.votes:
            if v.adjudicated and v.annotator in before:
                out.append(before.pop(v.annotator))
            out.append(v)
        return tuple(out)


@dataclass(frozen=True)
class TraitAgreement:
    texts_with_votes: int  # texts with >= 2 independent votes
    annotators: tuple[AnnotatorVotes, ...]  # by name
    krippendorff_alpha_interval: float | None  # None when undefined: < 2 such texts, or no variation
    krippendorff_alpha_nominal: float | None
    krippendorff_alpha_ordinal: float | None  # a scaled trait's (`trait_agreement(ordinal=True)`), else None
    pairwise: tuple[PairAgreement, ...]  # pairs with >= 1 shared text, by (a, b)
    disagreed: tuple[DisagreedText, ...]  # most disagreed first

    def as_dict(self, *, texts: bool = True) -> JsonObject:
        """The API's shape (docs/api.md). `texts=False` leaves the texts out (`disagreed: []`): what a
        zero-data-retention model keeps after its samples are purged."""
        return {
            "texts_with_votes": self.texts_with_votes,
            "annotators": [{"annotator": a.annotator, "votes": a.votes} for a in self.annotators],
            "krippendorff_alpha_interval": _round(self.krippendorff_alpha_interval),
            "krippendorff_alpha_nominal": _round(self.krippendorff_alpha_nominal),
            "krippendorff_alpha_ordinal": _round(self.krippendorff_alpha_ordinal),
            "pairwise": [
                {
                    "a": p.a,
                    "b": p.b,
                    "texts": p.texts,
                    "same_pole": p.same_pole,
                    "agreement": _round(p.agreement),
                }
                for p in self.pairwise
            ],
            "disagreed": [_disagreed_dict(d) for d in self.disagreed] if texts else [],
        }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _disagreed_dict(d: DisagreedText) -> JsonObject:
    c = d.counted
    return {
        "text": c.text,
        "votes": [
            {"annotator": v.annotator, "quality": v.quality, "sample_id": v.id, "adjudicated": v.adjudicated}
            for v in d.listed_votes()
        ],
        "quality": _round(c.quality),
        "contested": c.contested,
        "adjudicated": c.adjudicated,
    }


def independent_votes(votes: Sequence[Vote]) -> list[CountedText]:
    """The counted texts agreement works on: named annotators' votes that are not adjudicated."""
    return count_votes(v for v in votes if v.annotator is not None and not v.adjudicated)


def krippendorff_alpha(units: np.ndarray, values: np.ndarray) -> float | None:
    """Krippendorff's alpha with the squared-difference metric; `units[k]` is the text of vote `values[k]` (a
    number, or a row of numbers compared by squared Euclidean distance: one-hot codes give the nominal alpha).

    alpha = 1 - D_o / D_e over the pairable values (those of texts with >= 2 votes, n of them):
    D_o = (1/n) sum_u (1/(m_u - 1)) sum_{i != j in u} (v_i - v_j)^2 = (2/n) sum_u m_u/(m_u - 1) SS_u and
    D_e = 1/(n(n - 1)) sum_{i != j} (v_i - v_j)^2 = 2 SS / (n - 1), with SS_u a text's sum of squares about
    its mean and SS the pairable values' sum of squares about theirs. This is the package's coincidence
    matrix computation without the V x V matrices (V distinct values: thousands with a slider's qualities).
    None when undefined: fewer than two texts with >= 2 votes, or no variation.
    """
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return None
    values = values.reshape(len(values), -1)  # one column per coordinate; the sums of squares add up
    m = np.bincount(units)
    pairable = m[units] >= 2
    units, values = units[pairable], values[pairable]
    if np.count_nonzero(m >= 2) < 2:
        return None
    m = np.bincount(units, minlength=len(m)).astype(np.float64)
    ss_u = np.zeros(len(m))
    for column in values.T:
        mean_u = np.bincount(units, column, minlength=len(m)) / np.maximum(m, 1.0)
        ss_u += np.bincount(units, (column - mean_u[units]) ** 2, minlength=len(m))
    ss = float(((values - values.mean(axis=0)) ** 2).sum())
    if ss <= 0.0:
        return None
    n = len(values)
    inside = m >= 2
    observed = float((m[inside] / (m[inside] - 1.0) * ss_u[inside]).sum())
    return 1.0 - (n - 1) / n * observed / ss


def ordinal_alpha(units: np.ndarray, values: np.ndarray) -> float | None:
    """Krippendorff's ordinal alpha (module docstring): the squared-difference alpha on the mid-ranks of
    the pairable values (those of texts with >= 2 votes), each distinct value ranked by how many pairable
    values lie below it plus half its own. None when undefined, as `krippendorff_alpha`."""
    units = np.asarray(units, dtype=np.int64)
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return None
    pairable = np.bincount(units)[units] >= 2
    units, values = units[pairable], values[pairable]
    distinct, which, counts = np.unique(values, return_inverse=True, return_counts=True)
    midranks = np.cumsum(counts) - counts / 2.0
    return krippendorff_alpha(units, midranks[which.reshape(-1)]) if len(distinct) else None


def trait_agreement(votes: Sequence[Vote], limit: int = 20, *, ordinal: bool = False) -> TraitAgreement:
    """Agreement of one trait's annotators; `votes` are all of its stored votes, oldest first (as for
    `count_votes`; adjudicated and unattributed ones are left out here, see the module's docstring).

    `disagreed` holds the `limit` texts whose independent votes spread the most (population standard
    deviation of their qualities, then more votes first, then first stored first), and every text training
    counts as contested (`count_votes`) though its votes are unattributed, settled or not; texts on which
    every vote is the same are not disagreed. `ordinal`: the trait is rated on a scale, so its ordinal alpha
    is computed too.
    """
    if len({v.trait for v in votes}) > 1:
        raise ValueError("trait_agreement takes the votes of one trait")
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    independent = independent_votes(votes)
    texts = [c for c in independent if len(c.votes) >= 2]
    annotators: dict[str, int] = {}
    for c in independent:
        for v in c.votes:
            assert v.annotator is not None
            annotators[v.annotator] = annotators.get(v.annotator, 0) + 1

    units = np.repeat(np.arange(len(texts)), [len(c.votes) for c in texts])
    qualities = np.array([v.quality for c in texts for v in c.votes], dtype=np.float64)
    # One-hot pole codes: the nominal alpha over three categories, neutral one of them (module docstring).
    codes = [POLES.index(pole_of(v.quality)) for c in texts for v in c.votes]
    poles = np.eye(len(POLES))[codes] if codes else np.empty((0, len(POLES)))

    pairs: dict[tuple[str, str], list[int]] = {}
    for c in texts:
        ranked = sorted((v.annotator or "", pole_of(v.quality)) for v in c.votes)
        for (a, pole_a), (b, pole_b) in itertools.combinations(ranked, 2):
            tally = pairs.setdefault((a, b), [0, 0])
            tally[0] += 1
            tally[1] += pole_a == pole_b

    full = {c.text: c for c in count_votes(votes)}
    by_text = {c.text: c for c in independent}
    differ = [(c.spread, c) for c in texts if c.spread > 0.0]
    # A text training counts as contested is listed too though its votes are not independent ones (rows of
    # one file, unattributed: each counts as a vote of its own): it is settled here like any other, and
    # stays listed once settled (as settled), as a text of independent votes does.
    listed = {c.text for _, c in differ}
    differ += [(c.spread, c) for c in full.values() if _split(c) and c.text not in listed]
    spread = sorted(differ, key=lambda sc: (-sc[0], -len(sc[1].votes), sc[1].first_id))
    return TraitAgreement(
        texts_with_votes=len(texts),
        annotators=tuple(AnnotatorVotes(a, n) for a, n in sorted(annotators.items())),
        krippendorff_alpha_interval=krippendorff_alpha(units, qualities),
        krippendorff_alpha_nominal=krippendorff_alpha(units, poles),
        krippendorff_alpha_ordinal=ordinal_alpha(units, qualities) if ordinal else None,
        pairwise=tuple(PairAgreement(a, b, n, same) for (a, b), (n, same) in sorted(pairs.items())),
        disagreed=tuple(
            DisagreedText(full[c.text], s, _earlier(full[c.text], by_text)) for s, c in spread[:limit]
        ),
    )


def _earlier(counted: CountedText, independent: dict[str, CountedText]) -> tuple[Vote, ...]:
    """The settlers' own votes on a text from before they settled it (none when it is not settled)."""
    settlers = {v.annotator for v in counted.votes if v.adjudicated and v.annotator is not None}
    own = independent.get(counted.text)
    if not settlers or own is None:
        return ()
    return tuple(v for v in own.votes if v.annotator in settlers)


def _split(c: CountedText) -> bool:
    """Votes on both poles apart from a settling one: contested, or settled after it was."""
    return opposed(v.quality for v in c.votes if not v.adjudicated)


def reliability_matrix(counted: Sequence[CountedText]) -> tuple[list[str], np.ndarray]:
    """(annotators by name, the annotators x texts matrix of their counted qualities, NaN where missing):
    the `krippendorff` package's input, for checks and benchmarks."""
    names = sorted({v.annotator for c in counted for v in c.votes if v.annotator is not None})
    row = {a: i for i, a in enumerate(names)}
    matrix = np.full((len(names), len(counted)), np.nan)
    for j, c in enumerate(counted):
        for v in c.votes:
            if v.annotator is not None:
                matrix[row[v.annotator], j] = v.quality
    return names, matrix

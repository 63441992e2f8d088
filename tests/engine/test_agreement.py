"""Agreement of a trait's annotators (`core.engine.agreement`): alphas equal to the `krippendorff` package on
the same matrix, hand-checked small cases, pairwise agreement and the most disagreed texts."""

from __future__ import annotations

from typing import Literal

import krippendorff
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.contract import POLES, Pole, pole_of
from core.engine import Vote, count_votes, trait_agreement
from core.engine.agreement import independent_votes, krippendorff_alpha, ordinal_alpha, reliability_matrix


def _votes(table: dict[str, dict[str, float]]) -> list[Vote]:
    """{text: {annotator: quality}} as votes, ids in order."""
    rows = [(text, a, q) for text, by in table.items() for a, q in by.items()]
    return [Vote("t", text, q, a, id=i) for i, (text, a, q) in enumerate(rows)]


Level = Literal["interval", "ordinal", "nominal"]


def _package(votes: list[Vote], level: Level) -> float:
    """The `krippendorff` package on the annotators x texts matrix of the independent votes (on their
    qualities for "interval", on their poles for "nominal": positive, negative or neutral, three
    categories)."""
    _, matrix = reliability_matrix(independent_votes(votes))
    if level == "nominal":
        code = np.vectorize(lambda q: q if np.isnan(q) else float(POLES.index(pole_of(q))))
        matrix = code(matrix)
    return float(krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def test_the_alphas_equal_the_krippendorff_package_on_the_same_matrix() -> None:
    rng = np.random.default_rng(7)
    latent = rng.random(60)
    votes: list[Vote] = []
    for i, truth in enumerate(latent):
        raters = rng.choice(8, size=rng.integers(1, 5), replace=False)  # 1 to 4 raters: missing data
        for r in raters:
            q = float(np.clip(truth + rng.normal(0, 0.25), 0, 1))
            votes.append(Vote("t", f"text {i}", round(q * 24) / 24, f"rater{r}", id=len(votes)))
    result = trait_agreement(votes)
    interval, nominal = _package(votes, "interval"), _package(votes, "nominal")
    assert result.krippendorff_alpha_interval == pytest.approx(interval, abs=1e-12)
    assert result.krippendorff_alpha_nominal == pytest.approx(nominal, abs=1e-12)
    assert 0.2 < nominal < interval < 0.9  # noisy raters of one latent: clearly above chance, below perfect


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 3), st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])),
        max_size=40,
    )
)
def test_the_alphas_equal_the_package_on_any_votes(cells: list[tuple[int, int, float]]) -> None:
    votes = [Vote("t", f"text {u}", q, f"r{a}", id=i) for i, (u, a, q) in enumerate(cells)]
    result = trait_agreement(votes, ordinal=True)  # the qualities of a 5-point scale's points
    counted = [c for c in independent_votes(votes) if len(c.votes) >= 2]
    values = [v.quality for c in counted for v in c.votes]
    levels: tuple[tuple[float | None, Level, list[float] | list[Pole]], ...] = (
        (result.krippendorff_alpha_interval, "interval", values),
        (result.krippendorff_alpha_ordinal, "ordinal", values),
        (result.krippendorff_alpha_nominal, "nominal", [pole_of(q) for q in values]),
    )
    for ours, level, coded in levels:
        if len(counted) < 2 or len(set(coded)) < 2:
            assert ours is None  # undefined: fewer than two texts with two votes, or no variation
        else:
            assert ours == pytest.approx(_package(votes, level), abs=1e-9)


def test_the_packages_documented_example() -> None:
    """Krippendorff's own example (the package's doctest): interval 0.810845, nominal 0.691358."""
    nan = np.nan
    data = np.array(
        [
            [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
        ]
    )
    rows, cols = np.nonzero(~np.isnan(data))
    assert krippendorff_alpha(cols, data[rows, cols]) == pytest.approx(0.810845, abs=1e-6)
    # Nominal with four categories is not a squared difference; with two (poles) it is: checked above.


def test_the_ordinal_alpha_of_krippendorffs_published_example() -> None:
    """Four observers' 1-5 ratings of twelve units (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability", section C): alpha is 0.815 at the ordinal level and 0.849 at the interval one; the
    ordinal alpha needs only the ratings' order, so it is the same on the qualities of a 5-point scale."""
    nan = np.nan
    data = np.array(
        [
            [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
            [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
            [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
            [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
        ]
    )
    rows, cols = np.nonzero(~np.isnan(data))
    ratings = data[rows, cols]
    assert ordinal_alpha(cols, ratings) == pytest.approx(0.815, abs=5e-4)
    assert krippendorff_alpha(cols, ratings) == pytest.approx(0.849, abs=5e-4)
    assert ordinal_alpha(cols, (ratings - 1) / 4) == pytest.approx(ordinal_alpha(cols, ratings), abs=1e-12)
    assert (
        trait_agreement([Vote("t", "a", 0.0, "r1"), Vote("t", "a", 1.0, "r2")]).krippendorff_alpha_ordinal
        is None
    )


def test_perfect_agreement_is_one() -> None:
    table = {"a": {"x": 1.0, "y": 1.0}, "b": {"x": 0.0, "y": 0.0, "z": 0.0}, "c": {"y": 0.75, "z": 0.75}}
    result = trait_agreement(_votes(table))
    assert result.krippendorff_alpha_interval == 1.0
    assert result.krippendorff_alpha_nominal == 1.0
    assert result.texts_with_votes == 3
    assert [(p.a, p.b, p.texts, p.same_pole, p.agreement) for p in result.pairwise] == [
        ("x", "y", 2, 2, 1.0),
        ("x", "z", 1, 1, 1.0),
        ("y", "z", 2, 2, 1.0),
    ]
    assert result.disagreed == ()  # nothing spreads


def test_total_disagreement_by_hand() -> None:
    """Two raters, four texts, always opposite poles. Pairable values n = 8, four 1s and four 0s:
    D_o = (1/8) * 4 texts * 2 ordered pairs * 1 / (2 - 1) = 1; D_e = 2 * 4 * 4 / (8 * 7) = 4/7;
    alpha = 1 - 1 / (4/7) = -0.75 (systematic disagreement is below chance)."""
    table = {f"t{i}": {"x": float(i % 2), "y": float(1 - i % 2)} for i in range(4)}
    result = trait_agreement(_votes(table))
    assert result.krippendorff_alpha_nominal == pytest.approx(-0.75)
    assert result.krippendorff_alpha_interval == pytest.approx(-0.75)
    (pair,) = result.pairwise
    assert (pair.texts, pair.same_pole, pair.agreement) == (4, 0, 0.0)


def test_missing_data_by_hand() -> None:
    """Three raters, with gaps; texts with one vote are not pairable. Qualities (0, 1 scale):
    t1: 1, 1, 0   t2: 0, 0   t3: 1 (one vote: left out)   t4: 1, 1.
    Nominal = interval on 0/1: n = 7 pairable values, four 1s. D_o = (1/7) * (2*2*1 / 2) = 2/7;
    D_e = 2 * 4 * 3 / (7 * 6) = 4/7; alpha = 1 - (2/7) / (4/7) = 0.5."""
    table = {
        "t1": {"x": 1.0, "y": 1.0, "z": 0.0},
        "t2": {"x": 0.0, "z": 0.0},
        "t3": {"y": 1.0},
        "t4": {"y": 1.0, "z": 1.0},
    }
    result = trait_agreement(_votes(table))
    assert result.krippendorff_alpha_nominal == pytest.approx(0.5)
    assert result.texts_with_votes == 3
    assert [(a.annotator, a.votes) for a in result.annotators] == [("x", 2), ("y", 3), ("z", 3)]
    pairs = {(p.a, p.b): (p.texts, p.same_pole) for p in result.pairwise}
    assert pairs == {("x", "y"): (1, 1), ("x", "z"): (2, 1), ("y", "z"): (2, 1)}


def test_undefined_alphas_are_none() -> None:
    one_text = {"t1": {"x": 1.0, "y": 0.0}, "t2": {"x": 1.0}}
    assert trait_agreement(_votes(one_text)).krippendorff_alpha_interval is None
    no_variation = {"t1": {"x": 0.8, "y": 0.8}, "t2": {"x": 0.8, "y": 0.8}}
    result = trait_agreement(_votes(no_variation))
    assert (result.krippendorff_alpha_interval, result.krippendorff_alpha_nominal) == (None, None)
    empty = trait_agreement([])
    assert empty.as_dict() == {
        "texts_with_votes": 0,
        "annotators": [],
        "krippendorff_alpha_interval": None,
        "krippendorff_alpha_nominal": None,
        "krippendorff_alpha_ordinal": None,
        "pairwise": [],
        "disagreed": [],
    }


def test_adjudicated_and_unattributed_votes_stay_out_and_settling_keeps_the_agreement() -> None:
    votes = _votes({"t1": {"x": 1.0, "y": 0.0}, "t2": {"x": 1.0, "y": 1.0}, "t3": {"x": 0.0, "y": 0.0}})
    before = trait_agreement(votes)
    settled = [
        *votes,
        Vote("t", "t1", 0.0, "y", id=50, adjudicated=True),  # y settles t1 (their earlier vote still counts)
        Vote("t", "t2", 0.0, None, id=51),  # an old unattributed row
        Vote("t", "t3", 1.0, "rev", id=52, adjudicated=True),
    ]
    after = trait_agreement(settled)
    assert after.krippendorff_alpha_interval == before.krippendorff_alpha_interval
    assert after.pairwise == before.pairwise
    assert [(a.annotator, a.votes) for a in after.annotators] == [("x", 3), ("y", 3)]
    # t1 is the only text whose independent votes spread; t2 is listed too: the old unattributed row makes it
    # contested as training counts it, so it is settled where the other disagreements are.
    d, unattributed = after.disagreed
    assert unattributed.counted == count_votes(settled)[1] and unattributed.counted.contested
    item = after.as_dict()["disagreed"][0]
    assert item["text"] == "t1" and item["adjudicated"] and not item["contested"] and item["quality"] == 0.0
    # Every vote of the text is listed, the settler's own from before they settled it too (training counts
    # their settling vote instead; the agreement still counts the earlier one).
    assert [(v["annotator"], v["quality"], v["sample_id"], v["adjudicated"]) for v in item["votes"]] == [
        ("x", 1.0, 0, False),
        ("y", 0.0, 1, False),
        ("y", 0.0, 50, True),
    ]
    assert d.counted == count_votes(settled)[0]


def test_the_most_disagreed_texts_come_first_and_limit_cuts() -> None:
    table = {
        "mild": {"a": 0.5, "b": 0.75},
        "split": {"a": 0.0, "b": 1.0},
        "three": {"a": 0.0, "b": 1.0, "c": 0.0},  # a smaller spread than an even split
        "agreed": {"a": 1.0, "b": 1.0},
        "four": {"a": 0.0, "b": 1.0, "c": 0.0, "d": 1.0},  # as spread as "split", with more votes
    }
    result = trait_agreement(_votes(table), limit=3)
    assert [d.counted.text for d in result.disagreed] == ["four", "split", "three"]
    assert result.disagreed[0].spread == 0.5
    full = trait_agreement(_votes(table), limit=100)
    assert [d.counted.text for d in full.disagreed] == ["four", "split", "three", "mild"]
    assert full.as_dict(texts=False)["disagreed"] == []
    assert full.as_dict()["disagreed"][0]["contested"]


def test_every_text_training_counts_as_contested_is_listed() -> None:
    """Two rows of one imported file (unattributed) with opposite ratings: training counts the text as
    contested, so the disagreed texts list it, where it can be settled, and where it shows once settled."""
    votes = [
        Vote("t", "dup", 1.0, None, id=1),
        Vote("t", "dup", 0.0, None, id=2),
        Vote("t", "one", 1.0, id=3),
    ]
    contested = [c.text for c in count_votes(votes) if c.contested]
    listed = trait_agreement(votes).disagreed
    assert contested == [d.counted.text for d in listed] == ["dup"]
    assert [v.quality for v in listed[0].counted.votes] == [1.0, 0.0]
    settled = [*votes, Vote("t", "dup", 0.0, "rev", id=4, adjudicated=True)]
    # Settled, it stays listed as settled (as a text of independent votes does), not contested any more:
    # the page that settled it shows who did, not "no text has votes that differ".
    (after,) = trait_agreement(settled).disagreed
    assert after.counted.text == "dup" and after.counted.adjudicated and not after.counted.contested


def test_one_trait_at_a_time() -> None:
    with pytest.raises(ValueError, match="one trait"):
        trait_agreement([Vote("t", "x", 1.0, "a"), Vote("u", "x", 1.0, "a")])
    with pytest.raises(ValueError, match="limit"):
        trait_agreement([], limit=-1)


def test_a_thousand_distinct_qualities_need_no_quadratic_memory() -> None:
    """Slider qualities are all distinct: the package would build V x V matrices; ours is linear."""
    rng = np.random.default_rng(1)
    votes = [Vote("t", f"text {i // 3}", float(rng.random()), f"r{i % 3}", id=i) for i in range(30_000)]
    result = trait_agreement(votes, limit=5)
    assert result.texts_with_votes == 10_000
    assert result.krippendorff_alpha_interval is not None and abs(result.krippendorff_alpha_interval) < 0.05

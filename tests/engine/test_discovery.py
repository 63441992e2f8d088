"""Discovery of intrinsic trait axes, with the deterministic hashing embedder."""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from core.contract import MAX_DISCOVERED_TRAITS, trait_key
from core.embedders import get_embedder
from core.engine.discovery import discover, pooled_texts
from core.engine.errors import EngineError, InvalidEffortError, TooFewTextsError
from core.engine.types import Sample, TraitSpec

COMPLAINTS = [
    "My refund has been delayed for three weeks and nobody answers.",
    "Still waiting on the refund, the delay is unacceptable.",
    "The package delay ruined the gift and the refund never came.",
    "I asked for a refund twice and got another delay notice.",
    "Refund request ignored, shipping delay again.",
    "Another delay, another week without my refund.",
    "Why does a simple refund take a month of delays?",
    "The delivery delay was endless and the refund is still pending.",
    "Delay after delay, and the refund form keeps failing.",
    "I want my refund now, this delay has cost me money.",
    "They promised a refund but the delay keeps growing.",
    "Order delayed again; requesting a full refund.",
    "The refund was denied after the long delay.",
    "Shipping delay of two weeks, still no refund issued.",
    "Refund still missing, delay excuses every day.",
    "Terrible delay, I demand my refund.",
    "Refund processing delay is ridiculous.",
    "The courier delay means I need a refund.",
    "No refund, no update, just delay.",
    "Delay on my order and a refund that never arrives.",
]
PRAISE = [
    "The staff were so friendly and helpful, great praise to them.",
    "Lovely friendly staff, I have nothing but praise.",
    "Praise for the cheerful staff who made my day.",
    "The friendly team deserves all the praise.",
    "Wonderful staff, friendly smiles everywhere.",
    "Staff were warm and friendly, high praise.",
    "I want to praise the friendly staff at the front desk.",
    "Such friendly staff, truly worth the praise.",
    "Friendly, kind staff; praise all round.",
    "The staff were friendly and the praise is deserved.",
    "Great friendly staff who went above and beyond.",
    "Praise to the staff for their friendly welcome.",
    "Friendly staff and a warm atmosphere.",
    "Staff so friendly, I left a note of praise.",
    "The most friendly staff I have met, well done.",
    "Praise for the friendly waiter and kitchen staff.",
    "Friendly staff made the visit a delight.",
    "Every staff member was friendly and patient.",
    "Big praise for the friendly service staff.",
    "Friendly and professional staff, full praise.",
]


@pytest.fixture(scope="module")
def embedder():
    return get_embedder("hashing")


def _samples() -> list[Sample]:
    # Labelled for a trait unrelated to the topic split, so discovery has to find the split itself.
    texts = COMPLAINTS + PRAISE
    return [Sample("length", t, 1.0 if len(t) > 45 else 0.0) for t in texts]


def _words(label: str) -> set[str]:
    return set(re.findall(r"[a-z]+", label.lower()))


def _topic_split(trait) -> bool:
    """True when one pole holds only complaints and the other only praise."""
    pos = {s.text for s in trait.samples if s.quality == 1.0}
    neg = {s.text for s in trait.samples if s.quality == 0.0}
    c, p = set(COMPLAINTS), set(PRAISE)
    return (pos <= c and neg <= p) or (pos <= p and neg <= c)


def test_finds_the_topic_axis_and_names_it_from_its_words(embedder) -> None:
    traits = discover(_samples(), embedder=embedder, effort="medium")
    assert 1 <= len(traits) <= MAX_DISCOVERED_TRAITS
    first = traits[0]
    assert _topic_split(first)
    complaint_words, praise_words = {"refund", "delay", "delayed"}, {"praise", "friendly", "staff"}
    labels = [_words(first.spec.positive_label), _words(first.spec.negative_label)]
    assert (labels[0] & complaint_words and labels[1] & praise_words) or (
        labels[0] & praise_words and labels[1] & complaint_words
    )
    assert " vs " in first.spec.name
    assert 0.0 < first.explained_variance <= 1.0


def test_pole_exemplars_are_labelled_samples_of_the_new_key(embedder) -> None:
    pool = set(COMPLAINTS + PRAISE)
    traits = discover(_samples(), embedder=embedder, effort="low")
    keys = [t.spec.key for t in traits]
    assert len(set(keys)) == len(keys)
    for trait in traits:
        spec = trait.spec
        assert re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)*", spec.key) and len(spec.key) <= 48
        assert all(1 <= len(x) <= 100 for x in (spec.name, spec.positive_label, spec.negative_label))
        pos = [s for s in trait.samples if s.quality == 1.0]
        neg = [s for s in trait.samples if s.quality == 0.0]
        assert len(pos) >= 5 and len(neg) >= 5
        assert len(pos) + len(neg) == len(trait.samples)
        assert {s.trait for s in trait.samples} == {spec.key}
        assert not {s.text for s in pos} & {s.text for s in neg}
        assert {s.text for s in trait.samples} <= pool


def test_same_samples_in_any_order_give_the_same_traits(embedder) -> None:
    samples = _samples()
    reference = discover(samples, embedder=embedder, effort="high")
    shuffled = samples[:]
    random.Random(7).shuffle(shuffled)
    # Repeated texts (under another trait, with stray spaces) must not change anything either.
    shuffled += [Sample("other", "  " + COMPLAINTS[0] + " ", 0.0), samples[3]]
    again = discover(shuffled, embedder=embedder, effort="high")
    assert [t.spec for t in again] == [t.spec for t in reference]
    assert [t.samples for t in again] == [t.samples for t in reference]
    assert [t.explained_variance for t in again] == [t.explained_variance for t in reference]


@pytest.mark.parametrize("effort", ["low", "medium", "high", "xhigh", "max"])
def test_every_effort_finds_the_topic_axis_first(embedder, effort: str) -> None:
    traits = discover(_samples(), embedder=embedder, effort=effort)
    assert traits and _topic_split(traits[0])


def test_chosen_axes_are_not_redundant(embedder) -> None:
    traits = discover(_samples(), embedder=embedder, effort="max")
    texts = pooled_texts(_samples())
    x = embedder.encode(texts).astype(np.float64)
    x -= x.mean(axis=0)
    # Each trait's pole exemplars define its direction; no two may order the texts alike.
    directions = []
    for t in traits:
        pos = embedder.encode([s.text for s in t.samples if s.quality == 1.0]).mean(axis=0)
        neg = embedder.encode([s.text for s in t.samples if s.quality == 0.0]).mean(axis=0)
        directions.append(x @ (pos - neg))
    for i in range(len(directions)):
        for j in range(i + 1, len(directions)):
            assert abs(np.corrcoef(directions[i], directions[j])[0, 1]) < 0.9


def test_existing_trait_axis_is_not_rediscovered(embedder) -> None:
    topic = TraitSpec("topic", "Topic", "praise", "complaint")
    samples = [Sample("topic", t, 0.0) for t in COMPLAINTS] + [Sample("topic", t, 1.0) for t in PRAISE]
    assert _topic_split(discover(samples, embedder=embedder)[0])  # found when nothing exists
    for existing in ([topic], [(topic, None)]):
        traits = discover(samples, embedder=embedder, existing=existing)
        assert not any(_topic_split(t) for t in traits)
    # An explicit axis works the same way.
    axis = embedder.encode(PRAISE).mean(axis=0) - embedder.encode(COMPLAINTS).mean(axis=0)
    traits = discover(_samples(), embedder=embedder, existing=[(topic, axis)])
    assert not any(_topic_split(t) for t in traits)


def test_existing_keys_are_not_reused(embedder) -> None:
    first = discover(_samples(), embedder=embedder)[0].spec
    clash = TraitSpec(first.key, "Something else", "a", "b")
    unrelated_axis = np.random.default_rng(0).normal(size=embedder.dim)
    again = discover(_samples(), embedder=embedder, existing=[(clash, unrelated_axis)])[0].spec
    # The same axis comes back under the next distinctive phrases, never under the taken key.
    assert again.key != first.key
    assert again.name != first.name
    assert again.key == trait_key(again.name)


def test_existing_axis_of_the_wrong_size_is_a_clear_error(embedder) -> None:
    spec = TraitSpec("x", "X", "a", "b")
    with pytest.raises(EngineError, match="dimensions"):
        discover(_samples(), embedder=embedder, existing=[(spec, [1.0, 0.0])])


def test_too_few_distinct_texts(embedder) -> None:
    nine = COMPLAINTS[:5] + PRAISE[:4]
    samples = [Sample("t", t, 1.0) for t in nine] + [Sample("u", t.lower(), 0.0) for t in nine]
    with pytest.raises(TooFewTextsError, match="at least 10 distinct") as info:
        discover(samples, embedder=embedder)
    assert info.value.code == "too_few_texts"
    assert "has 9" in str(info.value)


def test_unknown_effort(embedder) -> None:
    with pytest.raises(InvalidEffortError, match="'extreme'"):
        discover(_samples(), embedder=embedder, effort="extreme")


def test_progress_runs_from_zero_to_one(embedder) -> None:
    calls: list[tuple[float, str]] = []
    discover(_samples(), embedder=embedder, progress=lambda f, p: calls.append((f, p)))
    fractions = [f for f, _ in calls]
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    assert fractions == sorted(fractions)
    assert calls[-1][1] == "done" and {"embedding", "searching", "labelling"} <= {p for _, p in calls}


def test_discovered_traits_train_as_they_are(embedder) -> None:
    from core.engine import train

    found = discover(_samples(), embedder=embedder, effort="low")
    result = train(
        [t.spec for t in found], [s for t in found for s in t.samples], embedder=embedder, effort="low"
    )
    assert set(result.metrics) == {t.spec.key for t in found}
    assert result.metrics[found[0].spec.key]["roc_auc"] > 0.9


def test_bad_samples_are_named(embedder) -> None:
    bad = [*_samples(), Sample("x", None, 1.0)]  # type: ignore[arg-type]  # no text: the error under test
    with pytest.raises(EngineError, match="sample 40: text must be a string"):
        discover(bad, embedder=embedder)
    with pytest.raises(EngineError, match="sample 0: quality"):
        discover([Sample("x", "fine", 1.5), *_samples()], embedder=embedder)


def test_a_taken_name_gives_way_to_the_next_distinctive_pair() -> None:
    from core.engine.discovery import _make_spec

    # A pole is named by its two strongest phrases; the pole labels hold three.
    first = _make_spec(0, ["refund", "delay", "late"], ["praise", "staff", "kind"], 0.2, 40, set())
    assert (first.name, first.key) == ("refund & delay vs praise & staff", "refund_delay_vs_praise_staff")
    assert (first.positive_label, first.negative_label) == ("refund, delay, late", "praise, staff, kind")
    taken = {"refund_delay_vs_praise_staff"}
    spec = _make_spec(0, ["refund", "delay"], ["praise", "staff"], 0.2, 40, taken)
    assert (spec.name, spec.key) == ("delay vs staff", "delay_vs_staff")
    again = _make_spec(1, ["refund", "delay"], ["praise", "staff"], 0.2, 40, taken)
    assert again.key == "refund_delay_vs_praise_staff_2"
    assert again.name == "refund & delay vs praise & staff (2)"


# -- names a person would give: phrases, never stop words or URL fragments --------------------------------

_PAGES = ["Sandbox", "Main_Page", "Help:Editing", "Talk:Physics", "User:Example", "Rail_transport"]
REQUESTS = [
    f"Could you please look at the talk page of http://en.wikipedia.org/wiki/{_PAGES[i % 6]} before "
    "reverting? "
    f"{['Thank you', 'Many thanks', 'Thank you kindly'][i % 3]}."
    for i in range(12)
] + [
    f"Would you mind explaining your edit on the talk page, see www.example.com/{p}? Thank you so much."
    for p in ("a", "b", "c", "d", "e", "f", "g", "h")
]
NEWS = [
    f"The prime minister said the government would {verb} the rail budget by {n} percent next year."
    for verb, n in zip(["raise", "cut", "review", "freeze", "double"] * 4, range(3, 23), strict=True)
]


def _ends(trait) -> tuple[list[str], list[str]]:
    return (
        [s.text.lower() for s in trait.samples if s.quality == 1.0],
        [s.text.lower() for s in trait.samples if s.quality == 0.0],
    )


def test_axes_are_named_by_phrases_never_url_fragments_or_stop_words(embedder) -> None:
    from core.engine.pole_phrases import URL_WORDS
    from core.engine.text_utils import STOP_WORDS

    samples = [Sample("x", t, 1.0) for t in REQUESTS + NEWS]
    first = discover(samples, embedder=embedder, effort="low")[0]
    spec = first.spec
    phrases = [p.strip() for label in (spec.positive_label, spec.negative_label) for p in label.split(",")]
    words = {w for p in phrases for w in p.split()}
    assert not words & (URL_WORDS | STOP_WORDS | {"wiki", "wikipedia", "example", "org"}), spec
    assert any(" " in p for p in phrases), spec  # a two-word phrase where one says it: "talk page"
    # Each pole label's phrases are frequent at its own end and rare at the other.
    pos, neg = _ends(first)
    for label, own, other in ((spec.positive_label, pos, neg), (spec.negative_label, neg, pos)):
        for phrase in label.split(", "):
            here, there = sum(phrase in t for t in own), sum(phrase in t for t in other)
            assert here >= 2 * max(1, there), (phrase, spec)
    # The description quotes the most typical text of each end.
    assert 'Typical of the positive end: "' in spec.description
    assert 'Typical of the negative end: "' in spec.description


def test_axes_of_real_mixed_corpora_are_never_named_by_filler_words(embedder) -> None:
    """Politeness requests and news sentences: an axis was named "new & said" (the real embedder) or "like"
    and "know" (this one): words every kind of text holds, naming nothing its ends differ in."""
    from benchmarks.quality import LOADERS
    from harness.datasets import find_datasets

    base = find_datasets()
    if base is None:
        pytest.fail("../shared/datasets is missing: this test reads the politeness and subjectivity pools")
    texts: list[str] = []
    for name in ("politeness", "subjectivity"):
        pool = LOADERS[name](base).pool_texts
        texts += [pool[i] for i in np.random.default_rng(0).choice(len(pool), size=300, replace=False)]
    fillers = {"said", "says", "new", "like", "know", "want", "far", "way", "right", "think", "make"}
    for trait in discover([Sample("mixed", t, 1.0) for t in texts], embedder=embedder, effort="low"):
        spec = trait.spec
        named = " ".join([spec.name, spec.positive_label, spec.negative_label]).replace("&", " ")
        assert not set(re.findall(r"\w+", named.lower())) & fillers, spec

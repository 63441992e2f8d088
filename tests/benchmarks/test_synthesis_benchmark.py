"""The synthesis benchmark's measure of how far a variant is from its seed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.synthesis_pool import FEW_WORDS, words_changed

_words = st.lists(st.sampled_from(["the", "staff", "were", "kind", "refund", "late", "very"]), max_size=12)


def test_a_filler_changes_few_words_a_real_variant_many() -> None:
    seed = "The staff were kind and the room was clean."
    assert words_changed(seed, "Honestly, the staff were kind and the room was clean!") == 1
    assert words_changed(seed, "the staff were KIND, and the room was clean") == 0
    assert words_changed(seed, "Lovely people at the desk, spotless rooms too.") > FEW_WORDS


@settings(max_examples=50, deadline=None)
@given(_words, _words)
def test_words_changed_counts_words_added_and_removed(a: list[str], b: list[str]) -> None:
    x, y = " ".join(a), " ".join(b)
    assert words_changed(x, x) == 0
    assert words_changed(x, y) == words_changed(y, x)
    assert abs(len(a) - len(b)) <= words_changed(x, y) <= len(a) + len(b)
    assert words_changed(x, f"{x} extra") == 1

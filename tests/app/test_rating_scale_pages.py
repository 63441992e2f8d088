"""A trait rated on a scale on the pages: the owner sets it on the Traits page, the Label page's keys 1..5
with their words each store a point, the Disagreements tab shows the spread of points and the Team page
each person's."""

from __future__ import annotations

import pytest

from app.labelling.agreement import points_spread, settle_choices, vote_label
from app.team.progress import points_used
from core.client import CastVote, Client, DisagreedText, Trait, TraitScale
from core.local import LocalService
from tests.app.apptest_util import no_exception, page, run_label_page
from tests.app.support import make_draft, new_handle
from tests.app.test_pages import POOL

NAMES = ["very casual", "casual", "neither", "formal", "very formal"]


@pytest.mark.usefixtures("app_env")
def test_the_label_page_rates_on_keys_1_to_5(service: LocalService, client: Client) -> None:
    handle = make_draft(client, new_handle(service, "scale"))
    (trait,) = client.set_scale(handle, "formality", TraitScale(points=5, names=NAMES))
    assert trait.scale is not None and trait.scale.names == NAMES
    client.import_pool(handle, POOL)
    before = {s.id for s in client.list_samples(handle)}
    at = page("label", handle)
    run_label_page(at)
    no_exception(at)
    labels = {b.key: b.label for b in at.button if (b.key or "").startswith("label_btn_")}
    assert [labels[f"label_btn_{k}"] for k in range(1, 6)] == [f"{k} · {n}" for k, n in enumerate(NAMES, 1)]
    assert "label_btn_unsure" not in labels  # this scale offers no Unsure key
    first = at.session_state["label_session"].current

    at.button(key="label_btn_4").click()
    at.run()
    no_exception(at)
    (new,) = [s for s in client.list_samples(handle) if s.id not in before]
    assert (new.text, new.quality, new.point) == (first["text"], 0.75, 4)
    assert any("`4` formal" in c.value for c in at.caption)  # the keys' line names the points


def test_the_disagreements_tab_shows_the_spread_of_points() -> None:
    trait = Trait.model_validate(
        {"key": "f", "name": "F", "positive_label": "formal", "negative_label": "casual",
         "scale": {"points": 5, "names": NAMES, "unsure": False}}
    )  # fmt: skip
    votes = [CastVote(annotator=a, quality=q) for a, q in (("a", 0.25), ("b", 0.75), ("c", 0.75), ("d", 0.6))]
    text = DisagreedText(text="t", votes=votes)
    assert points_spread(trait, text) == "2 ×1 · 4 ×2 · between points ×1"
    assert [vote_label(trait, v.quality) for v in votes] == ["2 · casual", "4 · formal", "4 · formal", "0.60"]
    assert settle_choices(trait) == [(k / 4, f"{k + 1} · {n}") for k, n in enumerate(NAMES)]
    # The Team page: how a person's labels spread over the points (none yet: a dash; a pole trait: blank).
    assert [points_used(p) for p in ({"4": 7, "10": 1, "1": 3}, {}, None)] == ["1: 3 · 4: 7 · 10: 1", "—", ""]


@pytest.mark.usefixtures("app_env")
def test_the_owner_sets_a_scale_on_the_traits_page(service: LocalService, client: Client) -> None:
    handle = make_draft(client, new_handle(service, "scale-set"))
    at = page("traits", handle)
    at.run()
    no_exception(at)
    at.selectbox(key="scale_kind_formality").select("5-point scale")
    at.run()
    for k, word in enumerate(NAMES, start=1):
        at.text_input(key=f"scale_formality_5_{k}").input(word)
    at.checkbox(key="scale_unsure_formality").check()
    at.button(key="scale_save").click()
    at.run()
    no_exception(at)
    (trait,) = client.list_traits(handle)
    assert trait.scale is not None
    assert (trait.scale.points, trait.scale.names, trait.scale.unsure) == (5, NAMES, True)
    # The stored 0/1 labels are the scale's end points now.
    assert {(s.quality, s.point) for s in client.list_samples(handle)} == {(0.0, 1), (1.0, 5)}
    assert "5-point scale" in at.dataframe[0].value["labelled with"].tolist()

"""A trait rated on a scale on the pages: the owner sets it on the Traits page, the Label page's keys 1..5
with their words each store a point and My labels changes a label to another point, the Disagreements tab
shows the spread of points and the Team page each person's."""

from __future__ import annotations

import pytest

from app.labelling.agreement import points_spread, settle_choices
from app.labelling.my_labels import vote_label
from app.samples.mapping import Mapping, map_rows, points_note
from app.team.progress import points_used
from core.client import CastVote, Client, DisagreedText, Trait, TraitScale
from core.local import LocalService
from core.tables import read_table
from tests.app.test_pages import POOL
from tests.support.app import make_draft, new_handle
from tests.support.apptest import no_exception, page, run_label_page, shown

NAMES = ["very casual", "casual", "neither", "formal", "very formal"]


@pytest.mark.usefixtures("app_env")
def test_the_label_page_rates_on_keys_1_to_5(local_service: LocalService, client: Client) -> None:
    handle = make_draft(client, new_handle(local_service, "scale"))
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

    # "My labels" shows the point and its word, with a key-like button per other point (its word on hover);
    # one click gives that point, stored as the label's point and quality.
    mine = [m for m in shown(at.markdown) if f"#{new.id:d} · " in m]
    assert len(mine) == 1 and "**4 · formal**" in mine[0], mine
    keys = {b.key: b for b in at.button if (b.key or "").startswith(f"my_label_point_sample_{new.id:d}_")}
    assert [(b.label, b.help) for b in keys.values()] == [
        (str(k), f"Change it to {k} · {NAMES[k - 1]}") for k in (1, 2, 3, 5)
    ]
    assert f"my_label_change_sample_{new.id:d}" not in {b.key for b in at.button}  # no pole button
    keys[f"my_label_point_sample_{new.id:d}_2"].click().run()
    no_exception(at)
    assert any("Changed your label" in x for x in shown(at.success))
    assert any(f"#{new.id:d} · " in m and "**2 · casual**" in m for m in shown(at.markdown))
    (changed,) = client.my_labels_page(handle, trait="formality", limit=1).items
    assert (changed.id, changed.point, changed.quality) == (new.id, 2, 0.25)
    (stored,) = [s for s in client.list_samples(handle) if s.id == new.id]
    assert (stored.point, stored.quality) == (2, 0.25)


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
def test_the_owner_sets_a_scale_on_the_traits_page(local_service: LocalService, client: Client) -> None:
    handle = make_draft(client, new_handle(local_service, "scale-set"))
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


def test_raters_1_to_5_ratings_imported_onto_a_5_point_trait_keep_their_points(
    local_service: LocalService, client: Client
) -> None:
    """Three raters' 1-5 ratings through the import's own mapping (scale 1..5) onto a 5-point trait: every
    vote is stored as its rating's point, and the import says so; a 1-7 file says it does not fit."""
    handle = make_draft(client, new_handle(local_service, "scale-import"))
    client.set_scale(handle, "formality", {"points": 5})
    raters = "Request,R1,R2,R3\nKindly advise.,5,4,5\nsup,1,2,1\nNoted with thanks.,4,3,\n"
    table = read_table("ratings.csv", raters.encode())
    columns = (("R1", None), ("R2", None), ("R3", None))
    mapping = Mapping("Request", "R1", trait="formality", rule="scale", low=1, high=5, raters=columns)
    mapped = map_rows(table, mapping)
    client.add_samples(handle, [{**s, "provenance": "imported"} for s in mapped.samples])
    stored = {
        (s.text, s.annotator): s.point for s in client.list_samples(handle) if s.provenance == "imported"
    }
    assert stored == {
        ("Kindly advise.", "R1"): 5, ("Kindly advise.", "R2"): 4, ("Kindly advise.", "R3"): 5,
        ("sup", "R1"): 1, ("sup", "R2"): 2, ("sup", "R3"): 1,
        ("Noted with thanks.", "R1"): 4, ("Noted with thanks.", "R2"): 3,
    }  # fmt: skip
    assert (
        points_note(5, 1, 5) == "Whole ratings 1..5 land on the trait's 5 points: each is kept as its point."
    )
    assert "stored as qualities" in (points_note(5, 1, 7) or "") and points_note(None, 1, 5) is None

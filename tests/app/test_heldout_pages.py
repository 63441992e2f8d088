"""The evaluation set is held out, as the workbench says it (AppTest against the real local service): the
Samples import counts the rows that are evaluation texts, the pool import the texts it left out, the
evaluation set's import the pool texts and samples it overlaps, and the Versions page the evaluation texts a
version trained on."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from app.shell.reads import invalidate
from core.client import Client
from core.local import LocalService
from tests.support.app import CASUAL, FORMAL, make_draft, new_handle
from tests.support.apptest import by_label, no_exception, page, texts

pytestmark = pytest.mark.usefixtures("app_env")

HELD = [
    ("To whom it may concern: the board has approved the revised policy.", 1.0),
    ("The undersigned hereby certifies that the information above is accurate.", 1.0),
    ("lol whatever, see u around", 0.0),
    ("meh cant be bothered today haha", 0.0),
]


def _items(labelled: list[tuple[str, float]]) -> list[dict[str, object]]:
    return [{"trait": "formality", "text": t, "quality": q} for t, q in labelled]


def test_samples_import_says_how_many_rows_are_evaluation_texts(client: Client, draft: str) -> None:
    client.add_evaluation_items(draft, _items(HELD[:2]))
    rows = [{"trait": "formality", "text": t, "quality": q} for t, q in HELD[:2]]
    rows.append({"trait": "formality", "text": "With kind regards, the secretariat.", "quality": 1.0})
    at = page("samples", draft)
    at.run()
    data = "\n".join(json.dumps(r) for r in rows).encode()
    at.file_uploader(key="samples_upload").set_value(("rows.jsonl", data, "application/jsonl"))
    at.run()
    at.button(key="samples_import").click()
    at.run()
    no_exception(at)
    assert any("Stored 3 of 3 rows." in t for t in texts(at.success))
    expected = "2 of these texts are in the evaluation set: they are stored, but no training takes them in."
    assert expected in texts(at.warning), texts(at.warning)


def test_pool_import_says_how_many_texts_were_left_out(client: Client, draft: str) -> None:
    client.add_evaluation_items(draft, _items(HELD[:1]))
    at = page("label", draft)
    at.run()
    lines = ["A text for the pool, first.", HELD[0][0], "A text for the pool, second."]
    at.file_uploader(key="pool_upload").set_value(("pool.txt", "\n".join(lines).encode(), "text/plain"))
    at.run()
    at.button(key="pool_import").click()
    at.run()
    no_exception(at)
    expected = (
        "Added 2 of the file's 3 texts to the pool. 1 was left out: it is in the evaluation set, which "
        "stays held out."
    )
    assert expected in texts(at.warning), texts(at.warning)  # a text refused is never a green success
    assert texts(at.success) == []
    assert {p.text for p in client.list_pool(draft)} == {lines[0], lines[2]}


def test_versions_page_says_which_evaluation_texts_the_version_trained_on(
    local_service: LocalService, client: Client
) -> None:
    """The Versions page counts the evaluation texts a version trained on, and calls a text one rater gave
    twice one text from two items, not two votes. A newer version shows the earlier one's threshold against
    its own scores."""
    handle = make_draft(client, new_handle(local_service, "heldversions"))
    trained = [(FORMAL[0], 1.0), (FORMAL[1], 1.0), (CASUAL[0], 0.0)]  # training samples
    # One rater (the key) gives the last held text again, relabelled: one text, its latest label counted.
    again = [(HELD[-1][0], 0.25)]
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)  # before the set had its texts
    client.add_evaluation_items(handle, _items(HELD + trained + again))
    client.wait(handle, client.evaluate(handle, 1).run_id, timeout=120)
    at = page("versions", handle)
    at.run()
    no_exception(at)
    captions = texts(at.caption)
    assert "3 evaluation texts were in v1's training data and were left out." in captions, captions
    shown = [t.replace("\\", "") for t in texts(at.markdown)]  # as read: without markdown's escapes
    counted = f"{len(HELD)} texts (from {len(HELD) + 1} items: a text one rater gave again counts once)"
    assert any(f"v1 on {counted}" in t for t in shown), shown
    assert not any("votes)" in t for t in shown)  # one rater's rows are not several votes

    # On the same model (one training fewer): a new version starts without v1's threshold, as its scores
    # may sit elsewhere; the page reads v1's against v2's evaluation and sets v2's own for the same target.
    old = client.set_threshold(handle, 1, "formality", target="recall", value=0.9)
    client.wait(handle, client.train(handle, "low", reoptimize_params=True).run_id, timeout=120)
    client.wait(handle, client.evaluate(handle, 2).run_id, timeout=120)
    assert client.thresholds(handle, 2) == {}  # never reused silently
    invalidate(client.base_url)  # the test's client is not the workbench's: its writes bump no generation
    at = page("versions", handle)
    at.run()
    no_exception(at)
    said = f"v1's threshold {old.threshold:.3f} (recall ≥ 0.9) on v2's evaluation: "
    carried = [c for c in (t.replace("\\", "") for t in texts(at.caption)) if "v1's threshold" in c]
    assert len(carried) == 1 and said in carried[0], carried
    assert "the threshold meeting recall ≥ 0.9 on v2 is" in carried[0]
    at.button(key="thr_carry").click()
    at.run()
    no_exception(at)
    own = client.thresholds(handle, 2)["formality"]
    assert (own.target, own.value) == ("recall", 0.9)
    assert not [c for c in texts(at.caption) if "threshold 0" in c]  # v2 has its own now

    # The Score page says what each version's own threshold decides, beside the bar (whose colour only says
    # which pole is nearer): v1's, as stored, when v1 scores.
    at = page("score", handle)
    at.run()
    at.selectbox(key="score_version").set_value("v1")
    at.text_area(key="score_text").set_value(FORMAL[2])
    at.button(key="score_go").click()
    at.run()
    no_exception(at)
    (scored,) = at.session_state["score_result"][2].scores
    assert scored.threshold == old.threshold
    sign, outcome = ("≥", "formal") if scored.score >= old.threshold else ("<", "not formal")
    said = f"Decided by v1's thresholds: Formality {scored.score:.2f} {sign} {old.threshold:.3f}, {outcome}."
    assert said in texts(at.markdown), texts(at.markdown)


def _chart_titles(at: AppTest) -> list[str]:
    charts = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    return [c["layout"]["title"]["text"] for c in charts if "title" in c["layout"]]


def test_versions_chart_says_what_it_plots_and_any_version_can_be_tagged(
    local_service: LocalService, client: Client
) -> None:
    """The Versions chart says what it plots: each version's training ROC AUC, out of fold on its own samples
    and no comparison, until two versions were evaluated on the evaluation set, then their AUC there. A
    version other than the active one can be tagged."""
    handle = make_draft(client, new_handle(local_service, "chart"))
    client.add_evaluation_items(handle, _items(HELD))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    client.wait(handle, client.train(handle, "low", reoptimize_params=True).run_id, timeout=120)
    at = page("versions", handle)
    at.run()
    no_exception(at)
    training = "Training ROC AUC (out of fold, each version on its own samples): not a comparison"
    assert training in _chart_titles(at), _chart_titles(at)
    assert any("a rise can mean easier or cleaner samples" in c for c in texts(at.caption)), texts(at.caption)

    at.selectbox(key="tag_version_pick").set_value(1)  # v1, not the active v2
    by_label(at.text_input, "Tag name").set_value("first-try")
    by_label(at.button, "Tag").click()
    at.run()
    no_exception(at)
    assert "Tagged v1 as `first-try`." in texts(at.success), texts(at.success)
    assert client.get_version(handle, "first-try").version_no == 1
    assert client.get_model(handle).version_no == 2  # the active version did not move

    for version in (1, 2):
        client.wait(handle, client.evaluate(handle, version).run_id, timeout=120)
    invalidate(client.base_url)  # the test's client is not the workbench's: its writes bump no generation
    at = page("versions", handle)
    at.run()
    no_exception(at)
    held_out = "ROC AUC on the evaluation set (held-out items): higher is better"
    assert held_out in _chart_titles(at) and training not in _chart_titles(at), _chart_titles(at)


def test_versions_evaluate_appears_right_after_adding_items(
    local_service: LocalService, client: Client
) -> None:
    trained = make_draft(
        client, new_handle(local_service, "evalset")
    )  # its own: the shared one stays without a set
    client.wait(trained, client.train(trained, "low").run_id, timeout=120)
    csv = "trait,text,quality\n" + "".join(
        f'formality,"{t}",{q}\n' for ts, q in ((FORMAL[:3], 1), (CASUAL[:3], 0)) for t in ts
    )
    client.import_pool(trained, [*FORMAL[:2], "A text of the pool alone."])  # before the set had them
    at = page("versions", trained)
    at.run()
    assert not [b for b in at.button if b.label == "Evaluate"]
    at.file_uploader[0].set_value(("items.csv", csv.encode(), "text/csv"))
    at.run()
    by_label(at.button, "Add to the evaluation set").click()
    at.run()
    no_exception(at)
    assert client.evaluation_set(trained).total == 6
    assert any("Added 6 items" in s for s in texts(at.success)), texts(at.success)
    assert [b for b in at.button if b.label == "Evaluate"]  # on this very run, not after another one
    # Texts of the pool and the samples: said now, when they are added, with what happens to them.
    said = (
        "Of this file's texts, 2 are texts of the unlabelled pool: left out of labelling from now on (the "
        "Label page no longer shows them, and a label of one is refused); 6 are texts of the samples: kept, "
        "but no training takes them in from now on"
    )
    assert any(w.startswith(said) for w in texts(at.warning)), texts(at.warning)
    assert [p.text for p in client.list_pool(trained)] == ["A text of the pool alone."]


def test_label_page_says_the_pool_left_is_the_evaluation_set(client: Client, draft: str) -> None:
    """The pool first, then the same texts as the evaluation set: nothing is left to label, and the page says
    why rather than "0 of 2" or an empty pool."""
    pool = [t for t, _ in HELD[:2]]
    client.import_pool(draft, pool)
    client.add_evaluation_items(draft, _items(HELD[:2]))
    at = page("label", draft)
    at.run()
    no_exception(at)
    said = "All 2 texts of the pool are in the evaluation set, which is never labelled nor trained on"
    assert any(t.startswith(said) for t in texts(at.info)), texts(at.info)
    assert any("Pool (0 texts to label; 2 more in the evaluation set" in e.label for e in at.expander)
    client.clear_pool(draft)  # the shared draft's pool, as the other tests found it

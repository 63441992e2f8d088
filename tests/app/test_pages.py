"""Each page script driven with AppTest against the real local service."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1.element_tree import Element

from core.client import Client
from core.local import LocalService
from tests.support.app import new_handle
from tests.support.apptest import (
    by_label,
    forget_sidebar_picks,
    main_app,
    no_exception,
    page,
    plain,
    run_label_page,
    shown,
    texts,
)

pytestmark = pytest.mark.usefixtures("app_env")


def test_main_shows_backend_namespace_and_picker(local_service: LocalService, trained: str) -> None:
    at = main_app()
    at.query_params["model"] = trained
    at.run()
    no_exception(at)
    captions = " ".join(shown(at.sidebar.caption))
    assert f"remote {local_service.url}" in captions
    assert f"Namespace: `{local_service.namespace}`" in captions
    picker = at.sidebar.selectbox(key="model_picker")
    assert trained in picker.options
    assert picker.value == trained  # opened from ?model=
    assert at.session_state["model"] == trained


def test_first_visit_opens_the_demo_model(local_service: LocalService, client: Client, trained: str) -> None:
    from app.main import default_handle

    at = main_app()
    at.run()
    no_exception(at)
    picker = at.sidebar.selectbox(key="model_picker")
    assert picker.value == at.session_state["model"] == picker.options[0]  # something is open
    demo = f"{local_service.namespace}.support-replies"
    assert default_handle([trained, demo], local_service.namespace) == demo  # the tagged demo model first
    assert default_handle([trained], local_service.namespace) == trained
    assert default_handle([], local_service.namespace) is None


def test_opening_the_root_url_again_keeps_the_model_picked(local_service: LocalService, draft: str) -> None:
    """A model picked in the sidebar stays open when the root URL is opened again (a new session, no
    ?model=), rather than the demo model a first visit opens; a ?model= link still opens its own model."""
    from app.shell.reads import invalidate

    forget_sidebar_picks()
    invalidate(local_service.url)  # the draft was made by the test's client: list it in the sidebar
    try:
        at = main_app()
        at.run()
        first = at.sidebar.selectbox(key="model_picker").value
        assert first != draft  # a first visit opened the demo (or first) model
        at.sidebar.selectbox(key="model_picker").set_value(draft).run()
        no_exception(at)
        again = main_app()  # the root URL opened again: a new browser session
        again.run()
        no_exception(again)
        assert again.sidebar.selectbox(key="model_picker").value == draft == again.session_state["model"]
        linked = main_app()
        linked.query_params["model"] = first
        linked.run()
        assert linked.sidebar.selectbox(key="model_picker").value == first
    finally:
        forget_sidebar_picks()  # later tests start from a first visit


FIRST_PAGE = 25  # the Models page's default "Per page"


def test_models_lists_and_creates(local_service: LocalService, client: Client, trained: str) -> None:
    # More models than one page holds, whichever tests ran before: the new one lands past the first page.
    listed = [m.handle for m in client.list_models(local_service.namespace)]
    for _ in range(max(0, FIRST_PAGE + 1 - len(listed))):
        client.create_model(new_handle(local_service, "filler"))
    at = page("models")
    at.run()
    no_exception(at)
    first_page = client.list_models_page(local_service.namespace, limit=FIRST_PAGE).items
    assert at.selectbox(key="models_open_pick").options == [m.handle for m in first_page]
    assert trained in [m.handle for m in client.list_models(local_service.namespace)]
    handle = new_handle(local_service, "created")
    by_label(at.text_input, "Handle").set_value(handle)
    by_label(at.text_area, "Description").set_value("made by the models page")
    by_label(at.number_input, "Max depth").set_value(3)
    by_label(at.text_area, "Upstream sources").set_value("https://example.org/data | Example | CC-BY")
    by_label(at.button, "Create model").click()
    at.run()
    no_exception(at)
    model = client.get_model(handle)
    assert model.state == "draft"
    assert model.description == "made by the models page"
    assert model.max_depth == 3
    assert model.upstream_sources == [
        {"url": "https://example.org/data", "title": "Example", "license": "CC-BY"}
    ]
    assert at.session_state["model"] == handle
    assert any("Created" in t for t in texts(at.success))
    at.run()
    # The Open box follows the new pick, though the model is not on the page the table shows.
    assert handle not in [m.handle for m in first_page]
    assert at.selectbox(key="models_open_pick").value == handle


def test_models_create_lands_in_the_run_that_stops_following_busy_models(
    local_service: LocalService, client: Client
) -> None:
    """The list follows busy models with a timer; when it stopped, it reran the page, which cut off a Create
    click of that very run, and later the "Created" message of the run that showed it (browser journey)."""
    at = page("models")
    at.run()
    at.session_state["models_polling"] = True  # as the list left it while a demo model trained
    handle = new_handle(local_service, "while-following")
    by_label(at.text_input, "Handle").set_value(handle)
    by_label(at.button, "Create model").click()
    at.run()
    no_exception(at)
    assert client.get_model(handle).state == "draft"
    assert any("Created" in t for t in texts(at.success))  # its message stays
    assert at.session_state["models_polling"] is False  # and the list stopped following


def test_models_create_offers_e5_small(local_service: LocalService, client: Client) -> None:
    from core.embedders.e5 import E5_ID

    at = page("models")
    at.run()
    handle = new_handle(local_service, "multilingual")
    by_label(at.text_input, "Handle").set_value(handle)
    embedder = by_label(at.selectbox, "Embedder")
    assert "e5-small" in embedder.options
    embedder.set_value("e5-small")
    by_label(at.button, "Create model").click()
    at.run()
    no_exception(at)
    assert client.get_model(handle).embedder == E5_ID  # recorded at create; nothing is embedded yet


def test_models_create_checks_namespace_before_sending(client: Client) -> None:
    at = page("models")
    at.run()
    by_label(at.text_input, "Handle").set_value("someone-else.model")
    by_label(at.button, "Create model").click()
    at.run()
    no_exception(at)
    assert any("not one this key owns" in t for t in texts(at.error))
    assert all(m.handle != "someone-else.model" for m in client.list_models(namespace="local"))


def test_models_edit_auto_prune_zdr_and_archive(client: Client, draft: str) -> None:
    at = page("models", draft)
    at.run()
    by_label(at.checkbox, "Override the auto-prune policy").check()
    by_label(at.number_input, "Keep unnamed versions").set_value(7)
    by_label(at.button, "Save").click()
    at.run()
    no_exception(at)
    assert client.get_model(draft).auto_prune == {"keep_unnamed": 7, "keep_first_of_month": True}

    # Zero data retention needs the confirmation that explains the purge.
    assert any("deletes this model's samples" in t for t in texts(at.warning))
    assert by_label(at.button, "Turn zero data retention on").disabled
    at.checkbox(key="zdr_confirm").check()
    at.run()
    by_label(at.button, "Turn zero data retention on").click()
    at.run()
    no_exception(at)
    assert client.get_model(draft).zero_data_retention is True
    assert list(client.list_samples(draft)) == []

    at.checkbox(key="archive_confirm").check()
    at.run()
    by_label(at.button, "Archive model").click()
    at.run()
    no_exception(at)
    assert client.get_model(draft).state == "archived"


def test_models_paging_and_filters(local_service: LocalService, client: Client, trained: str) -> None:
    at = page("models")
    at.run()
    # The listing answers the active version's tags only: a model whose v1 is tagged (v2 active) showed none.
    by_label(at.selectbox, "Per page").set_value(100).run()
    no_exception(at)
    frame = at.dataframe[0].value
    assert frame[frame["handle"] == trained]["tags"].tolist() == ["first (v1)"]

    at.selectbox(key="models_limit").set_value(10)
    at.selectbox(key="models_state").set_value("ready")
    at.run()
    no_exception(at)
    options = at.selectbox(key="models_open_pick").options
    assert options == [
        m.handle for m in client.list_models_page(local_service.namespace, "ready", limit=10).items
    ]
    assert all(client.get_model(h).state == "ready" for h in options)
    assert trained in [m.handle for m in client.list_models(local_service.namespace, "ready")]


def test_traits_add_delete_and_frozen_when_ready(client: Client, draft: str, trained: str) -> None:
    at = page("traits", draft)
    at.run()
    no_exception(at)
    by_label(at.text_input, "Name").set_value("Energy")
    by_label(at.text_input, "Negative pole label").set_value("calm")
    by_label(at.text_input, "Positive pole label").set_value("energetic")
    by_label(at.button, "Add trait").click()
    at.run()
    no_exception(at)
    assert [t.key for t in client.list_traits(draft)] == ["formality", "energy"]

    at.multiselect(key="traits_delete_pick").select("energy")
    at.run()
    at.checkbox(key="traits_delete_sure").check()
    at.run()
    at.button(key="traits_delete").click()
    at.run()
    no_exception(at)
    assert [t.key for t in client.list_traits(draft)] == ["formality"]

    ready = page("traits", trained)
    ready.run()
    no_exception(ready)
    assert any("frozen" in t for t in texts(ready.info))
    assert not [b for b in ready.button if b.label == "Add trait"]


def test_samples_browse_add_and_filter(client: Client, draft: str) -> None:
    at = page("samples", draft)
    at.run()
    no_exception(at)
    by_label(at.text_area, "Text").set_value("Respectfully yours, the board of directors.")
    by_label(at.button, "Add sample").click()
    at.run()
    no_exception(at)
    stored = [s.text for s in client.list_samples(draft)]
    assert "Respectfully yours, the board of directors." in stored
    assert any("Added 1 sample" in t for t in texts(at.success))

    at.selectbox(key="samples_provenance").set_value("synthesized")
    at.run()
    no_exception(at)
    assert at.session_state["samples_pager"]["filters"] == (draft, None, "synthesized", 100)


def test_adding_a_too_long_sample_names_the_limit(client: Client, draft: str) -> None:
    before = len(list(client.list_samples(draft)))
    at = page("samples", draft)
    at.run()
    by_label(at.text_area, "Text").set_value("word " * 5_000 + "x" * 1_000)
    by_label(at.button, "Add sample").click()
    at.run()
    no_exception(at)
    errors = shown(at.error)  # the service's message, as read
    assert any("text has 26,000 characters; the limit is 20,000" in e for e in errors), errors
    plain(errors)
    assert len(list(client.list_samples(draft))) == before


def test_training_starts_a_run_and_shows_metrics(client: Client, draft: str) -> None:
    from app.shell.reads import invalidate

    at = page("training", draft)
    at.run()
    no_exception(at)
    at.select_slider(key="train_effort").set_value("low")
    at.button(key="train_go").click()
    at.run()
    no_exception(at)
    model = client.wait(draft, timeout=120)
    assert model.state == "ready" and model.version_no == 1
    at.run()
    no_exception(at)
    assert any("Per-trait metrics of the active version v1" in str(h.value) for h in at.subheader)
    assert any("out-of-fold" in c for c in texts(at.caption)), texts(at.caption)
    # The run ended while no poll watched it (AppTest runs no timers): the page still says how it ended.
    watched = [c for c in texts(at.caption) if c.startswith("Progress watched: ")]
    assert len(watched) == 1 and watched[0].endswith("done 100%"), texts(at.caption)
    assert at.checkbox(key="train_reopt").disabled is False
    metrics = next(d.value for d in at.dataframe if "roc_auc" in d.value.columns)
    assert list(metrics["method"]) == ["samples + label prior"] * len(metrics)

    # Labels given since wait for the next version: one button, named for what it does, trains them in.
    client.score(draft, "Kindly find the signed contract attached.", feedback={"formality": 1.0})
    invalidate(client.base_url)  # the test's client is not the workbench's: its write bumps no generation
    at.run()
    no_exception(at)
    train = at.button(key="train_go")
    assert train.label == "Train the waiting label" and not train.disabled
    train.click()
    at.run()
    no_exception(at)
    model = client.wait(draft, timeout=120)
    assert (model.state, model.version_no, model.buffered_feedback) == ("ready", 2, 0)
    at.run()
    assert at.button(key="train_go").label == "Train" and at.button(key="train_go").disabled


def test_versions_tag_untag_compare(client: Client, trained: str) -> None:
    at = page("versions", trained)
    at.run()
    no_exception(at)
    by_label(at.text_input, "Tag name").set_value("prod")
    by_label(at.button, "Tag").click()
    at.run()
    no_exception(at)
    assert "prod" in client.get_version(trained, "v2").tags
    # Each version's own calibration, in view before the long embedder words; a trait whose poles never
    # overlap out of fold has no slope, never the number where the fit stopped.
    table = at.dataframe[0].value
    assert list(table.columns).index("calibration (out of fold)") < list(table.columns).index("trained on")
    v2 = client.get_version(trained, "v2").trait_metrics
    apart = sorted(k for k, m in v2.items() if m.get("roc_auc") == 1.0)
    cell = str(table.set_index("version").loc["v2", "calibration (out of fold)"])
    assert cell.startswith("ECE ") and bool(apart) == ("no slope" in cell), (cell, apart)

    at.selectbox(key="cmp_a").set_value(1)  # v1
    at.selectbox(key="cmp_b").set_value(0)  # v2
    at.button(key="cmp_go").click()
    at.run()
    no_exception(at)
    result = at.session_state["cmp_result"]
    assert (result["a"], result["b"]) == ("v1", "v2")
    assert set(result["probe"]["trait"]) == {"formality", "sentiment"}
    assert result["probe"]["A"].between(0, 1).all() and result["probe"]["B"].between(0, 1).all()
    metrics = next(d.value for d in at.dataframe if "se" in d.value.columns)
    shown = set(metrics["se"])  # every cell a reading: ±0.0xx, or — for metrics without a standard error
    assert "—" in shown and all(v == "—" or v.startswith("±") for v in shown), shown

    by_label(at.selectbox, "Remove a tag").set_value("prod")
    by_label(at.button, "Remove tag").click()
    at.run()
    no_exception(at)
    assert "prod" not in client.get_version(trained, "v2").tags


EVAL_FORMAL = [
    "Kindly let us know whether the revised schedule is acceptable to your committee.",
    "We would be most grateful for your assistance in this matter.",
    "Please accept our apologies for any inconvenience this may have caused.",
    "The board respectfully requests a written response by the end of the month.",
]
EVAL_CASUAL = [
    "lol ok see u there, bring snacks",
    "nah thats way too much work haha",
    "yo did u see that game last nite",
    "cool cool, text me when ur here",
]


def test_versions_explains_the_calibration_error_on_graded_labels(
    local_service: LocalService, client: Client
) -> None:
    """On 0/1 labels the evaluation shows its calibration error as it is; on graded ones a note beside it
    says it is measured against graded qualities, so larger by construction, and what it means."""
    from tests.support.app import make_draft

    handle = make_draft(client, new_handle(local_service, "graded-eval"))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)

    def evaluated(graded: dict[str, float]) -> tuple[list[str], float]:
        client.clear_evaluation_set(handle)
        labels = {t: 1.0 for t in EVAL_FORMAL} | {t: 0.0 for t in EVAL_CASUAL} | graded
        client.add_evaluation_items(
            handle, [{"trait": "formality", "text": t, "quality": q} for t, q in labels.items()]
        )
        client.wait(handle, client.evaluate(handle, 1).run_id, timeout=120)
        error = client.get_evaluation(handle, 1).traits["formality"].calibration_error
        assert error is not None
        at = page("versions", handle)
        at.run()
        no_exception(at)
        return [c for c in texts(at.caption) if "Calibration error on graded labels" in c], error.value

    notes, _ = evaluated({})
    assert notes == []
    notes, error = evaluated({EVAL_FORMAL[0]: 0.7, EVAL_FORMAL[1]: 0.8, EVAL_CASUAL[0]: 0.3})
    assert len(notes) == 1 and f"(formality {error:.2f})" in notes[0]
    assert "there by construction" in notes[0] and "does not mean the scores are off" in notes[0]


def test_versions_refuses_an_empty_tag_and_shows_the_service_s_errors(client: Client, trained: str) -> None:
    before = sorted(client.get_version(trained, "v2").tags)
    at = page("versions", trained)
    at.run()
    by_label(at.text_input, "Tag name").set_value("   ")
    by_label(at.button, "Tag").click()
    at.run()
    no_exception(at)
    assert not at.error, texts(at.error)
    assert any("Enter a tag name" in w for w in texts(at.warning)), texts(at.warning)
    assert sorted(client.get_version(trained, "v2").tags) == before

    # The service's refusal shows its message and request id.
    by_label(at.text_input, "Tag name").set_value("v9")  # vN tags are refused
    by_label(at.button, "Tag").click()
    at.run()
    no_exception(at)
    errors = texts(at.error)
    assert any("invalid_tag" in e and "request id `req_" in e for e in errors), errors
    assert sorted(client.get_version(trained, "v2").tags) == before


def test_score_bars_text_view_and_explanation(trained: str) -> None:
    at = page("score", trained)
    at.run()
    no_exception(at)
    at.text_area(key="score_text").set_value("Dear colleague, kindly find the report enclosed.")
    at.checkbox(key="score_explain").check()
    at.button(key="score_go").click()
    at.run()
    no_exception(at)
    _, _, result, plain = at.session_state["score_result"]
    assert {s.trait for s in result.scores} == {"formality", "sentiment"}
    # The bars the page drew: one a trait, named for it, as long as its score.
    (chart,) = (c for c in at.get("plotly_chart") if "score_chart" in c.proto.id)
    (bars,) = json.loads(chart.proto.spec)["data"][:1]
    assert bars["type"] == "bar" and bars["orientation"] == "h"
    drawn = {name: x for x, (name, _negative, _positive) in zip(bars["x"], bars["customdata"], strict=True)}
    assert drawn == pytest.approx({s.name: s.score for s in result.scores})
    # Beside the bars, what a score is, in the first trait's pole labels: how sure, not how much.
    first = result.scores[0]
    (meaning,) = (t for t in texts(at.caption) if t.startswith("A score is how sure the model is"))
    assert f"almost certain the text is {first.positive_label} rather than {first.negative_label}" in meaning
    assert f"not that it is very {first.positive_label}" in meaning
    # The text/plain view: a bar of 20 cells a trait, as many filled as its score, and the score itself.
    for s in result.scores:
        (line,) = (row for row in plain.splitlines() if row.endswith(f"  {s.name}"))
        filled = round(s.score * 20)
        assert f"[{'#' * filled}{'.' * (20 - filled)}] " in line and f" {s.score:.2f}  " in line, line
    assert result.explanation
    assert at.selectbox(key="score_explain_trait").options
    # The highlighted text says what its colours mean, in the shown trait's own pole labels.
    negative, positive = result.labels()[at.selectbox(key="score_explain_trait").value]
    shown = [h.value for h in at.html if "too small to matter" in h.value]
    assert len(shown) == 1 and f"towards “{positive}”" in shown[0] and f"towards “{negative}”" in shown[0]


def test_score_compares_two_texts_and_states_the_20000_character_limit(trained: str) -> None:
    at = page("score", trained)
    at.run()
    at.text_area(key="cmp_text_a").set_value("hey lol see ya dude")
    at.text_area(key="cmp_text_b").set_value("Dear colleague, we sincerely appreciate your cooperation.")
    at.button(key="cmp_texts_go").click()
    at.run()
    no_exception(at)
    cmp = at.session_state["cmp_texts"][1]
    assert cmp.deltas()["formality"] > 0

    for length in (20_001, 35_000):  # 35,000 was past the service's untrimmed bound: "at most 30000"
        at.text_area(key="score_text").set_value("x" * length)
        at.button(key="score_go").click()
        at.run()
        no_exception(at)
        errors = shown(at.error)  # the service's message, as read
        assert any(
            f"Text has {length:,} characters; the limit is 20,000." in e and "Shorten the text" in e
            for e in errors
        ), errors
        plain(errors)
    at.text_area(key="cmp_text_a").set_value("   ")
    at.text_area(key="cmp_text_b").set_value("Dear colleague, kindly review the report.")
    at.button(key="cmp_texts_go").click()
    at.run()
    errors = shown(at.error)  # the service's message, as read
    assert any("Text is empty." in e and "Type or paste a text" in e for e in errors), errors
    plain(errors)


def test_score_local_preview_of_a_draft(draft: str) -> None:
    at = page("score", draft)
    at.run()
    no_exception(at)
    assert at.button(key="score_go").disabled  # no version yet
    at.text_area(key="preview_text").set_value("We sincerely appreciate your kind cooperation.")
    at.button(key="preview_go").click()
    at.run()
    no_exception(at)
    _, scores, _, skipped, _ = at.session_state["preview_out"]
    assert skipped == []
    assert scores["formality"] > 0.5


def test_score_preview_includes_a_trait_without_samples_zero_shot(client: Client, draft: str) -> None:
    client.add_traits(draft, [{"name": "Mood", "positive_label": "cheerful", "negative_label": "gloomy"}])
    at = page("score", draft)
    at.run()
    at.text_area(key="preview_text").set_value("What a cheerful, sunny morning!")
    at.button(key="preview_go").click()
    at.run()
    no_exception(at)
    _, scores, _, skipped, _ = at.session_state["preview_out"]
    assert skipped == [] and 0.0 < scores["mood"] < 1.0 and "formality" in scores


def test_demo_opens_model_and_text_from_query_params_and_presets(trained: str) -> None:
    at = page("demo", None, model=trained, text="Dear colleague, kindly review the document.")
    at.run()
    no_exception(at)
    assert at.session_state["model"] == trained
    assert at.session_state["demo_text"] == "Dear colleague, kindly review the document."
    assert at.get("plotly_chart"), "the bars are drawn"
    share = " ".join(str(c.value) for c in at.code)
    assert f"model={trained}" in share and "text=Dear+colleague" in share
    # A preset puts its text in the box and in the link.
    at.button(key="preset_0").click()
    at.run()
    no_exception(at)
    assert at.session_state["demo_text"] != "Dear colleague, kindly review the document."
    assert at.session_state["demo_text"] and at.session_state["demo_rev"] >= 1
    assert at.query_params["text"] == at.session_state["demo_text"]


def test_demo_examples_show_both_poles(local_service: LocalService, client: Client) -> None:
    """The examples were the first sample of each pole: a file that begins with graded labels (0.6, 0.4)
    gave two lukewarm examples. Now each trait's most positive and most negative sample, which score on the
    poles."""
    from tests.support.app import CASUAL, FORMAL, FORMALITY, formality_samples

    handle = new_handle(local_service, "demo-poles")
    client.create_model(handle, description="examples on both poles")
    client.add_traits(handle, [FORMALITY])
    lukewarm = [
        {"trait": "formality", "text": "Thanks, that works for me.", "quality": 0.6},
        {"trait": "formality", "text": "ok that works i guess", "quality": 0.4},
        {"trait": "formality", "text": "Noted, talk soon.", "quality": 0.5},  # neutral: no pole's example
    ]
    client.import_samples(handle, lukewarm + formality_samples())
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)

    at = page("demo", handle)
    at.run()
    no_exception(at)
    keys = [b.key for b in at.button if b.key and b.key.startswith("preset_")]
    examples = []
    for key in keys:  # each example's button puts its whole text in the box
        at.button(key=key).click()
        at.run()
        no_exception(at)
        examples.append(at.session_state["demo_text"])
    # Of the 1.0s the one scored most formal, of the 0.0s the one scored most casual, then the hardest.
    scores = {t: client.score(handle, t).as_dict()["formality"] for t in FORMAL + CASUAL}
    assert examples[0] == max(FORMAL, key=scores.__getitem__)
    assert examples[1] == min(CASUAL, key=scores.__getitem__)
    assert scores[examples[0]] > 0.5 > scores[examples[1]]
    assert len(examples) == 3 and examples[2] not in examples[:2]


def test_demo_share_link_uses_the_public_address(trained: str, monkeypatch: pytest.MonkeyPatch) -> None:
    at = page("demo", trained, text="Kind regards, the board")
    at.run()
    no_exception(at)
    assert any("opens only on this computer" in c for c in texts(at.caption)), texts(at.caption)

    monkeypatch.setenv("SCORING_PUBLIC_URL", "https://workbench.example.com/")
    at = page("demo", trained, text="Kind regards, the board")
    at.run()
    no_exception(at)
    link = at.code[0].value
    assert link.startswith("https://workbench.example.com/demo?model="), link
    assert not any("opens only on this computer" in c for c in texts(at.caption))

    # The Settings page's address wins for this session.
    settings = page("settings")
    settings.run()
    by_label(settings.text_input, "Public address of the workbench").input("https://demo.example.org").run()
    assert settings.session_state["public_url"] == "https://demo.example.org"


def test_traits_discover_marks_intrinsic_traits(local_service: LocalService, client: Client) -> None:
    from tests.support.app import FORMALITY, SENTIMENT, make_draft

    handle = make_draft(client, new_handle(local_service, "discover"), (FORMALITY, SENTIMENT))
    at = page("traits", handle)
    at.run()
    at.select_slider(key="discover_effort").set_value("low")
    at.button(key="discover_go").click()
    at.run()
    no_exception(at)
    op = client.wait(handle, timeout=120).last_operation
    assert op is not None and op.kind == "discover" and op.status == "succeeded"
    at.run()
    no_exception(at)
    intrinsic = [t.key for t in client.list_traits(handle) if t.kind == "intrinsic"]
    assert intrinsic
    table = at.dataframe[0].value
    marked = set(table.loc[table["kind"] == "intrinsic (discovered)", "key"])
    assert marked == set(intrinsic)


def test_samples_synthesize_from_traits(client: Client, draft: str) -> None:
    before = len(list(client.list_samples(draft)))
    at = page("samples", draft)
    at.run()
    at.select_slider(key="synth_effort").set_value("low")
    at.button(key="synth_go").click()
    at.run()
    no_exception(at)
    op = client.wait(draft, timeout=120).last_operation
    assert op is not None and op.kind == "synthesize" and op.status == "succeeded", op
    synthesized = list(client.list_samples(draft, provenance="synthesized"))
    assert synthesized, "the run succeeded but added no sample"
    assert len(list(client.list_samples(draft))) == before + len(synthesized)
    # The provenance filter shows exactly the synthesized samples in the grid.
    at.selectbox(key="samples_provenance").set_value("synthesized")
    at.run()
    no_exception(at)
    grid = next(d.value for d in at.dataframe if "provenance" in d.value.columns)
    shown = grid.dropna(subset=["id"])  # the empty rows at the bottom take new samples
    assert set(shown["provenance"]) == {"synthesized"}
    assert sorted(shown["id"].astype(int)) == sorted(s.id for s in synthesized)


def test_settings_links_the_api_docs_refuses_an_unreachable_service_and_connects(
    local_service: LocalService,
) -> None:
    import httpx

    at = page("settings")
    at.run()
    no_exception(at)
    docs = f"{local_service.url}/docs"
    assert any(f"**API docs:** [{docs}]({docs})" in m for m in shown(at.markdown)), texts(at.markdown)
    answer = httpx.get(docs, timeout=30)  # the link opens the service's own page, with no key
    assert answer.status_code == 200 and "swagger-ui" in answer.text

    by_label(at.text_input, "Service URL").set_value("http://127.0.0.1:9/v1")
    by_label(at.text_input, "API key").set_value("sk_nope")
    by_label(at.button, "Connect").click()
    at.run()
    no_exception(at)
    assert at.error, "a readable error, not a traceback"
    assert "remote_backend" not in at.session_state

    by_label(at.text_input, "Service URL").set_value(local_service.url)
    by_label(at.text_input, "API key").set_value(local_service.api_key)
    by_label(at.button, "Connect").click()
    at.run()
    no_exception(at)
    assert at.session_state["remote_backend"] == {"url": local_service.url, "key": local_service.api_key}
    assert any(f"Connected to {local_service.url}" in t for t in texts(at.success))
    # The namespaces and scope come from the key itself (GET /keys/current), not from typing.
    assert any(
        f"**Namespaces:** `{local_service.namespace}`" in str(m.value) and "`authoring`" in str(m.value)
        for m in at.markdown
    )


def test_samples_quality_slider_names_the_traits_poles(local_service: LocalService, client: Client) -> None:
    from tests.support.app import FORMALITY, SENTIMENT, make_draft

    handle = make_draft(client, new_handle(local_service, "poles"), (FORMALITY, SENTIMENT))
    at = page("samples", handle)
    at.run()
    slider = at.select_slider(key="one_quality")
    assert slider.label == "Quality (0 · casual … 1 · formal)"
    assert slider.format_func(0.0) == "0 · casual" and slider.format_func(1.0) == "1 · formal"
    slider.set_value(0.0)
    by_label(at.text_area, "Text").set_value("yo whats up, send it over")
    by_label(at.button, "Add sample").click()
    at.run()
    no_exception(at)
    stored = {s.text: (s.trait, s.quality) for s in client.list_samples(handle)}
    assert stored["yo whats up, send it over"] == ("formality", 0.0)
    at.selectbox(key="one_trait").set_value("sentiment")
    at.run()
    assert at.select_slider(key="one_quality").label == "Quality (0 · negative … 1 · positive)"


def test_samples_import_jsonl_reports_rejected_rows(client: Client, draft: str) -> None:
    import json

    lines = [
        json.dumps({"trait": "formality", "text": "With kind regards, the committee.", "quality": 1}),
        json.dumps({"trait": "formality", "text": "missing its quality"}),
        json.dumps({"trait": "unknown", "text": "a trait the model does not have", "quality": 0}),
    ]
    at = page("samples", draft)
    at.run()
    at.file_uploader(key="samples_upload").set_value(
        ("more.jsonl", "\n".join(lines).encode(), "application/jsonl")
    )
    at.run()
    no_exception(at)
    at.button(key="samples_import").click()
    at.run()
    no_exception(at)
    assert any("Stored 1 of 3 rows." in t for t in texts(at.warning))
    assert any("2 row(s) rejected" in t for t in texts(at.warning))
    assert not at.success  # a partial import is a warning, not a success
    assert "With kind regards, the committee." in [s.text for s in client.list_samples(draft)]


def test_samples_export_offers_csv_and_jsonl(draft: str) -> None:
    at = page("samples", draft)
    at.run()
    at.button(key="samples_export").click()
    at.run()
    no_exception(at)
    assert len(at.session_state["samples_export_rows"]) == 24
    buttons = {b.label for b in at.get("download_button") if isinstance(b, Element)}
    assert buttons >= {"Download CSV", "Download JSONL"}


def test_score_batch_csv(trained: str) -> None:
    at = page("score", trained)
    at.run()
    at.file_uploader(key="batch_upload").set_value(("empty.csv", b"", "text/csv"))
    at.run()
    at.button(key="batch_go").click()
    at.run()
    no_exception(at)
    errors = texts(at.error)
    assert any("The file is empty" in e and "`text` column" in e for e in errors), errors
    assert not any("EmptyDataError" in e for e in errors)

    csv_bytes = b'text\n"Dear colleague, kindly review."\nlol see ya dude\nwhat a wonderful day\n'
    at.file_uploader(key="batch_upload").set_value(("texts.csv", csv_bytes, "text/csv"))
    at.run()
    at.button(key="batch_go").click()
    at.run()
    no_exception(at)
    out = at.session_state["batch_out"][1]
    assert list(out.columns) == ["text", "formality", "sentiment"]
    assert out["formality"].iloc[0] > out["formality"].iloc[1]
    assert out.notna().all().all()


def test_samples_flags_fix_and_remove_in_place(client: Client, draft: str) -> None:
    bad = "lol haha dude see ya, yo wanna chill"
    other = "omg dude this is so lit lol, gonna crash haha"
    ids = client.add_samples(draft, [{"trait": "formality", "text": t, "quality": 1.0} for t in (bad, other)])
    at = page("samples", draft)
    at.run()
    at.button(key="flags_go").click()
    at.run()
    no_exception(at)
    flagged = at.session_state["samples_flags"][2]
    assert set(ids) <= {f["id"] for f in flagged}
    assert any(f["flag"] == "likely mislabelled" and f["id"] == ids[0] for f in flagged), flagged
    at.button(key=f"flag_flip_{ids[0]}").click()
    at.run()
    no_exception(at)
    stored = {s.id: s for s in client.list_samples(draft)}
    assert stored[ids[0]].quality == 0.0 and stored[ids[0]].text == bad
    assert ids[0] not in {f["id"] for f in at.session_state["samples_flags"][2]}
    at.button(key=f"flag_remove_{ids[1]}").click()
    at.run()
    no_exception(at)
    assert ids[1] not in {s.id for s in client.list_samples(draft)}
    assert any(f"Removed sample #{ids[1]}" in t for t in texts(at.success))


def test_samples_flags_keep_and_edit(client: Client, draft: str) -> None:
    """Keep dismisses a flag and leaves the sample; Edit saves text and quality in place."""
    rude = ["yo dude lol whatever man, haha", "haha lol dude, u coming or what"]
    ids = client.add_samples(draft, [{"trait": "formality", "text": t, "quality": 1.0} for t in rude])
    at = page("samples", draft)
    at.run()
    at.button(key="flags_go").click()
    at.run()
    flagged = {f["id"] for f in at.session_state["samples_flags"][2]}
    assert set(ids) <= flagged
    at.button(key=f"flag_keep_{ids[0]}").click()
    at.run()
    no_exception(at)
    assert ids[0] not in {f["id"] for f in at.session_state["samples_flags"][2]}
    assert {s.id: s.quality for s in client.list_samples(draft)}[ids[0]] == 1.0  # kept as it was
    at.button(key=f"flag_edit_{ids[1]}").click()
    at.run()
    at.text_area(key=f"flag_text_{ids[1]}").set_value("Kindly let me know whether you will attend.")
    at.slider(key=f"flag_quality_{ids[1]}").set_value(1.0)
    at.button(key=f"FormSubmitter:flag_form_{ids[1]}-Save the sample").click()
    at.run()
    no_exception(at)
    stored = {s.id: s for s in client.list_samples(draft)}
    assert stored[ids[1]].text == "Kindly let me know whether you will attend."
    assert stored[ids[1]].quality == 1.0
    # A new check does not ask about the kept sample again.
    at.button(key="flags_go").click()
    at.run()
    assert ids[0] not in {f["id"] for f in at.session_state["samples_flags"][2]}


def test_samples_flags_show_a_text_labelled_both_ways_as_contested(client: Client, draft: str) -> None:
    """Two annotators' labels on the two poles of one text are two votes: the tab shows the text once,
    contested (not a likely mislabel), with both votes; only a reviewer's vote settles it, so only Keep is
    offered. (One annotator's two labels of a text are one vote, their latest: docs/api.md.)"""
    text = "lol haha dude see ya, yo wanna chill"
    first, second = client.add_samples(
        draft,
        [
            {"trait": "formality", "text": text, "quality": q, "annotator": rater}
            for q, rater in ((1.0, "rater-a"), (0.0, "rater-b"))
        ],
    )
    at = page("samples", draft)
    at.run()
    at.button(key="flags_go").click()
    at.run()
    no_exception(at)
    mine = [f for f in at.session_state["samples_flags"][2] if f["text"] == text]
    assert [(f["id"], f["flag"]) for f in mine] == [(first, "contested")]
    assert [v["sample_id"] for v in mine[0]["votes"]] == [first, second]
    drawn = [m for m in shown(at.markdown) if text in m]  # the text as read: escaped as user text is
    assert drawn and drawn[0].startswith(":orange[**contested**]")
    assert not at.button(key=f"flag_keep_{first}").disabled
    for action in ("flip", "edit", "remove"):
        assert at.button(key=f"flag_{action}_{first}").disabled


POOL = [
    "Dear Sir, we acknowledge receipt of your letter of the fifth.",
    "yo dude whats the plan tonight lol",
    "The minutes of the previous meeting were approved without amendment.",
    "haha thats so random, brb",
    "Please find enclosed the revised contract for your signature.",
    "nah cant make it, maybe next wk",
]


def test_label_page_labels_undoes_and_skips(client: Client, draft: str) -> None:
    client.import_pool(draft, POOL)
    before = {s.id for s in client.list_samples(draft)}
    at = page("label", draft)
    run_label_page(at)
    no_exception(at)
    session = at.session_state["label_session"]
    first = session.current
    assert first is not None and first["text"] in POOL and len(session.queue) == len(POOL)
    # Without team mode there is no Team page: nothing points there.
    assert not any("Team" in c.value for c in at.caption)

    at.button(key="label_btn_2").click()
    at.run()
    no_exception(at)
    added = {s.id: s for s in client.list_samples(draft)}
    new = [added[i] for i in set(added) - before]
    assert [(s.text, s.quality, s.trait) for s in new] == [(first["text"], 1.0, "formality")]
    session = at.session_state["label_session"]
    assert session.current["id"] != first["id"] and not session.curve  # a label reads no stored samples
    at.button(key="label_curve").click()  # the chart's point comes on demand
    at.run()
    no_exception(at)
    curve = at.session_state["label_session"].curve
    assert [n for n, _ in curve] == [1] and 0.0 <= curve[-1][1] <= 1.0

    at.button(key="label_btn_u").click()
    at.run()
    no_exception(at)
    assert {s.id for s in client.list_samples(draft)} == before
    assert at.session_state["label_session"].current["id"] == first["id"]

    at.button(key="label_btn_0").click()
    at.run()
    assert at.session_state["label_session"].current["id"] != first["id"]
    at.button(key="label_btn_ArrowLeft").click()
    at.run()
    assert at.session_state["label_session"].current["id"] == first["id"]
    at.button(key="label_btn_1").click()
    at.run()
    no_exception(at)
    labelled = [s for s in client.list_samples(draft) if s.id not in before]
    assert [(s.text, s.quality) for s in labelled] == [(first["text"], 0.0)]
    assert not any(f"#{first['id']} " in str(c.value) for c in at.caption)


def test_label_page_on_a_ready_model_counts_feedback_as_the_service_does(
    client: Client, trained: str
) -> None:
    client.import_pool(trained, POOL)
    at = page("label", trained)
    run_label_page(at)
    no_exception(at)
    before = client.get_model(trained).buffered_feedback
    assert before is not None
    for sent, key in enumerate(("label_btn_2", "label_btn_1"), start=1):
        at.button(key=key).click()
        at.run()
        no_exception(at)
        held = client.get_model(trained).buffered_feedback
        assert held == before + sent  # (the score answer's own count said 1 each time)
        message = at.session_state["label_session"].message
        assert f"{held} of 20 label(s) are waiting: at 20 the service retrains" in message  # the service's N


def test_label_page_undo_after_a_skip_withdraws_the_label_and_shows_its_text(
    client: Client, trained: str
) -> None:
    """Label, skip, `u`: the label (feedback to the trained model) is withdrawn from the service's buffer, and
    the text shown again is the one labelled, not the one skipped."""
    client.import_pool(trained, POOL)
    at = page("label", trained)
    run_label_page(at)
    no_exception(at)
    before = client.get_model(trained).buffered_feedback
    labelled = at.session_state["label_session"].current
    assert before is not None and labelled is not None

    at.button(key="label_btn_2").click()
    at.run()
    no_exception(at)
    assert client.get_model(trained).buffered_feedback == before + 1
    skipped = at.session_state["label_session"].current
    assert skipped is not None and skipped["id"] != labelled["id"]
    at.button(key="label_btn_0").click()
    at.run()
    assert at.session_state["label_session"].current["id"] not in (labelled["id"], skipped["id"])

    at.button(key="label_btn_u").click()
    at.run()
    no_exception(at)
    session = at.session_state["label_session"]
    assert session.message == "Undone: the feedback label was withdrawn before a training took it."
    assert client.get_model(trained).buffered_feedback == before
    assert labelled["text"] not in [f.text for f in client.list_feedback(trained)]
    assert session.current["id"] == labelled["id"] and not session.history


def test_samples_labels_on_a_ready_model_go_in_as_feedback(client: Client, trained: str) -> None:
    """A trained model's Samples page gives one figure for the labels waiting: the buffered feedback's, read
    when it is drawn; the note above it says what becomes of a label without a second, older figure. A
    label sent there goes in as feedback."""
    before = client.get_model(trained).buffered_feedback or 0
    at = page("samples", trained)
    at.run()
    no_exception(at)
    waiting = [e.label for e in at.expander if e.label.startswith("Buffered feedback")]
    assert waiting == [f"Buffered feedback: {before:,} of 20 label(s) until the model retrains"]
    assert any("goes in as **score feedback**" in t for t in texts(at.info)), texts(at.info)
    assert not any("are waiting" in t for t in texts([*at.info, *at.caption, *at.markdown]))
    by_label(at.text_area, "Text").set_value("Dear colleague, thank you kindly for the report.")
    by_label(at.button, "Send label").click()
    at.run()
    no_exception(at)
    assert (client.get_model(trained).buffered_feedback or 0) == before + 1
    assert any("Sent as feedback" in s and "retrains the model automatically" in s for s in texts(at.success))


def test_samples_zero_data_retention_says_why_it_cannot_learn(
    local_service: LocalService, client: Client
) -> None:
    from tests.support.app import make_draft

    handle = make_draft(client, new_handle(local_service, "zdr-ready"))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    client.update_model(handle, zero_data_retention=True)
    at = page("samples", handle)
    at.run()
    no_exception(at)
    assert any("zero data retention" in i and "cannot learn" in i for i in texts(at.info)), texts(at.info)
    assert not [b for b in at.button if b.label == "Send label"]


def test_a_page_waits_for_a_demo_model_still_loading(local_service: LocalService, client: Client) -> None:
    """A link to a demo model followed on a very first start, while the demo models load: the page says so
    and polls instead of answering a bare 404, and a model that never comes is still a 404."""
    from app.shell.backend import demo_load

    state = demo_load()
    handle = new_handle(local_service, "still-loading")
    was = state.started, state.done
    state.started, state.done = True, False  # what ensure_demo_models sets while its thread runs
    try:
        at = page("samples", handle)
        at.run()
        no_exception(at)
        assert any("does not exist yet: the demo models are still loading" in t for t in texts(at.info))
        assert not at.error
    finally:
        state.started, state.done = was
    at = page("samples", handle)
    at.run()
    assert not any("still loading" in t for t in texts(at.info))
    assert at.error  # not loading: the service's 404, as before

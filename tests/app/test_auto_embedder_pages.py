"""Models set to `auto` on the workbench's pages: the create form offers `auto` as what new models get, the
Training and Versions pages say which embedder a version kept and why embedders were not compared, and the
local engine embeds an `auto` model's texts with its serving version's embedder (AppTest, real local service
on the hashing embedder: nothing here embeds with a real embedder)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator

import pytest

from app.shell.engine_cache import model_embedder
from core.client import Client
from core.contract import AUTO_EMBEDDER
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.embedders.mpnet_source import installed
from core.local import LocalService
from tests.support.app import make_draft, new_handle
from tests.support.apptest import by_label, no_exception, page, shown, texts

pytestmark = pytest.mark.usefixtures("app_env")

SHORT = "short texts: a median of 5 words, under 8"
SAID = f"trained on e5-small-qint8 (mpnet-base not compared: {SHORT})"


def auto_on_e5(
    local_service: LocalService, client: Client, name: str, not_compared: str, because: str
) -> str:
    """An `auto` model whose version kept e5-small-qint8 without comparing it with `not_compared`, as
    training records it (`ChosenEmbedder.as_json`). Trained on hashing, then its records say e5: the pages
    read them and never embed, so the test loads no real embedder."""
    handle = make_draft(client, new_handle(local_service, name))
    client.wait(handle, client.train(handle, "low").run_id, timeout=120)
    choice = {
        "chosen": E5_QINT8_ID,
        "out_of_fold": [{"embedder": E5_QINT8_ID, "roc_auc": 0.8312, "roc_auc_se": 0.02}],
        "left_out_for_language": [],
        "not_compared": [not_compared],
        "not_compared_because": because,
    }
    with sqlite3.connect(local_service.data_dir / "scoring.sqlite", timeout=30) as db:
        (model_id,) = db.execute("SELECT id FROM models WHERE handle = ?", (handle,)).fetchone()
        (metrics,) = db.execute("SELECT metrics FROM versions WHERE model_id = ?", (model_id,)).fetchone()
        recorded = {**json.loads(metrics), "embedder": E5_QINT8_ID, "embedder_choice": choice}
        db.execute("UPDATE versions SET metrics = ? WHERE model_id = ?", (json.dumps(recorded), model_id))
        db.execute("UPDATE models SET embedder = ? WHERE id = ?", (AUTO_EMBEDDER, model_id))
    db.close()
    return handle


@pytest.fixture(scope="module")
def kept_without_comparing(local_service: LocalService, client: Client) -> Iterator[str]:
    """An `auto` model whose version kept e5-small-qint8 without comparing (short texts)."""
    yield auto_on_e5(local_service, client, "auto-short", MPNET_QINT8_ID, SHORT)


def test_the_create_form_offers_auto_as_what_new_models_get(
    local_service: LocalService, client: Client
) -> None:
    """The embedder's first choice, the one the form starts on, is the service's default, said to be `auto`
    (a remote service's own setting is not known to the workbench, so it sends nothing); `auto` is also a
    choice of its own, said as what it does; mpnet-base and the blend of both embedders are offered only where
    mpnet-base's weights are installed, and the help says what `auto` and the blend do."""
    at = page("models")
    at.run()
    no_exception(at)
    embedder = by_label(at.selectbox, "Embedder")
    assert (
        embedder.value
        == embedder.options[0]
        == "the service's default (auto, unless the service sets another)"
    )
    auto = "auto — both embedders where the texts allow, else e5-small-qint8"
    assert embedder.options[1] == auto
    assert ("mpnet-base" in embedder.options) == installed()
    blend = "blend — both embedders: e5-small-qint8 and mpnet-base, the mean of their scores"
    assert (blend in embedder.options) == installed()
    assert "each training takes both embedders (`blend`) where `mpnet-base` is installed" in embedder.help
    assert "else `e5-small-qint8` alone" in embedder.help
    handle = new_handle(local_service, "auto-created")
    by_label(at.text_input, "Handle").set_value(handle)
    embedder.set_value(auto)
    by_label(at.button, "Create model").click()
    at.run()
    no_exception(at)
    assert client.get_model(handle).embedder == AUTO_EMBEDDER  # recorded at create; nothing is embedded yet


def test_a_version_kept_without_comparing_says_why(kept_without_comparing: str) -> None:
    """The Training page's line, and the Versions page's table and the line under it, say the embedder kept
    and which embedder was not compared and why; the Models page lists the model's embedder as `auto`."""
    at = page("training", kept_without_comparing)
    at.run()
    no_exception(at)
    assert any(c.startswith(f"{SAID} · effort low") for c in shown(at.caption)), shown(at.caption)

    at = page("versions", kept_without_comparing)
    at.run()
    no_exception(at)
    table = next(d.value for d in at.dataframe if "trained on" in d.value.columns)
    assert list(table["trained on"]) == [SAID.removeprefix("trained on ")]
    assert f"v1 (active) {SAID}" in shown(at.caption)  # in full: the table's cell cuts it short

    at = page("models", kept_without_comparing)
    at.run()
    by_label(at.selectbox, "State").set_value("ready")  # the drafts other tests leave fill pages
    by_label(at.selectbox, "Per page").set_value(100)
    at.run()
    no_exception(at)
    listed = next(d.value for d in at.dataframe if "embedder" in d.value.columns)
    assert set(listed.loc[listed["handle"] == kept_without_comparing, "embedder"]) == {AUTO_EMBEDDER}
    assert not texts(at.error)


def test_the_local_engine_embeds_with_the_embedder_the_model_is_in(
    local_service: LocalService, client: Client, kept_without_comparing: str, trained: str
) -> None:
    """Previews, flags and the label curve embed with the model's own embedder, and for `auto` with the
    embedder its serving version was trained on (e5-small-qint8 before it has one): `auto` never reaches the
    registry as a name."""
    assert model_embedder(client, client.get_model(kept_without_comparing)) == E5_QINT8_ID
    assert model_embedder(client, client.get_model(trained)) == "hashing-v1-512"
    fresh = new_handle(local_service, "auto-fresh")
    client.create_model(fresh, embedder=AUTO_EMBEDDER)
    assert model_embedder(client, client.get_model(fresh)) == E5_QINT8_ID


def test_a_version_that_took_e5_while_mpnet_built_is_offered_both_embedders(
    local_service: LocalService, client: Client
) -> None:
    """An `auto` version trained on e5-small alone while mpnet-base's graph was being built: once the graph
    is built (the suite's cache has it) the Training page says so and offers both embedders, the owner's
    choice."""
    from core.embedder_words import GRAPH_NOT_BUILT
    from core.embedders.blend import BLEND_ID

    handle = auto_on_e5(local_service, client, "auto-graph", BLEND_ID, GRAPH_NOT_BUILT)
    at = page("training", handle)
    at.run()
    no_exception(at)
    offer = "mpnet-base's int8 graph is built now: v1 trained on e5-small alone while it was being built."
    assert any(t.startswith(offer) for t in texts(at.info)), texts(at.info)
    assert not by_label(at.button, "Train on both embedders now").disabled
    said = f"trained on e5-small-qint8 (not on both embedders: {GRAPH_NOT_BUILT}) · effort low"
    assert any(c.startswith(said) for c in shown(at.caption)), shown(at.caption)

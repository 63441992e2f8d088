"""The Label page's history and context (AppTest against the real local service): a text's metadata beside
it, a notice when the guidelines changed since the person last read them, "My labels" changing and
withdrawing a label, and the session's count, which the service keeps: a reload with the page's address
counts on."""

from __future__ import annotations

import pytest

from core.client import Client
from core.local import LocalService
from tests.support.app import make_draft, named_key, new_handle, new_key_name
from tests.support.apptest import no_exception, page, run_label_page, shown

POOL = [f"A text to decide on, number {i}." for i in range(6)]


@pytest.mark.usefixtures("app_env")
def test_my_labels_withdraws_and_a_reload_keeps_the_count_and_the_guidelines_notice(
    local_service: LocalService, client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    handle = make_draft(client, new_handle(local_service, "mine"))
    client.add_pool_texts(handle, POOL, metadata=[{"community": "askscience", "row": i} for i in range(6)])
    colleague = named_key(local_service.data_dir, local_service.namespace, new_key_name("guide"))
    with Client(local_service.url, colleague) as other:  # saved by a colleague: this person has not read them
        other.save_guidelines(handle, "# Formality\n\nLetters are formal.", "first version")

    at = page("label", handle)
    run_label_page(at)
    no_exception(at)
    assert any("changed since you last read them" in w and "first version" in w for w in shown(at.warning))
    assert any("**community**: askscience" in c for c in shown(at.caption))  # beside the text
    for key in ("label_btn_2", "label_btn_1"):
        at.button(key=key).click().run()
        no_exception(at)
    assert at.metric[0].delta == "2 done in this session"
    since = at.query_params["since"]
    assert since  # the session's start, in the page's address

    # "My labels": the newest first; a label changed to the other pole, and withdrawing one leaves the
    # session's count.
    newest, older = client.my_labels_page(handle, trait="formality", limit=2).items
    assert (newest.quality, older.quality) == (0.0, 1.0)
    at.button(key=f"my_label_change_sample_{older.id}").click().run()
    no_exception(at)
    assert any("Changed your label" in s for s in shown(at.success))
    assert [x.quality for x in client.my_labels_page(handle, trait="formality", limit=2).items] == [0.0, 0.0]
    at.button(key=f"my_label_withdraw_sample_{newest.id}").click().run()
    no_exception(at)
    assert any("Withdrew your label" in s for s in shown(at.success))
    assert client.my_labels_page(handle, trait="formality", limit=1).items[0].id != newest.id
    at.run()  # the page's next run (a key press, a search) leaves the panel open on the person using it
    assert [e.proto.expanded for e in at.expander if e.label == "My labels"] == [True]

    # A reload (a new script run with the same address) counts on from the service, and the notice stays
    # until the person says they read the guidelines.
    again = page("label", handle, since=since if isinstance(since, str) else since[0])
    run_label_page(again)
    no_exception(again)
    assert again.metric[0].delta == "1 done in this session"
    assert any("changed since you last read them" in w for w in shown(again.warning))
    # The next person on the tab (its address still holds that start) counts their own session from now:
    # their label given since that start, elsewhere, is not this session's.
    with Client(local_service.url, colleague) as other:
        other.add_samples(handle, [{"trait": "formality", "text": "Labelled elsewhere.", "quality": 1.0}])
    monkeypatch.setenv("SCORING_API_KEY", colleague)
    theirs = page("label", handle, since=since if isinstance(since, str) else since[0])
    run_label_page(theirs)
    no_exception(theirs)
    assert not theirs.metric[0].delta and theirs.query_params["since"] != since
    monkeypatch.setenv("SCORING_API_KEY", local_service.api_key)
    again.button(key="guidelines_read").click().run()
    no_exception(again)
    assert not any("changed since you last read them" in w for w in shown(again.warning))
    assert client.guidelines(handle).changed_since_read is False
    # The owner's next save: a new version, the notice again, and who changed what in the list of versions.
    with Client(local_service.url, colleague) as other:
        other.save_guidelines(handle, "# Formality\n\nLetters and reports are formal.", "reports count")
    again.run()
    assert any("reports count" in w for w in shown(again.warning))
    assert any("v2 · " in c and "+1 −1 lines · reports count" in c for c in shown(again.caption))

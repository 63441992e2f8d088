"""Training, waiting, discovery, synthesis, versions, tags and scoring against the real service."""

from __future__ import annotations

import pytest

from core.client import (
    Client,
    CompareResult,
    ConflictError,
    LastOperation,
    NotFoundError,
    RunCancelledError,
    RunFailedError,
    ScoreResult,
    ValidationError,
    WaitTimeoutError,
)
from core.client.calls.scoring import SECONDS_PER_TEXT
from core.embedders import CachedEmbedder
from tests.support.checkpoints import on_progress
from tests.support.client import FaultInjector, Service, make_draft

FORMAL = "Dear Sir or Madam, kindly find attached the signed agreement for your records."
CASUAL = "hey lol gonna grab food, u coming?"


@pytest.fixture(scope="module")
def trained(service: Service) -> str:
    """A model trained once (v1), re-optimized once (v2); shared by the read-only tests below."""
    with service.client() as c:
        handle = make_draft(c, service.handle("trained"))
        c.wait(handle, c.train(handle, effort="low").run_id, timeout=60)
        c.wait(handle, c.train(handle, effort="low", reoptimize_params=True).run_id, timeout=60)
    return handle


def test_train_and_wait_with_progress(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("train"))
    run = client.train(handle, effort="low")
    assert (run.state, run.status_code) == ("busy", 202) and run.run_id and run.run_id.startswith("run_")
    seen: list[LastOperation] = []

    model = client.wait(handle, run.run_id, timeout=60, poll_interval=0.01, on_operation=seen.append)

    assert model.state == "ready" and model.version_no == 1
    assert model.last_operation is not None and model.last_operation.status == "succeeded"
    assert seen and all(op.run_id == run.run_id and op.kind == "train" for op in seen)
    assert seen[-1].status == "succeeded" and seen[-1].fraction == 1.0
    fractions = [op.fraction for op in seen if op.fraction is not None]
    assert fractions == sorted(fractions)

    noop = client.train(handle)  # ready, no re-optimization: nothing queued
    assert (noop.state, noop.run_id, noop.status_code) == ("ready", None, 200)


def test_train_is_idempotent_while_in_flight(idle_service: Service) -> None:
    with idle_service.client() as c:
        handle = make_draft(c, idle_service.handle("idem"))
        first, second = c.train(handle), c.train(handle)
        assert second.run_id == first.run_id and second.status_code == 202
        with pytest.raises(ConflictError) as err:
            c.discover(handle)
        assert (err.value.code, err.value.run_id, err.value.retryable) == ("model_busy", first.run_id, True)
        with pytest.raises(WaitTimeoutError) as timeout:
            c.wait(handle, first.run_id, timeout=0.2, poll_interval=0.05)
        assert timeout.value.model is not None and timeout.value.model.state == "busy"


def test_wait_for_a_run_the_idle_model_does_not_show_is_not_found(client: Client, trained: str) -> None:
    # It can never show that run again: waiting out the timeout would say "still going" of nothing.
    with pytest.raises(NotFoundError) as err:
        client.wait(trained, "run_" + "0" * 32, timeout=0.2, poll_interval=0.05)
    assert err.value.run_id == "run_" + "0" * 32 and err.value.code == "run_not_found"
    last = client.get_model(trained).last_operation
    assert last is not None and f"its last run is {last.run_id}" in str(err.value)


def test_wait_raises_run_failed(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("fails"))

    def crash(phase: str) -> None:  # the engine breaking mid-run
        raise RuntimeError("injected engine crash")

    seen: list[LastOperation] = []
    with on_progress(service.ctx.executor, crash):
        run = client.train(handle, effort="low")
        with pytest.raises(RunFailedError) as err:
            client.wait(handle, run.run_id, timeout=60, on_operation=seen.append)
    assert err.value.run_id == run.run_id and err.value.code == "internal_error"
    assert err.value.model.state == "failed" and err.value.operation.status == "failed"
    assert seen[-1].status == "failed"
    assert run.run_id is not None and run.run_id in str(err.value)


def test_synthesize_then_duplicate_run(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("synth"))
    run = client.synthesize(handle, "from_traits", effort="low")
    assert run.status_code == 202 and run.run_id
    model = client.wait(handle, run.run_id, timeout=60)
    assert model.state == "draft"
    assert list(client.list_samples(handle, provenance="synthesized"))
    with pytest.raises(ConflictError) as err:
        client.synthesize(handle, "from_traits", effort="low")
    assert (err.value.code, err.value.run_id, err.value.retryable) == ("duplicate_run", run.run_id, False)
    with pytest.raises(ValidationError):
        client.synthesize(handle, "enrich")


def test_discover_then_duplicate_run(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("discover"))
    run = client.discover(handle, effort="low")
    model = client.wait(handle, run.run_id, timeout=60)
    assert model.state == "draft"
    assert all(t.kind in ("extrinsic", "intrinsic") for t in client.list_traits(handle))
    with pytest.raises(ConflictError) as err:
        client.discover(handle, effort="low")
    assert err.value.code == "duplicate_run" and err.value.run_id == run.run_id


def test_versions_and_tags(client: Client, trained: str) -> None:
    versions = list(client.list_versions(trained, page_size=1))  # two pages of one
    assert [v.version_no for v in versions] == [2, 1]  # newest first
    assert [v.triggered_by for v in versions] == ["retune", "train"]
    assert all(v.snapshot is None for v in versions)
    v1 = client.get_version(trained, 1)
    assert client.get_version(trained, "v1").version_id == v1.version_id
    assert v1.snapshot and v1.trait_metrics["formality"]["roc_auc"] is not None

    tagged = client.tag_version(trained, "stable")
    assert (tagged.tag, tagged.version_no) == ("stable", 2)
    assert client.get_version(trained, "stable").version_no == 2
    assert "stable" in client.get_model(trained).version_tags
    assert client.untag_version(trained, "stable").deleted is True
    assert client.untag_version(trained, "stable").deleted is False
    with pytest.raises(ValidationError) as err:
        client.tag_version(trained, "v7")
    assert err.value.code == "invalid_tag"
    with pytest.raises(NotFoundError) as missing:
        client.get_version(trained, 99)
    assert missing.value.code == "version_not_found"


def test_scoring_key_reads_without_snapshot(service: Service, trained: str) -> None:
    with service.client("scorer") as scorer:
        assert scorer.get_version(trained, 1).snapshot is None
        assert scorer.score(trained, FORMAL).as_dict().keys() == {"formality"}


def test_score_one_many_text_and_compare(client: Client, trained: str) -> None:
    formal = client.score(trained, FORMAL, explain=True)
    assert isinstance(formal, ScoreResult) and formal.handle == trained and formal.version_no == 2
    (s,) = formal.scores
    assert (s.trait, s.positive_label, s.negative_label) == ("formality", "formal", "casual")
    assert 0.0 <= s.score <= 1.0 and s.label == ("formal" if s.score >= 0.5 else "casual")
    assert formal.explanation and formal.explanation["formality"]
    assert client.score(trained, FORMAL, version=1).version_no == 1

    texts = [FORMAL, CASUAL] + [f"text number {i}" for i in range(103)]  # two requests of <= 100
    many = client.score_many(trained, texts)
    assert [r.index for r in many] == list(range(105))
    assert many[0].as_dict() == pytest.approx(formal.as_dict(), abs=1e-6)

    view = client.score_text(trained, CASUAL)
    assert "casual" in view and "formal" in view

    cmp = client.compare(trained, CASUAL, FORMAL)
    assert isinstance(cmp, CompareResult)
    a, b = cmp.results()
    assert cmp.deltas()["formality"] == pytest.approx(b["formality"] - a["formality"], abs=1e-6)
    assert b["formality"] == pytest.approx(formal["formality"], abs=1e-6)


def test_feedback_is_buffered(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("feedback"))
    client.wait(handle, client.train(handle, effort="low").run_id, timeout=60)
    result = client.score(handle, FORMAL, feedback={"formality": 1.0})
    assert result.feedback_buffered == 1
    assert client.get_model(handle).buffered_feedback == 1


def test_edits_on_a_ready_model_conflict(client: Client, trained: str) -> None:
    with pytest.raises(ConflictError) as err:
        client.add_samples(trained, [{"trait": "formality", "text": "late addition", "quality": 1.0}])
    assert err.value.code == "model_not_draft" and not err.value.retryable


def test_wait_draws_a_tqdm_bar(client: Client, trained: str, capsys: pytest.CaptureFixture[str]) -> None:
    model = client.wait(trained, progress="tqdm", timeout=30)
    assert model.state == "ready"
    err = capsys.readouterr().err
    assert "100%" in err and "train" in err
    with pytest.raises(ValueError, match="tqdm"):
        client.wait(trained, progress="bar", timeout=1)


def test_cancel_a_run_then_delete_its_model(idle_service: Service) -> None:
    with idle_service.client() as c:
        handle = make_draft(c, idle_service.handle("cancelled"))
        run = c.train(handle, effort="low")
        assert run.run_id is not None
        with pytest.raises(ConflictError) as busy:
            c.delete_model(handle, purge=True)
        assert busy.value.code == "model_busy" and f"client.cancel({handle!r}" in str(busy.value)

        model = c.cancel(handle, run.run_id)
        assert model.state == "draft" and model.version_no is None
        assert model.last_operation is not None and model.last_operation.status == "cancelled"
        assert c.cancel(handle, run.run_id).last_operation == model.last_operation  # safe to repeat
        with pytest.raises(RunCancelledError) as cancelled:  # a RunFailedError: old handlers catch it
            c.wait(handle, run.run_id, timeout=5)
        assert cancelled.value.code == "cancelled" and cancelled.value.model.state == "draft"
        with pytest.raises(NotFoundError):
            c.cancel(handle, "run_" + "0" * 32)
        assert c.delete_model(handle, purge=True).deleted


def test_cancel_of_a_finished_run_says_why(client: Client, service: Service) -> None:
    handle = make_draft(client, service.handle("finished"))
    run = client.train(handle, effort="low")
    assert run.run_id is not None
    client.wait(handle, run.run_id, timeout=60)
    with pytest.raises(ConflictError) as finished:
        client.cancel(handle, run.run_id)
    assert finished.value.code == "run_finished" and "already succeeded" in str(finished.value)


def test_score_many_waits_as_long_as_its_work_and_a_retry_embeds_nothing_again(
    trained: str, service: Service, faults: FaultInjector
) -> None:
    """Each score request's timeout grows with the texts it sends (a long call is not a timeout by design),
    and a request whose answer was lost is sent again without the service embedding its texts twice:
    they are in its embedding cache."""
    texts = [f"a new text for the timeout, number {i}" for i in range(150)]
    faults.inject("read-timeout", method="POST", path="/score", times=1)
    embedder = service.ctx.embedders.for_scoring("hashing")  # the cache in front of the scoring batcher
    assert isinstance(embedder, CachedEmbedder)
    before = embedder.misses
    with service.client(transport=faults, timeout=30.0) as c:
        many = c.score_many(trained, texts)
    assert [r.index for r in many] == list(range(150))
    sent = faults.attempts("POST", "/score")
    assert len(sent) == 3  # 100 texts (lost, then again), 50 texts
    waits = [r.extensions["timeout"]["read"] for r in sent]
    assert waits == [30.0 + 100 * SECONDS_PER_TEXT] * 2 + [30.0 + 50 * SECONDS_PER_TEXT]
    assert embedder.misses - before == 150  # each text embedded once, the retry's from the cache

"""Executes one run: read inputs, run the engine outside any transaction, then apply the
effect (new version / traits / samples, model state, ZDR purge, prune) in ONE transaction.
A crash anywhere before that commit leaves no trace but a run to recover."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session, sessionmaker

from core.contract import MAX_TRAITS, trait_key, unique_trait_key
from core.embedders import Embedder
from core.engine.errors import EngineError
from core.engine.types import Sample, TraitSpec
from service import history, runs
from service.db import transaction
from service.domain.samples import add_samples, held_feedback, load_samples, load_traits, trait_specs
from service.embedding import Embedders
from service.evaluation import run_evaluation
from service.prune import prune
from service.retention import erase, purge_texts
from service.runlocks import RunLocks
from service.settings import Settings
from service.tables import FeedbackLabel, Model, Run, Trait, Version, utcnow
from service.testhooks import pause

log = logging.getLogger("service.jobs")

MAX_DISCOVERED = 3
PHASE_MESSAGES = {
    "embedding": "Embedding samples",
    "searching": "Searching parameters",
    "calibrating": "Calibrating scores",
    "saving": "Saving the result",
}


class ClaimLost(Exception):
    """This worker's claim on its run was taken away (recovered as stale, or released): stop working."""


class _Heartbeat:
    """Keeps a claimed run's heartbeat fresh while the engine works; writes progress when asked."""

    def __init__(self, sessions: sessionmaker[Session], run_id: str, attempt: int, interval_s: float) -> None:
        self._sessions = sessions
        self._run_id = run_id
        self._attempt = attempt
        self._interval = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=f"heartbeat-{run_id}", daemon=True)
        self._last_write = 0.0
        self._last_phase = ""
        self.lost = threading.Event()
        self.pending_pause: Callable[[], None] | None = None

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                with transaction(self._sessions) as s:
                    if not runs.touch(s, self._run_id, self._attempt):
                        self.lost.set()
            except Exception:
                log.exception("heartbeat failed for %s", self._run_id)

    def progress(self, fraction: float, phase: str, message: str | None = None) -> None:
        if self.lost.is_set():  # noticed by the heartbeat thread
            raise ClaimLost(self._run_id)
        now = time.monotonic()
        # Throttle DB writes; always write a phase change.
        if phase == self._last_phase and now - self._last_write < 0.5:
            return
        self._last_phase, self._last_write = phase, now
        doc = runs.progress_doc(
            fraction, phase, message or PHASE_MESSAGES.get(phase, phase.replace("_", " "))
        )
        with transaction(self._sessions) as s:
            if not runs.touch(s, self._run_id, self._attempt, doc):
                self.lost.set()
        if self.lost.is_set():
            raise ClaimLost(self._run_id)


class Executor:
    def __init__(
        self, settings: Settings, sessions: sessionmaker[Session], embedders: Embedders, run_locks: RunLocks
    ) -> None:
        self.settings = settings
        self.sessions = sessions
        self.embedders = embedders
        self.run_locks = run_locks
        # Called with (fraction, phase) on every engine progress report; tests use it to simulate a
        # worker dying mid-run (raise a BaseException).
        self.progress_hook: Callable[[float, str], None] | None = None
        # Claims this process holds: {run_id: attempt}, so a shutting-down worker can hand them back.
        self.active: dict[str, int] = {}
        self._active_lock = threading.Lock()

    def claims(self) -> dict[str, int]:
        with self._active_lock:
            return dict(self.active)

    def execute(self, run_id: str) -> None:
        # The run's lock from before the claim until after its last write: while the row says `running`, its
        # worker holds it, and the lock goes with the worker's process (service/runlocks.py).
        with self.run_locks.hold(run_id) as mine:
            if not mine:  # another worker is on it (a duplicate message); the sweeps cover the rest
                log.info("run %s is held by another worker", run_id)
                return
            self._claim_and_execute(run_id)

    def _claim_and_execute(self, run_id: str) -> None:
        with transaction(self.sessions) as s:
            run = runs.claim(s, run_id)
            if run is None:
                return
            kind, attempt = run.kind, run.attempts
            handle = s.scalar(select(Model.handle).where(Model.id == run.model_id)) or ""
        log.info("run %s (%s) attempt %d started", run_id, kind, attempt)
        with self._active_lock:
            self.active[run_id] = attempt
        try:
            self._execute_claimed(run_id, kind, attempt, handle)
        finally:
            with self._active_lock:
                self.active.pop(run_id, None)

    def _execute_claimed(self, run_id: str, kind: str, attempt: int, handle: str) -> None:
        slow = self.settings.test_hooks.slow_run
        try:
            with _Heartbeat(self.sessions, run_id, attempt, self.settings.heartbeat_interval_s) as hb:
                if slow is not None and slow.applies(handle, attempt):
                    hb.pending_pause = lambda: pause(slow, handle, f"run {run_id} attempt {attempt}", attempt)
                if kind in runs.TRAIN_KINDS:
                    self._train(run_id, attempt, hb)
                elif kind == "discover":
                    self._discover(run_id, attempt, hb)
                elif kind == "synthesize":
                    self._synthesize(run_id, attempt, hb)
                elif kind == "evaluate":
                    run_evaluation(self.sessions, self.embedders, run_id, attempt, hb.progress)
                else:
                    raise EngineError(f"unknown run kind {kind!r}")
        except ClaimLost:
            log.warning("run %s attempt %d: the claim was lost, abandoning this attempt", run_id, attempt)
        except EngineError as exc:
            self._fail(run_id, attempt, exc.code, str(exc))
        except Exception as exc:
            log.exception("run %s failed", run_id)
            self._fail(
                run_id, attempt, "internal_error", f"The run failed unexpectedly ({type(exc).__name__})."
            )
        else:
            log.info("run %s finished", run_id)

    def _fail(self, run_id: str, attempt: int, code: str, message: str) -> None:
        with transaction(self.sessions) as s:
            runs.fail(s, run_id, attempt, code, message)

    def _progress_fn(self, hb: _Heartbeat, lo: float, hi: float) -> Callable[[float, str], None]:
        def report(fraction: float, phase: str) -> None:
            if self.progress_hook is not None:
                self.progress_hook(fraction, phase)
            hb.progress(lo + (hi - lo) * float(fraction), phase)
            do_pause = hb.pending_pause
            if do_pause is not None:  # test hook: once, at the engine's first report
                hb.pending_pause = None
                do_pause()

        return report

    # ---- train / retune / retrain / backfill ------------------------------------------------------

    def _train(self, run_id: str, attempt: int, hb: _Heartbeat) -> None:
        from core.engine import train

        with transaction(self.sessions) as s:
            run = s.get(Run, run_id)
            assert run is not None
            model = s.get(Model, run.model_id)
            assert model is not None
            options = dict(run.options)
            traits = load_traits(s, model.id)
            samples = load_samples(s, model.id)
            feedback = (
                list(
                    s.scalars(
                        select(FeedbackLabel)
                        .where(FeedbackLabel.model_id == model.id)
                        .order_by(FeedbackLabel.id)
                    )
                )
                # A training from a reopened draft takes the buffer in too (docs/api.md, "Reopen").
                if run.kind == "retrain" or options.get("with_feedback")
                else []
            )
            params = None
            if options.get("reuse_params") and model.current_version_id is not None:
                prev = s.get(Version, model.current_version_id)
                if prev is not None:
                    params = {
                        k: m.get("params")
                        for k, m in prev.metrics.get("traits", {}).items()
                        if m.get("params") is not None
                    } or None
            retain = not model.zero_data_retention
            embedder_choice = model.embedder
            handle = model.handle
        keys = {t.key for t in traits}
        held = {f.id for f in held_feedback(feedback, samples)}
        feedback = [f for f in feedback if f.id not in held]
        feedback_samples = [
            Sample(trait=f.trait_key, text=f.text, quality=f.quality) for f in feedback if f.trait_key in keys
        ]
        effort = options.get("effort") or "medium"
        embedder = self.embedders.get(embedder_choice, retain=retain)
        hb.progress(0.02, "embedding")
        started = time.monotonic()
        result = train(
            trait_specs(traits),
            samples + feedback_samples,
            embedder=embedder,
            effort=effort,
            params=params,
            progress=self._progress_fn(hb, 0.02, 0.95),
        )
        duration = time.monotonic() - started
        hb.progress(0.97, "saving")
        pause(self.settings.test_hooks.slow_save, handle, f"saving run {run_id} attempt {attempt}", attempt)
        metrics = {
            "traits": {
                key: {**dict(result.metrics.get(key, {})), "params": result.params.get(key)}
                for key in (t.key for t in traits)
            },
            "embedder": embedder.id,
            "effort": effort,
            "duration_s": round(duration, 3),
        }
        purged: list[str] = []
        with transaction(self.sessions) as s:
            if not runs.succeed(s, run_id, attempt, "Training finished"):
                return  # the claim was lost (recovered elsewhere): apply nothing
            model = s.get(Model, s.get(Run, run_id).model_id)  # type: ignore[union-attr]
            assert model is not None
            if feedback:
                trait_ids = {t.key: t.id for t in load_traits(s, model.id)}
                add_samples(s, model.id, trait_ids, feedback_samples, "feedback")
                s.execute(delete(FeedbackLabel).where(FeedbackLabel.id.in_([f.id for f in feedback])))
            last_no = s.scalar(select(func.max(Version.version_no)).where(Version.model_id == model.id)) or 0
            version = Version(
                model_id=model.id,
                version_no=last_no + 1,
                triggered_by=options.get("triggered_by", "train"),
                param_hash=result.param_hash,
                sample_count=len(samples) + len(feedback_samples),
                run_id=run_id,
                metrics=metrics,
                snapshot=result.snapshot,
                created_at=utcnow(),
            )
            s.add(version)
            s.flush()
            previous = history.version_no_of(s, model.current_version_id)
            history.record(s, model, "activated", version.version_no, previous=previous)
            model.current_version_id = version.id
            model.state = "ready"
            model.updated_at = utcnow()
            if model.zero_data_retention:  # rule 1 of 2.5: purge at every training completion
                purged = purge_texts(s, model.id)
            prune(s, model)
        erase(self.sessions.kw["bind"], self.embedders, purged)

    # ---- discover ----------------------------------------------------------------------------------

    def _edit_inputs(self, run_id: str) -> tuple[dict, list[TraitSpec], list[Sample], Embedder]:
        """What discover and synthesize read: run options, traits, samples, and the model's embedder
        (caching unless the model is under zero-data-retention)."""
        with transaction(self.sessions) as s:
            run = s.get(Run, run_id)
            assert run is not None
            model = s.get(Model, run.model_id)
            assert model is not None
            return (
                dict(run.options),
                trait_specs(load_traits(s, model.id)),
                load_samples(s, model.id),
                self.embedders.get(model.embedder, retain=not model.zero_data_retention),
            )

    def _discover(self, run_id: str, attempt: int, hb: _Heartbeat) -> None:
        from core.engine import discover

        options, specs, samples, embedder = self._edit_inputs(run_id)
        found = discover(
            samples,
            embedder=embedder,
            effort=options.get("effort") or "medium",
            existing=specs,
            progress=self._progress_fn(hb, 0.0, 0.95),
        )
        hb.progress(0.97, "saving")
        # Traits cannot change while the model is busy, so the room left under the cap is known here.
        found = found[: max(0, min(MAX_DISCOVERED, MAX_TRAITS - len(specs)))]
        with transaction(self.sessions) as s:
            if not runs.succeed(s, run_id, attempt, f"Discovered {len(found)} traits"):
                return
            run = s.get(Run, run_id)
            model = s.get(Model, run.model_id)  # type: ignore[union-attr]
            assert model is not None and run is not None
            taken = {t.key for t in load_traits(s, model.id)}
            for d in found:
                key = unique_trait_key(trait_key(d.spec.name), taken)
                taken.add(key)
                trait = Trait(
                    model_id=model.id,
                    key=key,
                    name=d.spec.name[:100],
                    positive_label=d.spec.positive_label[:100],
                    negative_label=d.spec.negative_label[:100],
                    description=d.spec.description,
                    aggregation=d.spec.aggregation,
                    kind="intrinsic",
                    explained_variance=float(d.explained_variance),
                )
                s.add(trait)
                s.flush()
                exemplars = [Sample(trait=key, text=x.text, quality=x.quality) for x in d.samples]
                add_samples(s, model.id, {key: trait.id}, exemplars, "discovered")
            model.state = run.return_state if run.return_state in ("draft", "failed") else "draft"
            model.updated_at = utcnow()

    # ---- synthesize --------------------------------------------------------------------------------

    def _synthesize(self, run_id: str, attempt: int, hb: _Heartbeat) -> None:
        from core.engine import synthesize

        options, specs, samples, embedder = self._edit_inputs(run_id)
        new = synthesize(
            specs,
            samples,
            synth_type=options.get("synth_type", "from_traits"),
            effort=options.get("effort") or "medium",
            embedder=embedder,
            progress=self._progress_fn(hb, 0.0, 0.95),
        )
        hb.progress(0.97, "saving")
        with transaction(self.sessions) as s:
            if not runs.succeed(s, run_id, attempt, f"Synthesized {len(new)} samples"):
                return
            run = s.get(Run, run_id)
            model = s.get(Model, run.model_id)  # type: ignore[union-attr]
            assert model is not None and run is not None
            trait_ids = {t.key: t.id for t in load_traits(s, model.id)}
            add_samples(s, model.id, trait_ids, [x for x in new if x.trait in trait_ids], "synthesized")
            model.state = run.return_state if run.return_state in ("draft", "failed") else "draft"
            model.updated_at = utcnow()

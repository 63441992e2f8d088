"""`Client`: one method per endpoint of the scoring service (docs/api.md)."""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import httpx
from pydantic import BaseModel

from core.client import errors, importing, retry
from core.client import progress as progress_mod
from core.client.models import (
    AuditEvent,
    AuditPage,
    ClaimReleased,
    CompareResult,
    DeleteResult,
    FeedbackLabel,
    FeedbackPage,
    FeedbackWithdrawn,
    HistoryEvent,
    ImportReport,
    KeyInfo,
    LastOperation,
    Member,
    MemberRemoved,
    Model,
    Page,
    PoolImportReport,
    PoolLabel,
    PoolPage,
    PoolText,
    RunRef,
    Sample,
    SampleInput,
    ScoreResult,
    Suggestions,
    TagDeleteResult,
    TagResult,
    Trait,
    TraitInput,
    TraitPreview,
    Version,
)
from core.client.paths import path as _path
from core.client.results import (
    Agreement,
    AnalyzeCommentResult,
    DiscoveryDocument,
    Evaluation,
    EvaluationComparison,
    EvaluationItemsAdded,
    EvaluationSet,
    EvaluationSetCleared,
    Health,
    PrCurve,
    SuggestCommentScoreResult,
    Threshold,
)
from core.client.retry import Safety
from core.client.team import (
    CommentPage,
    TeamProgress,
    TextComment,
    UnsureMark,
    UnsurePage,
    VoteRecord,
    VotesPage,
    votes_csv,
    votes_jsonl,
)
from core.contract import (
    DISAGREEMENTS,
    MAX_EVAL_ITEMS_PER_REQUEST,
    MAX_POOL_TEXTS_PER_REQUEST,
    MAX_SAMPLES_PER_REQUEST,
    MAX_SCORE_TEXTS,
    SUGGESTIONS,
    InputProvenance,
)
from core.json_types import JsonObject

if TYPE_CHECKING:
    from core.client.perspective_migration import LoggedComment, MigrationReport

ENV_URL = "SCORING_API_URL"
ENV_KEY = "SCORING_API_KEY"

_ModelT = TypeVar("_ModelT", bound=BaseModel)

try:
    from importlib.metadata import version as _pkg_version

    _USER_AGENT = f"scoring-workbench-client/{_pkg_version('scoring-workbench')}"
except Exception:  # not installed as a distribution (plain checkout)
    _USER_AGENT = "scoring-workbench-client"


def normalize_base_url(url: str) -> str:
    """Strip trailing slashes and add `/v1` when the URL names only the server."""
    url = url.strip().rstrip("/")
    if not url:
        raise ValueError("base_url is empty")
    if not url.endswith("/v1"):
        url += "/v1"
    return url


def _require_name(name: str, what: str) -> None:
    if not str(name).strip():
        raise ValueError(f"The {what} is empty: enter a name.")


def _clean(fields: Mapping[str, object]) -> JsonObject:
    return {k: v for k, v in fields.items() if v is not None}


class Client:
    """Typed client for the scoring service.

    `base_url` (ending in `/v1`; added if missing) and `api_key` default to the environment
    variables `SCORING_API_URL` and `SCORING_API_KEY`. Idempotent calls are retried on
    connection errors, 429 and 5xx with exponential backoff and jitter (honouring
    `Retry-After`); calls that create something are retried only when the request never left.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        url = base_url or os.environ.get(ENV_URL)
        if not url:
            raise ValueError(
                f"no service URL: pass base_url or set {ENV_URL} "
                "(or start one with core.start_local_service())"
            )
        self.base_url = normalize_base_url(url)
        self.api_key = api_key if api_key is not None else os.environ.get(ENV_KEY)
        self.retries = max(0, int(retries))
        self.backoff = max(0.0, float(backoff))
        self.timeout = timeout
        default_headers = {"Accept": "application/json", "User-Agent": _USER_AGENT}
        if self.api_key:
            default_headers["Authorization"] = f"Bearer {self.api_key}"
        default_headers.update(headers or {})
        self._http = httpx.Client(
            base_url=self.base_url + "/",
            headers=default_headers,
            timeout=httpx.Timeout(timeout),
            transport=transport,
        )
        self._sleep: Callable[[float], None] = retry.sleep  # replaceable to observe delays in tests

    # -- plumbing -------------------------------------------------------------------------------------

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}, api_key={'set' if self.api_key else 'none'})"

    def request(
        self,
        method: str,
        path: str,
        *,
        safety: Safety = Safety.IDEMPOTENT,
        params: Mapping[str, object] | None = None,
        json: object = None,
        content: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one logical call (same `X-Request-Id` on every attempt); raise `ApiError` on >= 300.

        A 3xx is an error too (`UnexpectedRedirectError`): redirects are not followed, and the body of one is
        never the result the caller asked for.
        """
        request_id = f"req_{uuid.uuid4().hex}"
        send_headers = {"X-Request-Id": request_id, **(headers or {})}
        attempt = 0
        while True:
            try:
                response = self._http.request(
                    method,
                    path.lstrip("/"),
                    params=_clean(params or {}),
                    json=json,
                    content=content,
                    headers=send_headers,
                )
            except httpx.TransportError as exc:
                if attempt < self.retries and retry.should_retry_exception(exc, safety):
                    self._sleep(retry.backoff_delay(attempt, self.backoff))
                    attempt += 1
                    continue
                raise errors.TransportError(
                    f"{method} {self.base_url}{path}: {type(exc).__name__}: {exc} "
                    f"(after {attempt + 1} attempt{'s' if attempt else ''})",
                    request_id=request_id,
                ) from exc
            if response.status_code < 300:
                return response
            if attempt < self.retries and retry.should_retry_status(response.status_code, safety):
                delay = retry.backoff_delay(attempt, self.backoff)
                after = retry.retry_after_seconds(response)
                if after is None or after <= retry.MAX_RETRY_AFTER:
                    self._sleep(max(delay, after or 0.0))
                    attempt += 1
                    continue
            raise errors.error_from_response(response, request_id)

    def _get(self, path: str, params: Mapping[str, object] | None = None) -> Any:
        return self.request("GET", path, params=params).json()  # Any: the answer's JSON, read by its model

    def _paginate(self, fetch: Callable[[str | None], Page[_ModelT]]) -> Iterator[_ModelT]:
        cursor: str | None = None
        while True:
            page = fetch(cursor)
            yield from page.items
            if not page.next_cursor or not page.items:
                return
            cursor = page.next_cursor

    @staticmethod
    def _run_ref(response: httpx.Response) -> RunRef:
        body = response.json()
        return RunRef.model_validate({**body, "status_code": response.status_code})

    # -- service --------------------------------------------------------------------------------------

    def health(self) -> Health:
        return Health.model_validate(self._get("/health"))

    def current_key(self) -> KeyInfo:
        """The key this client sends: its scope and the namespaces it owns."""
        return KeyInfo.model_validate(self._get("/keys/current"))

    # -- people: who is in a namespace, with what role (owners only) ----------------------------------

    def list_people(self, namespace: str) -> list[Member]:
        """The namespace's members and their roles."""
        body = self._get(_path("namespaces", namespace, "people"))
        return [Member.model_validate(m) for m in body.get("items", [])]

    def set_person_role(self, namespace: str, member: str, role: str) -> Member:
        """Add `member` (an email, or a subject at the identity provider) to `namespace` with `role`, or
        change their role. `ConflictError` (`last_owner`) when it would demote the namespace's last owner."""
        _require_name(member, "email")
        path = _path("namespaces", namespace, "people", member.strip())
        return Member.model_validate(self.request("PUT", path, json={"role": role}).json())

    def remove_person(self, namespace: str, member: str) -> MemberRemoved:
        """Take `member` out of `namespace`; the labels they gave stay. `ConflictError` (`last_owner`)."""
        _require_name(member, "email")
        path = _path("namespaces", namespace, "people", member.strip())
        return MemberRemoved.model_validate(self.request("DELETE", path).json())

    # -- models ---------------------------------------------------------------------------------------

    def list_models_page(
        self,
        namespace: str | None = None,
        state: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[Model]:
        params = {"namespace": namespace, "state": state, "kind": kind, "limit": limit, "cursor": cursor}
        return Page[Model].model_validate(self._get("/models", params))

    def list_models(
        self,
        namespace: str | None = None,
        state: str | None = None,
        kind: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Model]:
        """Every model (following `next_cursor`); without `namespace`, the public catalog."""
        return self._paginate(
            lambda cursor: self.list_models_page(namespace, state, kind, limit=page_size, cursor=cursor)
        )

    def create_model(
        self,
        handle: str,
        *,
        description: str = "",
        scoring_method: str | None = None,
        kind: str | None = None,
        max_depth: int | None = None,
        additional_terms: str | None = None,
        upstream_sources: list[JsonObject] | None = None,
        readme_markdown: str | None = None,
        zero_data_retention: bool | None = None,
        embedder: str | None = None,
    ) -> Model:
        """`embedder`: "minilm-qint8v2", "minilm", "e5-small", "hashing" or their ids, fixed for good
        (default: the service's)."""
        body = _clean(
            {
                "handle": handle,
                "description": description,
                "scoring_method": scoring_method,
                "kind": kind,
                "max_depth": max_depth,
                "additional_terms": additional_terms,
                "upstream_sources": upstream_sources,
                "readme_markdown": readme_markdown,
                "zero_data_retention": zero_data_retention,
                "embedder": embedder,
            }
        )
        response = self.request("POST", "/models", json=body, safety=Safety.ONCE)
        return Model.model_validate(response.json())

    def get_model(self, handle: str) -> Model:
        return Model.model_validate(self._get(_path("models", handle)))

    def update_model(self, handle: str, **fields: object) -> Model:
        """PATCH the given fields as they are (`auto_prune=None` sends null: back to the defaults)."""
        response = self.request("PATCH", _path("models", handle), json=fields)
        return Model.model_validate(response.json())

    def reopen(self, handle: str) -> Model:
        """Back to `draft` to edit traits and samples while the active version keeps serving; the next
        `train` makes version N+1. Safe to repeat (a draft answers unchanged)."""
        return Model.model_validate(self.request("POST", _path("models", handle, "reopen")).json())

    def delete_model(self, handle: str) -> DeleteResult:
        return DeleteResult.model_validate(self.request("DELETE", _path("models", handle)).json())

    # -- traits ---------------------------------------------------------------------------------------

    @staticmethod
    def _traits(body: Any) -> list[Trait]:  # Any: the answer's JSON (a list, or an object with one)
        items = body.get("traits", []) if isinstance(body, dict) else body
        return [Trait.model_validate(t) for t in items]

    def list_traits(self, handle: str) -> list[Trait]:
        return self._traits(self._get(_path("models", handle, "traits")))

    def add_traits(self, handle: str, traits: Iterable[TraitInput | Mapping[str, object]]) -> list[Trait]:
        """Add traits; dicts are validated as `TraitInput` first (pydantic.ValidationError if wrong)."""
        payload = [_dump(TraitInput, t) for t in traits]
        response = self.request(
            "POST", _path("models", handle, "traits"), json={"traits": payload}, safety=Safety.ONCE
        )
        return self._traits(response.json())

    def preview_trait(
        self, handle: str, trait: TraitInput | Mapping[str, object], texts: Sequence[str]
    ) -> TraitPreview:
        """Zero-shot scores of 1-20 `texts` for a trait not yet added or trained (nothing is stored)."""
        body = {"trait": _dump(TraitInput, trait), "texts": list(texts)}
        response = self.request("POST", _path("models", handle, "traits", "preview"), json=body)
        return TraitPreview.model_validate(response.json())

    def update_trait(self, handle: str, key: str, **fields: object) -> list[Trait]:
        response = self.request("PATCH", _path("models", handle, "traits", key), json=fields)
        return self._traits(response.json())

    def delete_trait(self, handle: str, key: str) -> DeleteResult:
        response = self.request("DELETE", _path("models", handle, "traits", key))
        return DeleteResult.model_validate(response.json())

    def discover(self, handle: str, effort: str | None = None) -> RunRef:
        """Start trait discovery; 409 `duplicate_run` (ConflictError.run_id) if it already ran."""
        response = self.request(
            "POST",
            _path("models", handle, "traits", "discover"),
            json=_clean({"effort": effort}),
            safety=Safety.ONCE,
        )
        return self._run_ref(response)

    # -- samples --------------------------------------------------------------------------------------

    def add_samples(self, handle: str, samples: Iterable[SampleInput | Mapping[str, object]]) -> list[int]:
        """Store 1..500 samples all-or-none; returns their ids (an identical stored sample keeps its id)."""
        payload = [_dump(SampleInput, s) for s in samples]
        if not 1 <= len(payload) <= MAX_SAMPLES_PER_REQUEST:
            raise ValueError(
                f"add_samples takes 1 to {MAX_SAMPLES_PER_REQUEST} samples, got {len(payload)}; "
                "use import_samples for more"
            )
        response = self.request(
            "POST", _path("models", handle, "samples"), json={"samples": payload}, safety=Safety.ONCE
        )
        return [int(i) for i in response.json().get("ids", [])]

    def import_samples(
        self,
        handle: str,
        samples: Iterable[SampleInput | Mapping[str, object]],
        *,
        batch_size: int = MAX_SAMPLES_PER_REQUEST,
        progress: Callable[[int, int], None] | None = None,
        provenance: InputProvenance | None = None,
    ) -> ImportReport:
        """Validate every row locally, then send the valid ones in batches; see `ImportReport`.
        `provenance="imported"` marks every row as a file's, not the sender's votes (a row's own
        `provenance` wins); posting such rows needs the owner role."""
        from core.client.importing import import_samples

        return import_samples(
            self, handle, samples, batch_size=batch_size, progress=progress, provenance=provenance
        )

    def migrate_from_perspective(
        self,
        handle: str,
        rows: Sequence[LoggedComment],
        *,
        old_threshold: float | Mapping[str, float],
        holdout: float = 0.2,
        seed: int = 0,
        effort: str | None = "low",
        timeout: float = 1800.0,
        progress: Callable[[str], None] | None = None,
    ) -> MigrationReport:
        """Logged Perspective scores (`read_log`) as soft labels of traits named after the attributes (added
        when missing); train; report agreement on the held-out share and the threshold here that keeps the
        old flag rate (docs/perspective.md, "A migration, end to end")."""
        from core.client.perspective_migration import migrate

        return migrate(
            self,
            handle,
            rows,
            old_threshold=old_threshold,
            holdout=holdout,
            seed=seed,
            effort=effort,
            timeout=timeout,
            progress=progress,
        )

    def list_samples_page(
        self,
        handle: str,
        trait: str | None = None,
        provenance: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> Page[Sample]:
        params = {"trait": trait, "provenance": provenance, "limit": limit, "cursor": cursor}
        return Page[Sample].model_validate(self._get(_path("models", handle, "samples"), params))

    def list_samples(
        self,
        handle: str,
        trait: str | None = None,
        provenance: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[Sample]:
        return self._paginate(
            lambda cursor: self.list_samples_page(handle, trait, provenance, limit=page_size, cursor=cursor)
        )

    def update_sample(
        self,
        handle: str,
        sample_id: int,
        *,
        trait: str | None = None,
        text: str | None = None,
        quality: float | None = None,
    ) -> Sample:
        """Edit a draft's sample (only the fields given). The answer's `id` differs from `sample_id` when the
        edit made it identical to another stored sample: the service then keeps only that one."""
        body = _clean({"trait": trait, "text": text, "quality": quality})
        response = self.request("PATCH", _path("models", handle, "samples", sample_id), json=body)
        return Sample.model_validate(response.json())

    def delete_sample(self, handle: str, sample_id: int) -> DeleteResult:
        """Delete a draft's sample; a sample that is not there raises NotFoundError (`sample_not_found`)."""
        response = self.request("DELETE", _path("models", handle, "samples", sample_id))
        return DeleteResult.model_validate(response.json())

    # -- unlabelled pool ------------------------------------------------------------------------------

    def add_pool_texts(self, handle: str, texts: Iterable[str]) -> list[int]:
        """Add 1..1000 unlabelled texts (all or none); their ids (a text already there keeps its id)."""
        payload = list(texts)
        if not 1 <= len(payload) <= MAX_POOL_TEXTS_PER_REQUEST:
            raise ValueError(
                f"add_pool_texts takes 1 to {MAX_POOL_TEXTS_PER_REQUEST} texts, got {len(payload)}; "
                "use import_pool for more"
            )
        # Repeating an import is harmless (the service keeps one copy of a text), so it is retried.
        response = self.request("POST", _path("models", handle, "pool"), json={"texts": payload})
        return [int(i) for i in response.json().get("ids", [])]

    def import_pool(
        self,
        handle: str,
        texts: Iterable[str],
        *,
        start: int = 0,
        batch_size: int = importing.POOL_BATCH,
        progress: Callable[[int, int], None] | None = None,
    ) -> PoolImportReport:
        """Add any number of texts in batches that shrink on a slow service; `progress(stored, total)` after
        each. Never raises for a failed batch: the report says how many are stored (`stored`, from the start)
        and why it stopped (`error`); call again with `start=report.stored` to resume."""
        return importing.import_pool(
            self, handle, list(texts), start=start, batch_size=batch_size, progress=progress
        )

    def list_pool_page(self, handle: str, limit: int | None = None, cursor: str | None = None) -> PoolPage:
        return PoolPage.model_validate(
            self._get(_path("models", handle, "pool"), {"limit": limit, "cursor": cursor})
        )

    def list_pool(self, handle: str, page_size: int | None = None) -> Iterator[PoolText]:
        return self._paginate(lambda cursor: self.list_pool_page(handle, limit=page_size, cursor=cursor))

    def delete_pool_text(self, handle: str, text_id: int) -> DeleteResult:
        return DeleteResult.model_validate(
            self.request("DELETE", _path("models", handle, "pool", text_id)).json()
        )

    def clear_pool(self, handle: str) -> int:
        """Delete every text of the model's pool; returns how many there were."""
        return int(self.request("DELETE", _path("models", handle, "pool")).json().get("deleted", 0))

    # -- buffered score feedback ------------------------------------------------------------------------

    def feedback_page(self, handle: str, limit: int | None = None, cursor: str | None = None) -> FeedbackPage:
        """A page of the model's buffered feedback labels (oldest first), with `buffered` (the buffer's size)
        and `retrain_at` (the size at which the service retrains the model). Owner's authoring key only."""
        body = self._get(_path("models", handle, "feedback"), {"limit": limit, "cursor": cursor})
        return FeedbackPage.model_validate(body)

    def list_feedback(self, handle: str, page_size: int | None = None) -> Iterator[FeedbackLabel]:
        return self._paginate(lambda cursor: self.feedback_page(handle, limit=page_size, cursor=cursor))

    def audit_page(self, namespace: str, limit: int | None = None, cursor: str | None = None) -> AuditPage:
        """A page of the namespace's audit log, newest first: settles, settling votes deleted, buffered labels
        withdrawn, role changes. The namespace's owners only (403 otherwise)."""
        body = self._get(_path("namespaces", namespace, "audit"), {"limit": limit, "cursor": cursor})
        return AuditPage.model_validate(body)

    def audit(self, namespace: str, page_size: int | None = None) -> Iterator[AuditEvent]:
        """Every event of the namespace's audit log, newest first."""
        return self._paginate(lambda cursor: self.audit_page(namespace, limit=page_size, cursor=cursor))

    def withdraw_feedback(self, handle: str, label_id: int) -> FeedbackWithdrawn:
        """Take a buffered feedback label back before the automatic retraining uses it (409 `model_busy`
        while a retraining runs: it has read the buffer)."""
        response = self.request("DELETE", _path("models", handle, "feedback", label_id))
        return FeedbackWithdrawn.model_validate(response.json())

    def suggest(
        self,
        handle: str,
        trait: str,
        *,
        k: int = SUGGESTIONS.default,
        mode: str = "auto",
        overlap: float = 0.0,
        claim: bool = False,
    ) -> Suggestions:
        """Pool texts to label next for `trait` (mode: auto, typical, diverse, uncertain, positive, negative).
        `overlap` (0-0.5): that share of the `k` picks comes from texts another annotator labelled and this
        key has not (`Suggestion.overlap`), so the team's agreement is measured as it labels. `claim`: the
        texts are this key's for a lease (`Suggestion.claimed_until`): colleagues are not handed them
        meanwhile, and this key's still-claimed texts come first (a reload resumes)."""
        body: JsonObject = {"trait": trait, "k": k, "mode": mode}
        if overlap:
            body["overlap"] = overlap
        if claim:
            body["claim"] = True
        return Suggestions.model_validate(
            self.request("POST", _path("models", handle, "pool", "suggest"), json=body).json()
        )

    def label_pool_text(self, handle: str, text_id: int, trait: str, quality: float) -> PoolLabel:
        """Label pool text `text_id`: a sample of an untrained draft, else buffered feedback for the next
        version (also while a training runs: never refused for the model's state). Ends this key's claim on
        it. Safe to repeat: the same label is stored once."""
        body: JsonObject = {"trait": trait, "quality": quality}
        response = self.request("POST", _path("models", handle, "pool", text_id, "label"), json=body)
        return PoolLabel.model_validate(response.json())

    def release_claim(self, handle: str, text_id: int, trait: str | None = None) -> ClaimReleased:
        """Let go of a claimed pool text (a skip), for `trait` or every trait: colleagues may get it now."""
        response = self.request(
            "DELETE", _path("models", handle, "pool", text_id, "claim"), params={"trait": trait}
        )
        return ClaimReleased.model_validate(response.json())

    def synthesize(self, handle: str, synth_type: str = "from_traits", effort: str | None = None) -> RunRef:
        """Start synthesis; 409 `duplicate_run` (ConflictError.run_id) if the same run exists."""
        response = self.request(
            "POST",
            _path("models", handle, "samples", "synthesize"),
            json=_clean({"synth_type": synth_type, "effort": effort}),
            safety=Safety.ONCE,
        )
        return self._run_ref(response)

    # -- training and waiting -------------------------------------------------------------------------

    def train(self, handle: str, effort: str | None = None, reoptimize_params: bool = False) -> RunRef:
        """Start (or join) training. Safe to retry: a repeat returns the run in flight."""
        body: JsonObject = _clean({"effort": effort})
        if reoptimize_params:
            body["reoptimize_params"] = True
        return self._run_ref(self.request("POST", _path("models", handle, "train"), json=body))

    def wait(
        self,
        handle: str,
        run_id: str | None = None,
        *,
        timeout: float = 600.0,
        poll_interval: float = 0.5,
        progress: Callable[[LastOperation], None] | str | None = None,
    ) -> Model:
        """Poll the model until it is no longer busy (and, given `run_id`, its last run is that one).

        `progress` is called with each `LastOperation` seen, or is `"tqdm"` for a progress bar.
        Raises `RunFailedError` if the run failed and `WaitTimeoutError` after `timeout` seconds.
        """
        callback, close = progress_mod.resolve(progress, handle)
        deadline = time.monotonic() + timeout
        model: Model | None = None
        succeeded = False
        try:
            while True:
                model = self.get_model(handle)
                op = model.last_operation
                if callback is not None and op is not None and (run_id is None or op.run_id == run_id):
                    callback(op)
                if model.state != "busy" and (run_id is None or (op is not None and op.run_id == run_id)):
                    if op is not None and op.status == "failed":
                        raise errors.RunFailedError(model, op)
                    succeeded = True
                    return model
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise errors.WaitTimeoutError(handle, run_id, timeout, model)
                time.sleep(min(poll_interval, remaining))
        finally:
            close(succeeded)

    # -- versions and tags ----------------------------------------------------------------------------

    def list_versions_page(
        self, handle: str, limit: int | None = None, cursor: str | None = None
    ) -> Page[Version]:
        params = {"limit": limit, "cursor": cursor}
        return Page[Version].model_validate(self._get(_path("models", handle, "versions"), params))

    def list_versions(self, handle: str, page_size: int | None = None) -> Iterator[Version]:
        """Versions newest first, without snapshots."""
        return self._paginate(lambda cursor: self.list_versions_page(handle, limit=page_size, cursor=cursor))

    def get_version(self, handle: str, v: str | int) -> Version:
        """`v` is `"vN"`, a tag, or the number N."""
        ref = f"v{v}" if isinstance(v, int) else v
        return Version.model_validate(self._get(_path("models", handle, "versions", ref)))

    def tag_version(self, handle: str, name: str, version: str | int | None = None) -> TagResult:
        """Point tag `name` at the active version, or at `version` (`vN`, N or a tag); a tag moves."""
        _require_name(name, "tag name")
        body = {"version": _version_ref(version)} if version is not None else None
        response = self.request("POST", _path("models", handle, "versions", name), json=body)
        return TagResult.model_validate(response.json())

    def untag_version(self, handle: str, name: str) -> TagDeleteResult:
        _require_name(name, "tag name")
        response = self.request("DELETE", _path("models", handle, "versions", name))
        return TagDeleteResult.model_validate(response.json())

    def history(self, handle: str) -> list[HistoryEvent]:
        """When each version became active and when each tag pointed where, oldest first."""
        body = self._get(_path("models", handle, "history"))
        return [HistoryEvent.model_validate(e) for e in body["events"]]

    # -- annotators' agreement ------------------------------------------------------------------------

    def agreement(self, handle: str, trait: str | None = None, limit: int = 20) -> Agreement:
        """How far the annotators of the model's labels agree, per trait key: Krippendorff's alpha on
        quality and on the pole, pairwise agreement, and the `limit` (1-100) most disagreed texts with their
        votes. Settle one with `add_samples([{..., "adjudicated": True}])` (a draft's sample edit)."""
        params = {"trait": trait, "limit": limit}
        return Agreement.model_validate(self._get(_path("models", handle, "agreement"), params))

    # -- a labelling team: progress, the vote export, unsure marks and comments -------------------------

    def team_progress(self, handle: str) -> TeamProgress:
        """Per person and trait: labels (today, UTC, and all), median seconds per decision, agreement with
        colleagues and with settled texts, and texts still wanting votes. Any role of the namespace."""
        return TeamProgress.model_validate(self._get(_path("models", handle, "team")))

    def votes_page(self, handle: str, limit: int | None = None, cursor: str | None = None) -> VotesPage:
        """A page of every vote of the model: samples, then buffered feedback labels, then unsure marks."""
        body = self._get(_path("models", handle, "votes"), {"limit": limit, "cursor": cursor})
        return VotesPage.model_validate(body)

    def votes(self, handle: str, page_size: int | None = None) -> Iterator[VoteRecord]:
        """Every vote of the model, page by page."""
        return self._paginate(lambda cursor: self.votes_page(handle, limit=page_size, cursor=cursor))

    def export_votes(self, handle: str, format: str = "csv") -> str:
        """Every vote as a file's text: `csv` (with a header) or `jsonl` (core.client.team.VOTE_COLUMNS)."""
        if format not in ("csv", "jsonl"):
            raise ValueError(f"format must be 'csv' or 'jsonl', got {format!r}")
        render = votes_csv if format == "csv" else votes_jsonl
        return render(self.votes(handle))

    def mark_unsure(self, handle: str, trait: str, text: str) -> UnsureMark:
        """The caller's unsure mark on a text of a trait (again: the stored one). Never a vote."""
        response = self.request(
            "POST", _path("models", handle, "unsure"), json={"trait": trait, "text": text}
        )
        return UnsureMark.model_validate(response.json())

    def unsure_page(
        self, handle: str, trait: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> UnsurePage:
        params = {"trait": trait, "limit": limit, "cursor": cursor}
        return UnsurePage.model_validate(self._get(_path("models", handle, "unsure"), params))

    def list_unsure(self, handle: str, trait: str | None = None) -> Iterator[UnsureMark]:
        return self._paginate(lambda cursor: self.unsure_page(handle, trait, cursor=cursor))

    def delete_unsure(self, handle: str, mark_id: int) -> DeleteResult:
        """Take an unsure mark back: one's own, or (reviewer) a colleague's."""
        response = self.request("DELETE", _path("models", handle, "unsure", mark_id))
        return DeleteResult.model_validate(response.json())

    def add_comment(self, handle: str, trait: str, text: str, body: str) -> TextComment:
        """A comment (1-1,000 characters) on a text of a trait, signed with the caller's annotator name."""
        payload = {"trait": trait, "text": text, "body": body}
        response = self.request("POST", _path("models", handle, "comments"), json=payload)
        return TextComment.model_validate(response.json())

    def comments_page(
        self, handle: str, trait: str | None = None, limit: int | None = None, cursor: str | None = None
    ) -> CommentPage:
        params = {"trait": trait, "limit": limit, "cursor": cursor}
        return CommentPage.model_validate(self._get(_path("models", handle, "comments"), params))

    def list_comments(self, handle: str, trait: str | None = None) -> Iterator[TextComment]:
        return self._paginate(lambda cursor: self.comments_page(handle, trait, cursor=cursor))

    def delete_comment(self, handle: str, comment_id: int) -> DeleteResult:
        """Delete a comment: one's own, or (reviewer) a colleague's."""
        response = self.request("DELETE", _path("models", handle, "comments", comment_id))
        return DeleteResult.model_validate(response.json())

    # -- evaluation sets ------------------------------------------------------------------------------

    def add_evaluation_items(
        self,
        handle: str,
        items: Iterable[Mapping[str, object]],
        *,
        progress: Callable[[int, int], None] | None = None,
    ) -> EvaluationItemsAdded:
        """Add labelled held-out items (`trait`, `text`, `quality`) in batches of 500; never trained on.
        Returns how many were `added` and the set's `total`; items already in the set are not added again."""
        rows = [dict(i) for i in items]
        added, total = 0, 0
        for start in range(0, len(rows), MAX_EVAL_ITEMS_PER_REQUEST):
            batch = rows[start : start + MAX_EVAL_ITEMS_PER_REQUEST]
            # Safe to repeat: a repeated batch adds nothing (duplicates are skipped).
            path = _path("models", handle, "evaluation-set")
            body = self.request("POST", path, json={"items": batch}).json()
            added, total = added + int(body["added"]), int(body["total"])
            if progress is not None:
                progress(start + len(batch), len(rows))
        return EvaluationItemsAdded(added=added, total=total)

    def evaluation_set(self, handle: str) -> EvaluationSet:
        """The set's `total` and its items per trait (`traits[key].positive` / `.negative`)."""
        return EvaluationSet.model_validate(self._get(_path("models", handle, "evaluation-set")))

    def clear_evaluation_set(self, handle: str) -> EvaluationSetCleared:
        """Delete every item of the set; `deleted` says how many there were."""
        body = self.request("DELETE", _path("models", handle, "evaluation-set")).json()
        return EvaluationSetCleared.model_validate(body)

    def evaluate(self, handle: str, version: str | int) -> RunRef:
        """Start an evaluation run of `version` on the model's evaluation set; wait with `wait`."""
        path = _path("models", handle, "versions", _version_ref(version), "evaluate")
        response = self.request("POST", path, safety=Safety.ONCE)
        return self._run_ref(response)

    def get_evaluation(self, handle: str, version: str | int) -> Evaluation:
        """The latest stored evaluation of `version`: `items` and per trait its metrics (`traits[key]`)."""
        body = self._get(_path("models", handle, "versions", _version_ref(version), "evaluation"))
        return Evaluation.model_validate(body)

    def pr_curve(self, handle: str, version: str | int) -> PrCurve:
        """The version's precision-recall curve per trait on its latest evaluation (`traits[key].points`,
        each with `threshold`, `precision`, `recall`)."""
        body = self._get(_path("models", handle, "versions", _version_ref(version), "pr-curve"))
        return PrCurve.model_validate(body)

    def thresholds(self, handle: str, version: str | int) -> dict[str, Threshold]:
        """The version's decision thresholds by trait key."""
        body = self._get(_path("models", handle, "versions", _version_ref(version), "thresholds"))
        return {key: Threshold.model_validate(t) for key, t in dict(body["thresholds"]).items()}

    def set_threshold(
        self, handle: str, version: str | int, trait: str, *, target: str, value: float
    ) -> Threshold:
        """Choose and store `trait`'s threshold on the evaluation set for `target` ("precision" or "recall")
        ≥ `value`; score responses of that version then add `threshold` and `decision` for the trait."""
        _require_name(trait, "trait key")
        path = _path("models", handle, "versions", _version_ref(version), "thresholds", trait)
        body = self.request("PUT", path, json={"target": target, "value": value}).json()
        return Threshold.model_validate(body)

    def clear_threshold(self, handle: str, version: str | int, trait: str) -> bool:
        """Remove `trait`'s threshold from the version; False when it had none."""
        _require_name(trait, "trait key")
        path = _path("models", handle, "versions", _version_ref(version), "thresholds", trait)
        return bool(self.request("DELETE", path).json()["deleted"])

    def compare_evaluations(
        self, handle: str, a: str | int, b: str | int, *, limit: int = DISAGREEMENTS.default
    ) -> EvaluationComparison:
        """Versions `a` and `b` side by side on their latest evaluations (the items both scored): per trait
        the metrics of each, B − A with a 95% interval, p-value and `significant`, reliability bins of each;
        and the `limit` items (1–1000) where their scores differ most, with text and label."""
        params = {"a": _version_ref(a), "b": _version_ref(b), "limit": limit}
        body = self._get(_path("models", handle, "evaluation", "compare"), params)
        return EvaluationComparison.model_validate(body)

    # -- scoring --------------------------------------------------------------------------------------

    def score(
        self,
        handle: str,
        content: str,
        *,
        version: str | int | None = None,
        explain: bool = False,
        feedback: Sequence[Mapping[str, object]] | Mapping[str, float] | None = None,
    ) -> ScoreResult:
        """Score one text. `feedback` is `[{"trait", "quality"}]` or `{trait: quality}`."""
        body: JsonObject = {"content": content}
        if version is not None:
            body["version"] = _version_ref(version)
        if explain:
            body["explain"] = True
        safety = Safety.IDEMPOTENT
        if feedback is not None:
            items = feedback.items() if isinstance(feedback, Mapping) else None
            body["feedback"] = (
                [{"trait": k, "quality": q} for k, q in items] if items is not None else list(feedback)
            )
            safety = Safety.ONCE  # feedback is buffered: repeating would count it twice
        response = self.request("POST", _path("models", handle, "score"), json=body, safety=safety)
        return ScoreResult.model_validate(response.json())

    def score_many(
        self,
        handle: str,
        contents: list[str],
        *,
        version: str | int | None = None,
        explain: bool = False,
    ) -> list[ScoreResult]:
        """Score many texts (100 per request, one with `explain`); one `ScoreResult` per text, in order."""
        out: list[ScoreResult] = []
        per_request = 1 if explain else MAX_SCORE_TEXTS  # the service explains one content per request
        for start in range(0, len(contents), per_request):
            chunk = contents[start : start + per_request]
            body: JsonObject = {"content": chunk}
            if version is not None:
                body["version"] = _version_ref(version)
            if explain:
                body["explain"] = True
            envelope = self.request("POST", _path("models", handle, "score"), json=body).json()
            common = {k: v for k, v in envelope.items() if k not in ("results", "scores")}
            results = sorted(envelope.get("results", []), key=lambda r: r.get("index", 0))
            for r in results:
                merged = {**common, **r, "index": start + int(r.get("index", 0))}
                out.append(ScoreResult.model_validate(merged))
        return out

    def score_text(self, handle: str, content: str, *, version: str | int | None = None) -> str:
        """The service's plain-text bar chart of one text."""
        response = self.request(
            "POST",
            _path("models", handle, "score"),
            params={"version": _version_ref(version) if version is not None else None},
            content=content.encode("utf-8"),
            headers={"Content-Type": "text/plain; charset=utf-8", "Accept": "text/plain"},
        )
        return response.text

    def compare(self, handle: str, a: str, b: str, *, version: str | int | None = None) -> CompareResult:
        """Score two texts with one version; `difference` is b − a per trait."""
        body: JsonObject = {"a": a, "b": b}
        if version is not None:
            body["version"] = _version_ref(version)
        response = self.request("POST", _path("models", handle, "score", "compare"), json=body)
        return CompareResult.model_validate(response.json())

    # -- Perspective-compatible surface (docs/perspective.md) -----------------------------------------

    def _perspective(self, method: str, body: JsonObject, safety: Safety) -> Any:  # Any: the answer's JSON
        url = self.base_url.removesuffix("/v1") + f"/v1alpha1/comments:{method}"
        return self.request("POST", url, json=body, safety=safety).json()

    def perspective_discovery(self) -> DiscoveryDocument:
        """The Discovery document Google's clients build `commentanalyzer v1alpha1` from (no key needed)."""
        url = self.base_url.removesuffix("/v1") + "/$discovery/rest"
        document = self.request("GET", url, params={"version": "v1alpha1"}).json()
        return DiscoveryDocument.model_validate(document)

    def analyze_comment(
        self,
        text: str,
        attributes: Iterable[str] | Mapping[str, Mapping[str, object]],
        *,
        model: str | None = None,
        span_annotations: bool = False,
        languages: list[str] | None = None,
        do_not_store: bool = False,
        client_token: str | None = None,
    ) -> AnalyzeCommentResult:
        """Perspective's AnalyzeComment (`result.attribute_scores[name].summary_score.value`).

        `attributes`: trait names (`TOXICITY`, `TOXICITY@3`, `TOXICITY@prod`) or Perspective's
        `requestedAttributes` map; `model`: a handle (else the server's configured one)."""
        requested = (
            {k: dict(v) for k, v in attributes.items()}
            if isinstance(attributes, Mapping)
            else {a: {} for a in attributes}
        )
        body = _clean(
            {
                "comment": {"text": text},
                "requestedAttributes": requested,
                "model": model,
                "spanAnnotations": span_annotations or None,
                "languages": languages,
                "doNotStore": do_not_store or None,
                "clientToken": client_token,
            }
        )
        return AnalyzeCommentResult.model_validate(self._perspective("analyze", body, Safety.IDEMPOTENT))

    def suggest_comment_score(
        self,
        text: str,
        scores: Mapping[str, float],
        *,
        model: str | None = None,
        client_token: str | None = None,
    ) -> SuggestCommentScoreResult:
        """Perspective's SuggestCommentScore: `{attribute: value}` becomes feedback labels (an authoring key
        that owns the model's namespace; refused under zero-data-retention)."""
        body = _clean(
            {
                "comment": {"text": text},
                "attributeScores": {k: {"summaryScore": {"value": v}} for k, v in scores.items()},
                "model": model,
                "clientToken": client_token,
            }
        )
        answer = self._perspective("suggestscore", body, Safety.ONCE)  # feedback: repeating counts twice
        return SuggestCommentScoreResult.model_validate(answer)


def _version_ref(version: str | int) -> str:
    return f"v{version}" if isinstance(version, int) else version


def _dump(model: type[BaseModel], item: BaseModel | Mapping[str, object]) -> JsonObject:
    obj = item if isinstance(item, model) else model.model_validate(item)
    return obj.model_dump(exclude_none=True)

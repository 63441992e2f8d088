"""The unlabelled pool: import, list, delete; suggestions, claims and labels."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from core.client import importing, tabular
from core.client import progress as progress_mod
from core.client.calls.base import ClientBase
from core.client.models import (
    BulkLabelled,
    ClaimReleased,
    DeleteResult,
    PoolImportReport,
    PoolLabel,
    PoolPage,
    PoolText,
    Suggestions,
)
from core.client.paths import path as _path
from core.contract import (
    MAX_POOL_TEXTS_PER_REQUEST,
    SUGGESTIONS,
)
from core.json_types import JsonObject


class PoolCalls(ClientBase):
    def add_pool_texts(
        self,
        handle: str,
        texts: Iterable[str] | object,
        *,
        column: str | None = None,
        metadata: Sequence[JsonObject | None] | None = None,
    ) -> list[int]:
        """Add 1..1000 unlabelled texts (all or none); their ids (a text already there keeps its id).
        `column` names a DataFrame's column of texts (a DataFrame without it is a `TypeError`); `metadata`,
        one per text (None: none), the extra columns kept beside each new text."""
        payload = tabular.texts(texts, "add_pool_texts", column)
        if not 1 <= len(payload) <= MAX_POOL_TEXTS_PER_REQUEST:
            raise ValueError(
                f"add_pool_texts takes 1 to {MAX_POOL_TEXTS_PER_REQUEST} texts, got {len(payload)}; "
                "use import_pool for more"
            )
        # Repeating an import is harmless (the service keeps one copy of a text), so it is retried.
        body: JsonObject = {"texts": payload}
        if metadata is not None:
            body["metadata"] = list(metadata)
        response = self.request("POST", _path("models", handle, "pool"), json=body)
        return [int(i) for i in response.json().get("ids", [])]

    def import_pool(
        self,
        handle: str,
        texts: Iterable[str] | object,
        *,
        start: int = 0,
        batch_size: int = importing.POOL_BATCH,
        progress: progress_mod.Progress = None,
        column: str | None = None,
        metadata: Sequence[JsonObject | None] | None = None,
    ) -> PoolImportReport:
        """Add any number of texts (a list, tuple, numpy array or pandas Series) in batches that shrink on a
        slow service. Never raises for a failed batch: the report says how many are stored (`stored`, from the
        start) and why it stopped (`error`); call again with `start=report.stored` to resume (also after an
        interrupt, whose message says that number). `progress`: `True`/`"tqdm"` or
        `progress(stored, total)`. `column` names a DataFrame's column of texts; `metadata`, one per text
        (None: none), the extra columns kept beside each new text."""
        items = tabular.texts(texts, "import_pool", column)
        reporter = progress_mod.resolve(progress, f"pool of {handle}", unit="texts")
        stored = [start]

        def seen(n: int, total: int) -> None:
            stored[0] = n
            reporter.update(n, total)

        report: PoolImportReport | None = None
        try:
            report = importing.import_pool(
                self, handle, items, start=start, batch_size=batch_size, progress=seen, metadata=metadata
            )
            return report
        except KeyboardInterrupt:
            raise KeyboardInterrupt(
                f"pool import into {handle} stopped: the first {stored[0]} of {len(items)} texts are stored; "
                f"resume with import_pool(handle, texts, start={stored[0]})"
            ) from None
        finally:
            reporter.close(report is not None and report.error is None)

    def list_pool_page(
        self,
        handle: str,
        limit: int | None = None,
        cursor: str | None = None,
        meta: Mapping[str, object] | None = None,
        *,
        search: str | None = None,
    ) -> PoolPage:
        """A page of the pool, oldest first; `search`: only texts containing that phrase, letter case aside;
        `meta`: only texts whose metadata has each of these values (as text); `total` counts the matches."""
        filters = [f"{key}:{value}" for key, value in (meta or {}).items()] or None
        params = {"limit": limit, "cursor": cursor, "q": search, "meta": filters}
        return PoolPage.model_validate(self._get(_path("models", handle, "pool"), params))

    def list_pool(
        self,
        handle: str,
        page_size: int | None = None,
        meta: Mapping[str, object] | None = None,
        *,
        search: str | None = None,
    ) -> Iterator[PoolText]:
        return self._paginate(
            lambda cursor: self.list_pool_page(
                handle, limit=page_size, cursor=cursor, meta=meta, search=search
            )
        )

    def delete_pool_text(self, handle: str, text_id: int) -> DeleteResult:
        return DeleteResult.model_validate(
            self.request("DELETE", _path("models", handle, "pool", text_id)).json()
        )

    def clear_pool(self, handle: str) -> int:
        """Delete every text of the model's pool; returns how many there were."""
        return int(self.request("DELETE", _path("models", handle, "pool")).json().get("deleted", 0))

    def label_pool_texts(self, handle: str, ids: Sequence[int], trait: str, quality: float) -> BulkLabelled:
        """One label for a selection of pool texts (a reviewer's or an owner's): a vote of the caller's on
        each, one audit event; texts with the votes they want from colleagues are `skipped`."""
        body: JsonObject = {"trait": trait, "quality": quality, "ids": list(ids)}
        response = self.request("POST", _path("models", handle, "pool", "label"), json=body)
        return BulkLabelled.model_validate(response.json())

    def suggest(
        self,
        handle: str,
        trait: str,
        *,
        k: int = SUGGESTIONS.default,
        mode: str = "auto",
        overlap: float | None = None,
        claim: bool = False,
    ) -> Suggestions:
        """Pool texts to label next for `trait` (mode: auto, typical, diverse, uncertain, positive, negative).
        `overlap` (0-0.5): that share of the `k` picks comes from texts another annotator labelled and this
        key has not (`Suggestion.overlap`), so the team's agreement is measured as it labels; None: the
        model's own `overlap`, which its owner sets (`update_model(handle, overlap=…)`). `claim`: the
        texts are this key's for a lease (`Suggestion.claimed_until`): colleagues are not handed them
        meanwhile, and this key's still-claimed texts come first (a reload resumes)."""
        body: JsonObject = {"trait": trait, "k": k, "mode": mode}
        if overlap is not None:
            body["overlap"] = overlap
        if claim:
            body["claim"] = True
        return Suggestions.model_validate(
            self.request("POST", _path("models", handle, "pool", "suggest"), json=body).json()
        )

    def label_pool_text(
        self, handle: str, text_id: int, trait: str, quality: float | None = None, *, point: int | None = None
    ) -> PoolLabel:
        """Label pool text `text_id`: a sample of an untrained draft, else buffered feedback for the next
        version (also while a training runs: never refused for the model's state). Ends this key's claim on
        it. Safe to repeat: the same label is stored once. A pole trait takes a `quality`, a trait rated on a
        scale a `point` 1..N (`Trait.scale`); the other kind is refused (422)."""
        body: JsonObject = {"trait": trait}
        if quality is not None:
            body["quality"] = quality
        if point is not None:
            body["point"] = point
        response = self.request("POST", _path("models", handle, "pool", text_id, "label"), json=body)
        return PoolLabel.model_validate(response.json())

    def release_claim(self, handle: str, text_id: int, trait: str | None = None) -> ClaimReleased:
        """Let go of a claimed pool text (a skip), for `trait` or every trait: colleagues may get it now."""
        response = self.request(
            "DELETE", _path("models", handle, "pool", text_id, "claim"), params={"trait": trait}
        )
        return ClaimReleased.model_validate(response.json())

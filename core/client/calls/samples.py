"""Samples: add, import, list, edit, delete, synthesize; a Perspective log's migration."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from core.client import progress as progress_mod
from core.client import tabular
from core.client.calls.base import _clean, _dump
from core.client.calls.models import ModelCalls
from core.client.calls.namespaces import NamespaceCalls
from core.client.calls.traits import TraitCalls
from core.client.models import (
    DeleteResult,
    ImportReport,
    Page,
    RunRef,
    Sample,
    SampleInput,
    Settled,
    Version,
)
from core.client.paths import path as _path
from core.client.results import SampleFlag, SampleFlags
from core.client.retry import Safety
from core.contract import (
    AUTO_EMBEDDER,
    MAX_SAMPLES_PER_REQUEST,
    InputProvenance,
)
from core.json_types import JsonObject


class SampleCalls(ModelCalls, TraitCalls, NamespaceCalls):  # an import reads the traits and the key
    def settle(self, handle: str, trait: str, text: str, quality: float) -> Settled:
        """Settle a text of a trait with this key's vote (the reviewer role), in any state but archived; the
        next training takes it in. 409 `already_settled` (saying by whom) when a colleague settled it."""
        body = {"trait": trait, "text": text, "quality": quality}
        return Settled.model_validate(
            self.request("POST", _path("models", handle, "settle"), json=body).json()
        )

    def add_samples(
        self,
        handle: str,
        samples: Iterable[SampleInput | Mapping[str, object]] | object,
        *,
        text: str | None = None,
        quality: str | None = None,
        trait: str | None = None,
        source_id: str | None = None,
    ) -> list[int]:
        """Store 1..500 samples all-or-none; returns their ids (an identical stored sample keeps its id).
        `samples` may be a DataFrame: `text=`/`quality=`/`trait=`/`source_id=` name its columns (see
        `import_samples`)."""
        rows = tabular.rows(
            samples,
            SampleInput.model_fields,
            call="add_samples",
            text=text,
            quality=quality,
            trait=trait,
            source_id=source_id,
        )
        payload = [_dump(SampleInput, s) for s in rows]
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
        samples: Iterable[SampleInput | Mapping[str, object]] | object,
        *,
        batch_size: int = MAX_SAMPLES_PER_REQUEST,
        progress: progress_mod.Progress = None,
        provenance: InputProvenance | None = None,
        text: str | None = None,
        quality: str | None = None,
        trait: str | None = None,
        labels: Mapping[object, object] | None = None,
        keep: Sequence[str] | None = None,
        source_id: str | None = None,
        strict: bool = True,
    ) -> ImportReport:
        """Validate every row locally, then send the valid ones in batches; see `ImportReport`.
        `samples` are dicts or a DataFrame: `text=`/`quality=`/`trait=` name its columns when they are named
        otherwise, columns that are no field of a sample are left out, empty cells stay unset.
        `provenance="imported"` marks every row as a file's, not the sender's votes (a row's own
        `provenance` wins), the default for a DataFrame's rows (`provenance="authored"`: the sender's own);
        posting such rows needs the owner role. `progress`: `True`/`"tqdm"` or
        `progress(done, total)` (core.client.progress). Interrupted, it says how many rows were sent: what
        was sent is stored, and importing again stores the rest (a stored sample keeps its id).
        `labels` maps the quality column's labels to qualities (`{"SUBJ": 1, "OBJ": 0}`); rows without a
        trait take the model's only trait. Rows all stored already on a trained or training model are
        reported as duplicates, not refused (docs/client.md, "Import samples"). `keep` names a DataFrame's
        extra columns kept beside each text as its `metadata`; `source_id` its column of the rows' own ids
        (else a column named like an id, `core.contract.ID_COLUMNS`, else each row's index label).
        `strict` (the default): a row that cannot be stored raises `ImportRowsError` carrying the report
        (`err.report`), before anything is sent when the rows are refused here; `strict=False` answers the
        report instead. A list of texts without labels is a `TypeError` (`import_pool` takes those)."""
        from core.client.importing import check_quality_cells, import_samples, label_map

        checked = label_map(labels) if labels is not None else None
        if provenance is None and tabular.is_frame(samples):
            # A table's rows are a file's (pd.read_csv, read_file), not the sender's own votes: stored as
            # `imported`, as the workbench's file import stores them (docs/api/access.md, "Imported rows").
            provenance = "imported"
        rows = tabular.rows(
            samples,
            SampleInput.model_fields,
            text=text,
            quality=quality,
            trait=trait,
            source_id=source_id,
            keep=keep,
        )
        rows = self._with_only_trait(handle, rows)
        check_quality_cells(rows, checked, lambda: self.list_traits(handle))
        reporter = progress_mod.resolve(progress, f"importing into {handle}", unit="rows")
        done = [0]

        def seen(n: int, total: int) -> None:
            done[0] = n
            reporter.update(n, total)

        succeeded = False
        try:
            report = import_samples(
                self,
                handle,
                rows,
                batch_size=batch_size,
                progress=seen,
                provenance=provenance,
                labels=checked,
                twins=lambda payloads: self._stored_twins(handle, payloads),
                strict=strict,
            )
            succeeded = True
            return report
        except KeyboardInterrupt as stop:
            raise KeyboardInterrupt(
                f"import into {handle} stopped: {done[0]} of {len(rows)} rows were checked and sent "
                f"(those are stored){self._in_flight_stored(handle, stop)}; importing the same rows again "
                "stores the rest and nothing twice"
            ) from None
        finally:
            reporter.close(succeeded)

    def _in_flight_stored(self, handle: str, stop: KeyboardInterrupt) -> str:
        """How many rows of the batch on its way when Ctrl-C came the service stored all the same (it had
        the request): counted among the stored samples, so the message says the true count."""
        from core.client.importing import Interrupted

        if not isinstance(stop, Interrupted) or not stop.in_flight:
            return ""
        try:
            stored = sum(1 for twin in self._stored_twins(handle, stop.in_flight) if twin is not None)
        except (Exception, KeyboardInterrupt):  # noqa: BLE001 - asked once; the message says what is known
            return f", and the {len(stop.in_flight)} rows on their way when it stopped may be stored too"
        return f", and {stored} of the {len(stop.in_flight)} rows on their way when it stopped are stored too"

    def _stored_twins(self, handle: str, payloads: list[JsonObject]) -> list[int | None]:
        """The stored sample each payload repeats (same trait, text, quality, annotator and adjudication:
        the service's duplicate rule), else None."""
        traits = self.list_traits(handle)
        by_name = {t.key: t.key for t in traits} | {t.name.casefold(): t.key for t in traits}
        me = self.current_key().name
        stored: dict[tuple[object, ...], int] = {
            (s.trait, s.text.strip(), round(s.quality, 9), s.annotator, s.adjudicated): s.id
            for s in self.list_samples(handle)
        }
        found: list[int | None] = []
        for p in payloads:
            ref = str(p["trait"])
            key = by_name.get(ref, by_name.get(ref.casefold()))
            annotator = p.get("annotator") or (None if p.get("provenance") == "imported" else me)
            quality = float(str(p["quality"]))  # a SampleInput's dump: a float
            twin = (key, str(p["text"]).strip(), round(quality, 9), annotator, bool(p.get("adjudicated")))
            found.append(stored.get(twin))
        return found

    def flags(
        self, handle: str, *, embedder: object = None, progress: progress_mod.Progress = None
    ) -> SampleFlags:
        """Check the model's stored samples here, as the Samples page's Flags tab does: likely mislabelled
        texts, contested ones (votes on both poles, not settled) and outliers (`core.engine.flags`). The
        texts are embedded with the model's embedder (or `embedder`, an `Embedder`), in this process; a
        client of a local service (`LocalService.client()`) first reads the vectors that service keeps on
        this machine, so the texts it trained on are not embedded again (a remote service's are: the API
        answers no vectors). `progress`: `True`/`"tqdm"` or `progress(percent_done, 100)`.

        The flags come from the same out-of-fold scores a version's `roc_auc` is computed from: relabelling
        the flagged samples raises the next version's out-of-fold AUC by construction, whether or not the
        labels got better. Judge a relabelling on an evaluation set (`add_evaluation_items`, `evaluate`)."""
        from core.client.local_vectors import cached_embedder
        from core.embedders import get_embedder  # the engine loads only for a check
        from core.embedders.registry import embedder_of
        from core.engine.flags import flag_samples

        model = self.get_model(handle)
        rows = [s.model_dump(mode="json") for s in self.list_samples(handle)]
        chosen = embedder
        if chosen is None:
            serving = None  # an `auto` model's vectors are in its serving version's embedder
            if model.embedder == AUTO_EMBEDDER and model.version_no is not None:
                version = self._get(_path("models", handle, "versions", f"v{model.version_no}"))
                serving = Version.model_validate(version).embedder_id
            base = get_embedder(embedder_of(model.embedder, serving))
            cache = self.embedding_cache
            chosen = base if cache is None or model.zero_data_retention else cached_embedder(base, cache)
        reporter = progress_mod.resolve(progress, f"checking {handle}", unit="%")
        done = False
        try:
            found = flag_samples(
                rows,
                chosen,  # type: ignore[arg-type]  # an Embedder: the caller's, or the registry's
                lambda fraction, step: reporter.update(round(fraction * 100), 100, step or None),
            )
            done = True
        finally:
            reporter.close(done)
        return SampleFlags(SampleFlag.model_validate(f) for f in found)

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

    def synthesize(self, handle: str, synth_type: str = "from_traits", effort: str | None = None) -> RunRef:
        """Start synthesis; 409 `duplicate_run` (ConflictError.run_id) if the same run exists."""
        response = self.request(
            "POST",
            _path("models", handle, "samples", "synthesize"),
            json=_clean({"synth_type": synth_type, "effort": effort}),
            safety=Safety.ONCE,
        )
        return self._run_ref(response)

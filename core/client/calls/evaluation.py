"""Evaluation sets, evaluations, precision-recall curves and thresholds."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.client import progress as progress_mod
from core.client import tabular
from core.client.calls.base import _require_name, _version_ref
from core.client.calls.traits import TraitCalls
from core.client.models import (
    RunRef,
)
from core.client.paths import path as _path
from core.client.results import (
    Evaluation,
    EvaluationComparison,
    EvaluationItemsAdded,
    EvaluationSet,
    EvaluationSetCleared,
    PrCurve,
    Threshold,
)
from core.client.retry import Safety
from core.contract import (
    DISAGREEMENTS,
    MAX_EVAL_ITEMS_PER_REQUEST,
)

_ITEM_FIELDS = ("trait", "text", "quality")


def _missing_fields(handle: str, index: int, missing: list[str]) -> str:
    """What a row without `missing` fields needs, in the notebook's words rather than the request's path."""
    how = {
        "trait": "name the trait column with trait=, add a 'trait' column (df.assign(trait='formality')), "
        "or leave it out only on a model with one trait",
        "text": "name the texts' column with text=",
        "quality": "name the quality column with quality= (a column of labels also needs labels=, each "
        "label 1 if it means the trait's positive pole, 0 if its negative)",
    }
    return f"evaluation item {index} of {handle} has no {', '.join(missing)}: " + "; ".join(
        how[f] for f in missing
    )


class EvaluationCalls(TraitCalls):  # rows without a trait take a one-trait model's
    def add_evaluation_items(
        self,
        handle: str,
        items: Iterable[Mapping[str, object]] | object,
        *,
        progress: progress_mod.Progress = None,
        text: str | None = None,
        quality: str | None = None,
        trait: str | None = None,
        labels: Mapping[object, object] | None = None,
    ) -> EvaluationItemsAdded:
        """Add labelled held-out items (`trait`, `text`, `quality`; dicts or a DataFrame whose columns
        `text=`/`quality=`/`trait=` name) in batches of 500; never trained on. The rows are read as
        `import_samples` reads them: `labels` maps the quality column's labels to qualities
        (`{"SUBJ": 1, "OBJ": 0}`), and rows without a trait take the model's only trait. A row that still
        lacks a field, or whose label `labels` does not name, is a `ValueError` before anything is sent (the
        set has no per-row report: fix the rows and call again). Returns how many were `added` and the set's
        `total`; items already in the set are not added again (so an interrupted call can simply run again).
        `progress`: `True`/`"tqdm"` or `progress(done, total)`."""
        from core.client.importing import check_quality_cells, label_map, label_quality

        found = tabular.rows(
            items, _ITEM_FIELDS, call="add_evaluation_items", text=text, quality=quality, trait=trait
        )
        rows = [dict(i) for i in self._with_only_trait(handle, found)]
        checked = label_map(labels) if labels is not None else None
        check_quality_cells(rows, checked, lambda: self.list_traits(handle))
        for index, row in enumerate(rows):
            missing = [f for f in _ITEM_FIELDS if f not in row]
            if missing:
                raise ValueError(_missing_fields(handle, index, missing))
            if checked is not None:
                try:
                    row["quality"] = label_quality(row["quality"], checked)
                except ValueError as exc:
                    raise ValueError(f"evaluation item {index}: {exc}") from None
        added, total, duplicates, gold, in_pool, in_samples = 0, 0, [], [], 0, 0
        reporter = progress_mod.resolve(progress, f"evaluation set of {handle}", unit="items")
        sent = 0
        try:
            for start in range(0, len(rows), MAX_EVAL_ITEMS_PER_REQUEST):
                batch = rows[start : start + MAX_EVAL_ITEMS_PER_REQUEST]
                # Safe to repeat: a repeated batch adds nothing (duplicates are skipped).
                path = _path("models", handle, "evaluation-set")
                body = self.request("POST", path, json={"items": batch}).json()
                added, total = added + int(body["added"]), int(body["total"])
                # `duplicates` is absent from older services.
                duplicates += [start + int(i) for i in body.get("duplicates") or ()]
                gold += [start + int(i) for i in body.get("gold_texts") or ()]
                in_pool += int(body.get("in_pool") or 0)  # absent from older services
                in_samples += int(body.get("in_samples") or 0)
                sent = start + len(batch)
                reporter.update(sent, len(rows))
        except KeyboardInterrupt:
            raise KeyboardInterrupt(
                f"adding evaluation items to {handle} stopped: {sent} of {len(rows)} were sent (those are "
                "stored); adding the same items again adds only the rest"
            ) from None
        finally:
            reporter.close(sent == len(rows))
        return EvaluationItemsAdded(
            added=added,
            total=total,
            duplicates=duplicates,
            gold_texts=gold,
            in_pool=in_pool,
            in_samples=in_samples,
        )

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

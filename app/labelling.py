"""The Label page's session: a queue of suggested pool texts, labels given (undoable), and the live AUC curve.

Kept out of the page script so keyboard callbacks and buttons run the same code. Every label is stored at once
through `app.labels.add_labels` (a sample on a draft, score feedback on a ready model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.metrics import roc_auc_score

from app.flags import oof_scores
from app.labels import LabelsRefused, add_labels
from core.client import Client, Model
from core.embedders.base import Embedder

BATCH = 20  # suggestions fetched at a time
NEGATIVE, POSITIVE = 0.0, 1.0


@dataclass
class LabelSession:
    handle: str
    trait: str
    mode: str = "auto"
    queue: list[dict[str, Any]] = field(default_factory=list)  # {"id", "text", "score"}
    pos: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)  # {"item", "quality", "route", "ids"}
    curve: list[tuple[int, float]] = field(default_factory=list)  # (labels given, out-of-fold AUC)
    given: list[dict[str, Any]] = field(default_factory=list)  # labels sent as feedback (ready model)
    message: str = ""
    error: str = ""
    exhausted: bool = False

    @property
    def current(self) -> dict[str, Any] | None:
        return self.queue[self.pos] if 0 <= self.pos < len(self.queue) else None


def refill(s: LabelSession, client: Client) -> None:
    """Fetch suggestions when the queue has run out (texts already queued are not added twice)."""
    if s.current is not None:
        return
    got = client.suggest(s.handle, s.trait, k=BATCH, mode=s.mode)
    queued = {item["id"] for item in s.queue}
    fresh = [item.model_dump() for item in got.items if item.id not in queued]
    s.queue = s.queue[: s.pos] + fresh
    s.exhausted = not fresh


def out_of_fold_auc(client: Client, s: LabelSession, embedder: Embedder) -> float | None:
    """ROC-AUC of the trait's labels scored by folds that did not see them (None until both poles have 2)."""
    rows = [(x.text, x.quality) for x in client.list_samples(s.handle, trait=s.trait, page_size=500)]
    rows += [(g["text"], g["quality"]) for g in s.given]
    if len(rows) < 4:
        return None
    q = np.asarray([r[1] for r in rows], dtype=np.float64)
    X = np.asarray(embedder.encode([r[0] for r in rows]), dtype=np.float64)
    oof = oof_scores(X, q)
    if oof is None:
        return None
    return float(roc_auc_score(q >= 0.5, oof))


def act(s: LabelSession, key: str, client: Client, model: dict[str, Any], embedder: Embedder) -> None:
    """One keyboard key (or its button): `1` negative, `2` positive, `0` skip, `u` undo, arrows move."""
    s.error = ""
    try:
        if key in ("1", "2"):
            _label(s, POSITIVE if key == "2" else NEGATIVE, client, model, embedder)
        elif key == "0":
            if s.current is not None:
                s.pos += 1
                s.message = "Skipped."
        elif key == "u":
            _undo(s, client)
        elif key == "ArrowLeft":
            s.pos = max(0, s.pos - 1)
        elif key == "ArrowRight":
            s.pos = min(len(s.queue), s.pos + 1)
        refill(s, client)
    except LabelsRefused as exc:
        s.error = str(exc)
    except Exception as exc:  # noqa: BLE001 - shown on the page, never a traceback
        s.error = f"{type(exc).__name__}: {exc}"


def _label(
    s: LabelSession, quality: float, client: Client, model: dict[str, Any], embedder: Embedder
) -> None:
    item = s.current
    if item is None:
        return
    label = {"trait": s.trait, "text": item["text"], "quality": quality}
    result = add_labels(client, Model.model_validate(model), [label])
    if result.route == "feedback":
        s.given.append(label)
    s.history.append({"item": item, "quality": quality, "route": result.route, "ids": result.ids})
    s.queue.pop(s.pos)
    s.message = result.message
    auc = out_of_fold_auc(client, s, embedder)
    if auc is not None:
        s.curve.append((len(s.history), auc))


def _undo(s: LabelSession, client: Client) -> None:
    if not s.history:
        s.message = "Nothing to undo."
        return
    last = s.history[-1]
    if last["route"] == "feedback":
        s.message = "A label sent as feedback to a trained model cannot be withdrawn."
        return
    for sid in last["ids"]:
        client.delete_sample(s.handle, sid)
    s.history.pop()
    s.queue.insert(s.pos, last["item"])
    if s.curve and s.curve[-1][0] > len(s.history):
        s.curve.pop()
    s.message = "Undone: the label was removed."


def parse_texts(name: str, data: bytes) -> list[str]:
    """Texts of an uploaded file: CSV (a `text` column, else the first), JSONL (`text` field or a string), TXT
    (one a line). Blank entries are dropped; the service trims and de-duplicates the rest."""
    import io
    import json

    import pandas as pd

    lower = name.lower()
    if lower.endswith(".csv"):
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
        column = "text" if "text" in frame.columns else frame.columns[0]
        values = frame[column].tolist()
    elif lower.endswith((".jsonl", ".ndjson", ".json")):
        values = []
        for line in data.decode("utf-8-sig").splitlines():
            if line.strip():
                item = json.loads(line)
                values.append(item.get("text", "") if isinstance(item, dict) else item)
    else:
        values = data.decode("utf-8-sig").splitlines()
    return [v for v in (str(x) for x in values) if v.strip()]

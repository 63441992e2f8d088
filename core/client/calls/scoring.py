"""Scoring texts, one or many, and comparing versions on them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from core.client import progress as progress_mod
from core.client import tabular
from core.client.calls.base import ClientBase, _version_ref
from core.client.models import (
    CompareResult,
    ScoreResult,
)
from core.client.paths import path as _path
from core.client.retry import Safety
from core.contract import (
    DEFAULT_SCORE_REQUEST_CHARS,
    MAX_SCORE_TEXTS,
)
from core.json_types import JsonObject

#: What a text may take the service to score under load, beyond the client's own timeout: a request's
#: timeout grows with the texts it sends, so a long request is never a timeout by design (a text of the
#: largest embedder's window takes tens of milliseconds of one core; this leaves room for a fair share of
#: cores among many callers). A request that still times out is retried: the texts it had scored are in
#: the service's embedding cache, so the retry does not embed them again.
SECONDS_PER_TEXT = 1.0


def work_timeout(base: float, texts: Sequence[str]) -> float:
    """A score request's timeout: the client's, and `SECONDS_PER_TEXT` a text (an explanation: ten)."""
    return base + SECONDS_PER_TEXT * len(texts)


def score_batches(
    texts: Sequence[str], per_request: int, chars: int = DEFAULT_SCORE_REQUEST_CHARS
) -> list[tuple[int, list[str]]]:
    """(index of the first text, texts) of each request `score_many` sends: at most `per_request` texts and
    `chars` characters in all (the service refuses a larger request, 413), a longer text alone."""
    out: list[tuple[int, list[str]]] = []
    start, size = 0, 0
    for i, text in enumerate(texts):
        if i > start and (i - start == per_request or size + len(text) > chars):
            out.append((start, list(texts[start:i])))
            start, size = i, 0
        size += len(text)
    if len(texts) > start:
        out.append((start, list(texts[start:])))
    return out


class ScoringCalls(ClientBase):
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
        if not isinstance(content, str):
            raise TypeError(
                f"score takes one text, not {type(content).__name__}: "
                "score many with client.score_many(handle, texts)"
            )
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
        contents: Sequence[str] | object,
        *,
        version: str | int | None = None,
        explain: bool = False,
        progress: progress_mod.Progress = None,
        column: str | None = None,
    ) -> tabular.ScoreResults:
        """Score many texts (a list, tuple, numpy array or pandas Series; 100 a request, 1 with `explain`).

        A DataFrame, a 2-D array or a dict is a `TypeError` before anything is sent (`core.texts`), unless
        `column` names the DataFrame's column of texts. One `ScoreResult` per text, in order, as
        `ScoreResults`: `.to_frame()` (the Series' index kept), `.to_numpy()`. `progress`: `True`/`"tqdm"` or
        `progress(done, total)` (core.client.progress)."""
        texts = tabular.texts(contents, "score_many", column)
        if column is not None:
            frame: Any = contents  # Any: a DataFrame, as tabular.texts checked (pandas is not imported here)
            contents = frame[column]  # its Series: scores keep the frame's index
        out: list[ScoreResult] = []
        per_request = 1 if explain else MAX_SCORE_TEXTS  # the service explains one content per request
        reporter = progress_mod.resolve(progress, f"scoring {handle}", unit="texts")
        reporter.update(0, len(texts))
        try:
            for start, chunk in score_batches(texts, per_request):
                body: JsonObject = {"content": chunk}
                if version is not None:
                    body["version"] = _version_ref(version)
                if explain:
                    body["explain"] = True
                wait = work_timeout(self.timeout, chunk) * (10 if explain else 1)
                answer = self.request("POST", _path("models", handle, "score"), json=body, timeout=wait)
                envelope = answer.json()
                common = {k: v for k, v in envelope.items() if k not in ("results", "scores")}
                results = sorted(envelope.get("results", []), key=lambda r: r.get("index", 0))
                for r in results:
                    merged = {**common, **r, "index": start + int(r.get("index", 0))}
                    out.append(ScoreResult.model_validate(merged))
                reporter.update(len(out), len(texts))
        except KeyboardInterrupt:
            raise KeyboardInterrupt(
                f"score_many stopped after {len(out)} of {len(texts)} texts (scoring stores nothing)"
            ) from None
        finally:
            reporter.close(len(out) == len(texts))
        return tabular.ScoreResults(out, tabular.index_of(contents))

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

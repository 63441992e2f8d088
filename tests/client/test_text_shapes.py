"""Wrong shapes never score: every call that takes texts reads them by one rule (`core.texts`).

Generated inputs of every shape a notebook holds go to the client's calls against the real service (the
app on its transport, counted) and to the engine's `Scorer`: a list of texts gives one score per text; a
DataFrame, a 2-D array, a mapping, bytes (and for a call of many texts, one str) raise a `TypeError` naming
what to pass, before any request is sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.client import Client
from core.engine import Scorer
from tests.support.client import BASE_URL, Service, make_draft

TEXTS = st.lists(
    st.text(alphabet="abcdefghij klmnop", min_size=1, max_size=30).filter(str.strip), min_size=1, max_size=5
)


class Counting(httpx.BaseTransport):
    """The service's own transport, counting the requests that reach it."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner, self.sent = inner, 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent += 1
        return self.inner.handle_request(request)


@pytest.fixture(scope="module")
def trained(service: Service) -> Iterator[tuple[Client, Counting, str, Scorer]]:
    counting = Counting(service.app_transport)
    with Client(BASE_URL, service.keys["author"], transport=counting, backoff=0.0) as client:
        handle = make_draft(client, service.handle("shapes"))
        client.wait(handle, client.train(handle, effort="low").run_id, timeout=120)
        scorer = Scorer.from_snapshot(client.export_snapshot(handle, 1))
        yield client, counting, handle, scorer


# Each shape: (build it from texts, is it a list of texts?)
SHAPES: dict[str, tuple[Callable[[list[str]], Any], bool]] = {
    "list": (list, True),
    "tuple": (tuple, True),
    "series": (lambda t: pd.Series(t, index=[10 * i for i in range(len(t))]), True),
    "array 1-D": (np.array, True),
    "array 2-D": (lambda t: np.array(t).reshape(len(t), 1), False),
    "DataFrame": (lambda t: pd.DataFrame({"Sentence": t}), False),
    "dict": (lambda t: {f"k{i}": x for i, x in enumerate(t)}, False),
    "bytes": (lambda t: t[0].encode(), False),
    "str": (lambda t: t[0], False),  # one text: refused by the calls of many texts, a batch of one for Scorer
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=TEXTS, shape=st.sampled_from(sorted(SHAPES)))
def test_every_shape_scores_per_text_or_is_refused_before_sending(
    trained: tuple[Client, Counting, str, Scorer], texts: list[str], shape: str
) -> None:
    client, counting, handle, scorer = trained
    build, accepted = SHAPES[shape]
    before = counting.sent
    if accepted:
        results = client.score_many(handle, build(texts))
        assert len(results) == len(texts)
        assert [r.index for r in results] == list(range(len(texts)))
        assert scorer.score(build(texts)).shape == (len(texts), 1)
        if shape == "series":
            assert list(results.to_frame().index) == [10 * i for i in range(len(texts))]
        return
    for call in (
        lambda v: client.score_many(handle, v),
        lambda v: client.add_pool_texts(handle, v),
        lambda v: client.import_pool(handle, v),
        lambda v: client.preview_trait(
            handle, {"name": "Tone", "positive_label": "warm", "negative_label": "cold"}, v
        ),
    ):
        with pytest.raises(TypeError) as refused:
            call(build(texts))
        if shape == "DataFrame":
            assert 'df["Sentence"]' in str(refused.value) and 'column="Sentence"' in str(refused.value)
    assert counting.sent == before  # nothing reached the service
    if shape == "str":
        assert scorer.score(build(texts)).shape == (1, 1)
    else:
        with pytest.raises(TypeError, match="Scorer.score"):
            scorer.score(build(texts))


def test_a_frame_names_its_column_of_texts(trained: tuple[Client, Counting, str, Scorer]) -> None:
    client, _, handle, scorer = trained
    frame = pd.DataFrame({"Sentence": ["Dear Sir, kindly reply.", "yo lol"], "Label": [1, 0]}, index=[7, 9])
    scores = client.score_many(handle, frame, column="Sentence")
    assert len(scores) == 2 and list(scores.to_frame().index) == [7, 9]
    assert np.allclose(scores.to_numpy(), client.score_many(handle, frame["Sentence"]).to_numpy(), atol=1e-6)
    assert scorer.score(frame, column="Sentence").shape == (2, 1)
    with pytest.raises(ValueError, match="no column 'Text'"):
        client.score_many(handle, frame, column="Text")
    with pytest.raises(TypeError, match="column= names a DataFrame's column"):
        client.score_many(handle, ["a text"], column="Sentence")


def test_a_perspective_migration_refuses_a_frame_of_its_log(
    trained: tuple[Client, Counting, str, Scorer],
) -> None:
    from core.client.perspective_migration import migrate

    client, counting, handle, _ = trained
    before = counting.sent
    log = pd.DataFrame({"text": ["a comment", "another"], "TOXICITY": [0.9, 0.1]})
    with pytest.raises(TypeError, match=r"read_log\(data, text_column="):
        migrate(client, handle, log, old_threshold=0.5)  # type: ignore[arg-type]  # the misuse under test
    assert counting.sent == before

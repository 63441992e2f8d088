"""The Versions page's history timeline, against the real local service."""

from __future__ import annotations

import json

import pytest

from core.client import Client
from core.timeline import ACTIVE, segments
from tests.support.apptest import no_exception, page

pytestmark = pytest.mark.usefixtures("app_env")


def test_versions_page_shows_the_history_timeline(client: Client, trained: str) -> None:
    at = page("versions", trained)
    at.run()
    no_exception(at)
    charts = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    timeline = next(c for c in charts if c["layout"]["title"]["text"].startswith("History"))
    lanes = {trace["y"][0] for trace in timeline["data"]}
    labels = {trace["text"][0] for trace in timeline["data"]}
    assert lanes >= {ACTIVE, "first"} and labels >= {"v1", "v2"}

    # The segments behind it: v1 active until v2 was activated; tag `first` still on v1.
    parts = segments(client.history(trained))
    active = [(s.version_no, s.end is None) for s in parts if s.lane == ACTIVE]
    assert active == [(1, False), (2, True)]
    assert [(s.version_no, s.end) for s in parts if s.lane == "first"] == [(1, None)]

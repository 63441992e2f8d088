"""Property-based API testing over the served OpenAPI document: no 5xx, responses match the schema."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from service.app import create_app
from service.db import transaction
from service.keys import create_key
from tests.service.conftest import make_settings
from tests.service.helpers import TRAITS, auth, samples

HEADERS: dict[str, str] = {}


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    data_dir: Path = tmp_path_factory.mktemp("schemathesis")
    app = create_app(make_settings(data_dir, run_worker=False))
    ctx = app.state.ctx
    with transaction(ctx.sessions) as s:
        HEADERS.update(auth(create_key(s, ["acme", "public"], "authoring")))
    # A model with data, so generated requests that name it reach deeper code.
    from fastapi.testclient import TestClient

    with TestClient(app) as client:
        client.post("/v1/models", json={"handle": "acme.demo"}, headers=HEADERS)
        client.post("/v1/models/acme.demo/traits", json={"traits": TRAITS}, headers=HEADERS)
        client.post("/v1/models/acme.demo/samples", json={"samples": samples()}, headers=HEADERS)
    yield schemathesis.openapi.from_asgi("/v1/openapi.json", app)
    ctx.close()


CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


def test_api_conforms(api_schema: schemathesis.schemas.BaseSchema) -> None:
    """Every operation, a few generated requests each (positive and negative data)."""
    failures: list[str] = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 18
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=6,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case: schemathesis.Case) -> None:
                case.call_and_validate(headers=HEADERS, checks=CHECKS)

            try:
                run()
            except Unsatisfiable:  # no invalid input exists (e.g. GET /health has no parameters)
                continue
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: B036 - schemathesis raises exception groups; report all together
                failures.append(f"{operation.label} [{mode.value}]: {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)

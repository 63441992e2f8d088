"""Property-based API testing over the served OpenAPI document, with every check schemathesis has.

The service runs under uvicorn on loopback (the guard middleware, the body limit and the real HTTP stack
included) and schemathesis reads `/v1/openapi.json` from it, as a client would."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
import schemathesis.specs.openapi.checks  # noqa: F401 - registers the OpenAPI checks
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS as REGISTERED
from schemathesis.config import SchemathesisConfig
from schemathesis.core.result import Ok
from schemathesis.specs.openapi import converter

from service.process.api import create_app
from service.store.api_keys import create_key
from service.store.db import transaction
from tests.support.service import TRAITS, auth, make_settings, samples, serving

pytestmark = pytest.mark.slow  # ~95 s idle: left out of `make test-fast`

HEADERS: dict[str, str] = {}
# Perspective's contract answers a well-formed request it cannot serve (an attribute the model lacks, no model
# named) with 400 INVALID_ARGUMENT, as Google's service does (docs/perspective.md); the /v1 API never uses 400
# for that, so only those two operations accept it as an answer to valid data.
CONFIG = SchemathesisConfig.from_dict(
    {
        "operations": [
            {
                "include-path-regex": "^/v1alpha1/",
                "checks": {
                    "positive_data_acceptance": {
                        "expected-statuses": ["2xx", "400", "401", "403", "404", "409", "429"]
                    }
                },
            }
        ]
    }
)
# Schemathesis' part here: generated and malformed input on every operation answered without a 5xx, inside
# the error envelope (who may call what is tests/service/test_auth_matrix.py's, every operation × caller).
# 4 derandomized examples a mode give every operation valid and malformed cases (each one checked to have
# had some); 6 and 14 (~2,400 cases) ran the same checks on more of the same inputs.
EXAMPLES_PER_MODE = 4  # 89 operations × positive and negative data; a few have no negative data
MIN_CASES = 650  # 89 × 2 × 4 less the operations with fewer possible inputs (GET /health)


# Schemathesis folds a string's maxLength into its pattern as a quantifier: `^[^\x00]*$` with maxLength 100000
# becomes `^[^\x00]{0,100000}$`, which jsonschema_rs takes ~1.4 s to canonicalise, again for every mutated
# schema of the negative mode - most of the test's time. Above this bound the two keywords are left as the
# document states them: they allow and forbid exactly the same strings.
LONGEST_FOLDED_BOUND = 10_000
_fold_bound_into_pattern = converter.update_pattern_in_schema


def _fold_short_bounds_only(schema: dict[str, object]) -> None:
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and max_length > LONGEST_FOLDED_BOUND:
        return
    _fold_bound_into_pattern(schema)


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.schemas.BaseSchema]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(converter, "update_pattern_in_schema", _fold_short_bounds_only)
        yield from _served_schema(tmp_path_factory)


def _served_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[schemathesis.schemas.BaseSchema]:
    data_dir: Path = tmp_path_factory.mktemp("schemathesis")
    # Limits off: thousands of generated writes from one key in one namespace would meet 429 by design
    # (the limits have their own tests: test_rate_limits.py).
    app = create_app(make_settings(data_dir, run_worker=False, write_rate_per_s=0, import_rate_per_s=0))
    ctx = app.state.ctx
    with transaction(ctx.sessions) as s:
        HEADERS.update(auth(create_key(s, ["acme", "public"], "authoring")))
    with serving(app) as (host, port):
        base = f"http://{host}:{port}"
        import httpx

        # A model with data, so generated requests that name it reach deeper code.
        with httpx.Client(base_url=base, headers=HEADERS) as client:
            client.post("/v1/models", json={"handle": "acme.demo"}).raise_for_status()
            client.post("/v1/models/acme.demo/traits", json={"traits": TRAITS}).raise_for_status()
            client.post("/v1/models/acme.demo/samples", json={"samples": samples()}).raise_for_status()
            # The documented examples reach the model's embedder (a suggestion for its trait): load it here,
            # so no generated case waits out the client's timeout for a first load.
            warm = {"trait": "formality"}
            client.post("/v1/models/acme.demo/pool/suggest", json=warm, timeout=300).raise_for_status()
        yield schemathesis.openapi.from_url(f"{base}/v1/openapi.json", config=CONFIG)
    ctx.close()


# Every check schemathesis has: server errors, status codes, content types, response headers and schemas,
# negative data rejected, positive data accepted, missing headers, unsupported methods and Allow, use after
# DELETE, resource availability, ignored auth, object-level authorization.
CHECKS = REGISTERED.get_all()


def test_api_conforms_with_every_check(api_schema: schemathesis.schemas.BaseSchema) -> None:
    failures: list[str] = []
    cases = 0
    covered: set[str] = set()
    results = list(api_schema.get_all_operations())
    assert all(isinstance(r, Ok) for r in results), results  # every operation of the document loads
    operations = [r.ok() for r in results if isinstance(r, Ok)]
    assert len(operations) >= 43
    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @given(case=operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=EXAMPLES_PER_MODE,
                deadline=None,
                derandomize=True,
                database=None,
                suppress_health_check=list(HealthCheck),
            )
            def run(case: schemathesis.Case) -> None:
                nonlocal cases
                if case.query and case.meta is not None and case.meta.generation.mode.is_positive:
                    # Cursors are minted and signed by the server: no generated string is a valid one. Forged
                    # cursors are 400 invalid_cursor, checked in test_hostile_sweep and test_models.
                    case.query.pop("cursor", None)
                cases += 1
                covered.add(case.operation.label)
                # The registry holds check classes beside functions; call_and_validate runs both (its
                # annotation names functions only).
                case.call_and_validate(headers=HEADERS, checks=CHECKS)  # type: ignore[arg-type]

            try:
                run()
            except Unsatisfiable:  # no invalid input exists (e.g. GET /health has no parameters)
                continue
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: B036 - schemathesis raises exception groups; report all together
                failures.append(f"{operation.label} [{mode.value}]: {str(exc)[:1500]}")
    assert not failures, f"{len(failures)} failing:\n\n" + "\n\n".join(failures)
    print(f"schemathesis: {cases} cases on {len(operations)} operations")
    assert cases >= MIN_CASES, cases
    assert covered == {o.label for o in operations}, {o.label for o in operations} - covered

"""docs/openapi.json: the OpenAPI document the service serves at `/v1/openapi.json`, kept in the repository
so a clone has the contract without running anything. `python -m harness.openapi_document` rewrites it;
tests/project/test_openapi_document.py fails while the committed file differs (an endpoint, field or error
added without writing the document again).

The document depends only on the routes and schemas, not on the settings: it is built from an app on a
throwaway SQLite database and written with sorted keys, so the same code always writes the same bytes."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from core.json_types import JsonObject
from service.config.settings import Settings
from service.context import Context
from service.process.api import create_app

ROOT = Path(__file__).resolve().parents[1]
DOCUMENT = ROOT / "docs" / "openapi.json"


def document() -> JsonObject:
    """What `/v1/openapi.json` answers, built without serving: no worker, no lifespan."""
    with tempfile.TemporaryDirectory(prefix="openapi-") as tmp:
        data = Path(tmp)
        settings = Settings.from_env(
            data_dir=data, database_url=f"sqlite:///{data / 'scoring.sqlite'}", run_worker=False
        )
        ctx = Context.build(settings)
        try:
            return create_app(settings, context=ctx).openapi()
        finally:
            ctx.close()


def render() -> str:
    return json.dumps(document(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    DOCUMENT.write_text(render(), encoding="utf-8")
    print(f"wrote {DOCUMENT.relative_to(ROOT)}")

"""`/v1/docs` works without internet: the page and Swagger UI's files come from the service itself."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.service import Svc, served

# Rules beside the store: the SQLite cases cover them (tests/service/conftest.py).
pytestmark = pytest.mark.database_free

LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}


def referenced_urls(page: str) -> list[str]:
    """Every address the docs page makes the browser fetch: `src` and `href` attributes, and the document
    Swagger UI is told to load (`url: '…'`)."""
    attributes = re.findall(r"""(?:src|href)=["']([^"']+)["']""", page)
    return attributes + re.findall(r"""\burl:\s*'([^']+)'""", page)


def test_docs_page_and_its_assets_come_from_the_service(svc: Svc) -> None:
    page = svc.client.get("/v1/docs")  # no key: the docs are open, as the document is
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    urls = referenced_urls(page.text)
    assert "http://" not in page.text and "https://" not in page.text and "//" not in "".join(urls)
    assert all(u.startswith("/v1/") for u in urls), urls
    assert "/v1/openapi.json" in urls
    wanted = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
    assets = {u: wanted[Path(u).suffix] for u in urls if Path(u).suffix in wanted}
    assert sorted(Path(u).suffix for u in assets) == [".css", ".js", ".png"], urls
    for url, media in assets.items():
        got = svc.client.get(url)
        assert got.status_code == 200, url
        assert got.headers["content-type"].split(";")[0] == media, (url, got.headers["content-type"])
        assert len(got.content) > 100, url
    # A file that is not there is a 404, not a 401: the asset folder needs no key either.
    missing = svc.client.get("/v1/docs/assets/nothing-here.js")
    assert missing.status_code == 404


def test_docs_render_with_only_loopback_reachable(tmp_path: Path, browser: Any) -> None:
    """A real server on loopback and Chromium with every other host cut off (as on a machine without
    internet): the operations are drawn, and the page never even asks for another host."""
    outside: list[str] = []

    def only_loopback(route: Any) -> None:
        if urlsplit(route.request.url).hostname in LOOPBACK:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    with served(tmp_path, None, "--no-worker") as (base, _process, _output):  # the docs start no run
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        try:
            page.route("**/*", only_loopback)
            page.goto(f"{base}/docs")
            operations = page.locator(".opblock-summary-path")
            operations.first.wait_for(timeout=60_000)
            paths = {operations.nth(i).inner_text().replace("\u200b", "") for i in range(operations.count())}
            assert "/v1/models" in paths and "/v1/models/{handle}/score" in paths, sorted(paths)
            assert page.get_by_text("Model Scoring Service").first.is_visible()
            assert outside == []
        finally:
            page.close()


def test_try_it_out_fills_in_a_realistic_body_the_service_takes(svc: Svc) -> None:
    """Swagger UI's *Try it out* filled every text field from its pattern (random characters): each request
    body now carries an example, valid against its own schema, and the examples run as a journey."""
    import jsonschema

    doc = svc.client.get("/v1/openapi.json").json()
    bodies = {}
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            for media, content in operation.get("requestBody", {}).get("content", {}).items():
                assert "example" in content, (method, path, media)
                bodies[(method, path, media)] = content["example"]
                if media == "application/json":
                    schema = {**content["schema"], "components": doc["components"]}
                    jsonschema.validate(content["example"], schema, cls=jsonschema.Draft202012Validator)

    def example(method: str, path: str) -> Any:
        return bodies[(method, f"/v1{path}", "application/json")]

    created = svc.client.post("/v1/models", json=example("post", "/models"), headers=svc.author)
    assert created.status_code == 201, created.text
    handle = created.json()["handle"]
    for path in ("/traits", "/traits/preview", "/samples", "/pool"):
        got = svc.client.post(
            f"/v1/models/{handle}{path}",
            json=example("post", f"/models/{{handle}}{path}"),
            headers=svc.author,
        )
        assert got.status_code in (200, 201), (path, got.text)

"""docs/openapi.json is the document the service serves, so a clone has the API's contract without running
the service: an endpoint, field or answer added without writing the file again fails here until
`python -m harness.openapi_document` rewrites it."""

from __future__ import annotations

from harness.openapi_document import DOCUMENT, render


def test_the_committed_document_is_the_served_one() -> None:
    assert DOCUMENT.read_text(encoding="utf-8") == render(), (
        "docs/openapi.json is out of date: run `python -m harness.openapi_document` and commit it"
    )

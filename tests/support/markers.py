"""Markers follow from the fixtures a test uses (directly or through another fixture), never from where its
file lies: a new or renamed test file gets its tier from what it asks for, and `make test-fast` (which leaves
out every marker below) never depends on a list being kept up to date."""

from __future__ import annotations

import pytest

# The fixture -> the marker of every test that uses it.
MARKER_OF_FIXTURE = {
    "pg_cluster": "postgres",  # a throwaway PostgreSQL cluster (also the `postgres` case of `database_url`)
    "browser": "browser",  # headless Chromium (tests/support/chromium.py)
    "running_fleet": "fleet",  # API and worker processes on one database (tests/scale/conftest.py)
    "server_process": "server",  # a service process of the test's own (tests/support/processes.py)
    # A program of the test's own: code in a new interpreter, a command line (tests/support/processes.py).
    "fresh_python": "process",
    "run_program": "process",
    "local_service": "pages",  # the pages against the workbench's local service (tests/app/conftest.py)
    # The auth matrix's cells, every operation x every caller (tests/service/test_auth_matrix.py): its writes
    # on a copy of a built world each, its reads on one shared world.
    "world_templates": "matrix",
    "shared_worlds": "matrix",
}


def mark_by_fixtures(item: pytest.Item) -> None:
    fixtures = set(getattr(item, "fixturenames", ()))
    for fixture, marker in MARKER_OF_FIXTURE.items():
        if fixture in fixtures:
            item.add_marker(marker)

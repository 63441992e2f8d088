"""Suite-wide settings: tests never touch the network or the user's data dir."""

from __future__ import annotations

import gc
import os
import random
from pathlib import Path

import pytest

from harness.pgcluster import pg_cluster_fixture
from tests import durations
from tests.support.chromium import browser  # noqa: F401 - registered here for every suite
from tests.support.embedders import suite_embedder_dir
from tests.support.markers import mark_by_fixtures
from tests.support.processes import fresh_python, run_program, server_process  # noqa: F401 - registered for every suite

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# One throwaway PostgreSQL cluster per test session, shared by every suite that asks for `pg_cluster`.
pg_cluster = pg_cluster_fixture()


@pytest.fixture(scope="session", autouse=True)
def embedder_dir() -> Path:
    """Where the int8 graphs are: the graphs' cache of the user running the tests (core/embedders/graphs.py),
    for its xdist workers and the processes they start too, whatever HOME a test gives them. `make test`
    builds the graphs there before the suite (tests/support/embedders.py); a graph missing still is built on
    first use, once (the others wait for that build: core/embedders/int8_build.py)."""
    path = suite_embedder_dir()
    os.environ["SCORING_EMBEDDER_DIR"] = str(path.parent)
    return path


# Seconds per test file at the last full run (`tests/durations.json`, written by `make durations` from CI's
# junit report). `make test` runs xdist workers that take whole files in collection order
# (--no-loadscope-reorder): starting the longest first lets the workers finish together, instead of one
# running a long file alone at the end. A worker takes its next file while two tests of its current one are
# left, so a one-test file (a long browser session) has the next file waiting behind it. A file not in the
# timings (a new one) counts as quick.
DURATIONS = durations.load()


SEED_ENV = "SCORING_TEST_SEED"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--seed",
        type=int,
        default=None,
        help=f"the seed of the tests that act like a person (typing pauses, choices); also ${SEED_ENV}",
    )


@pytest.fixture
def person(request: pytest.FixtureRequest) -> random.Random:
    """A person's randomness (pauses, typing speed, which rows): a new seed each run, so runs cover more
    than one rhythm, printed before the test starts and kept in the junit report, so a failure replays
    with `--seed N` or `SCORING_TEST_SEED=N`."""
    given = request.config.getoption("--seed")
    if given is None and os.environ.get(SEED_ENV):
        given = int(os.environ[SEED_ENV])
    seed = random.randrange(1 << 30) if given is None else given
    print(f"seed {seed} (replay: pytest {request.node.nodeid} --seed {seed})")
    request.node.user_properties.append(("seed", seed))
    return random.Random(seed)


def pytest_configure(config: pytest.Config) -> None:
    # Collecting imports every test module and all they import (the service, Streamlit, the engine):
    # long-lived objects only, which the cyclic collector walked again and again as they were made (about a
    # fifth of the collection's CPU, paid by every xdist worker). It collects none meanwhile, then what was
    # loaded is frozen out of later collections, as the service's own start-up does
    # (service/commands/serving.py).
    gc.disable()


def pytest_collection_finish(session: pytest.Session) -> None:
    gc.freeze()
    gc.enable()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        mark_by_fixtures(item)
    # Longest first; the sort is stable, so a file's tests stay together and in their order.
    items.sort(key=lambda item: -DURATIONS.get(item.nodeid.split("::")[0], 0.0))

"""Suite-wide settings: tests never touch the network or the user's data dir."""

from __future__ import annotations

import os
import random

import pytest

from harness.pgcluster import pg_cluster_fixture

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# One throwaway PostgreSQL cluster per test session, shared by every suite that asks for `pg_cluster`.
pg_cluster = pg_cluster_fixture()

# The files that take half a minute or more each, longest first (beside each: CI's junit time summed per
# file). `make test` runs two xdist workers that take whole files in collection order
# (--no-loadscope-reorder): starting these first lets the workers finish together, instead of one running a
# long file alone at the end. A worker takes its next file while two tests of its current one are left, so a
# one-test file (a long browser session) has the next file waiting behind it. Re-sort from a fresh CI junit
# when a file grows.
LONG_FILES = (
    "tests/app/test_browser.py",  # 243 s
    "tests/scale/test_fleet.py",  # 231 s
    "tests/engine/test_e5_quantized.py",  # 165 s
    "tests/service/test_schemathesis.py",  # 162 s
    "tests/app/test_sample_grid_browser.py",  # 136 s
    "tests/app/test_reopen_browser.py",  # 122 s
    "tests/app/test_newcomer_browser.py",  # 111 s
    "tests/benchmarks/test_scale_benchmark.py",  # 88 s
    "tests/app/test_team_week_browser.py",  # 78 s
    "tests/service/test_auth_matrix.py",  # 78 s
    "tests/app/test_demo_browser.py",  # 75 s
    "tests/app/test_ui_waits_browser.py",  # 74 s
    "tests/client/test_notebook.py",  # 73 s
    "tests/app/test_import_browser.py",  # 71 s
    "tests/engine/test_batch_invariance.py",  # 127 s at 15 examples; 8 now
    "tests/app/test_label_browser.py",  # 59 s
    "tests/app/test_signin_browser.py",  # 58 s
    "tests/engine/test_quantized_minilm.py",  # 56 s
    "tests/app/test_team_browser.py",  # 54 s
    "tests/app/test_pages.py",  # 50 s
    "tests/client/test_local_session.py",  # 42 s
    "tests/deploy/test_procfile.py",  # 42 s
    "tests/app/test_role_pages.py",  # 41 s
    "tests/app/test_label_controls_browser.py",  # 41 s
    "tests/app/test_samples_tabs_browser.py",  # 37 s
    "tests/client/test_local_service.py",  # 37 s
    "tests/app/test_team_pages.py",  # 37 s
    "tests/benchmarks/test_team_benchmark.py",  # 34 s
    "tests/deploy/test_secrets.py",  # 33 s
    "tests/app/test_heldout_browser.py",  # 29 s
    "tests/engine/test_explain_real_texts.py",  # 27 s
    "tests/service/test_team.py",  # 26 s
    "tests/app/test_first_visit_browser.py",  # 25 s
    "tests/service/test_busy_bookkeeping.py",  # 25 s
    "tests/app/test_inert_text_browser.py",  # 25 s
    "tests/app/test_evaluation_browser.py",  # 24 s
    "tests/service/test_snapshot_reads.py",  # 24 s
)


# Folders whose tests start whole fleets of processes (servers, workers, queues): `fleet`.
FLEET_FOLDERS = ("tests/scale/", "tests/deploy/")
# Files whose tests each start a service (or a notebook kernel that does) as a process of their own, on
# loopback: `server`. The workbench tests share one service per worker and stay in the fast lane.
SERVER_FILES = (
    "tests/service/test_server.py",
    "tests/service/test_backup.py",
    "tests/service/test_hostile_sweep.py",
    "tests/service/test_zdr_bytes.py",
    "tests/client/test_local_service.py",
    "tests/client/test_local_orphan.py",
    "tests/client/test_local_session.py",
    "tests/client/test_perspective_doc.py",
    "tests/client/test_notebook.py",
    "tests/benchmarks/test_load_benchmark.py",
    "tests/benchmarks/test_mixed_load_benchmark.py",
)


def _mark_by_what_it_uses(item: pytest.Item) -> None:
    """Markers follow from what a test uses: `make test-fast` never depends on a file remembering them."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if "pg_cluster" in fixtures or "postgres" in item.nodeid.split("::")[-1]:
        item.add_marker(pytest.mark.postgres)
    if "browser" in fixtures:
        item.add_marker(pytest.mark.browser)
    if item.nodeid.startswith(FLEET_FOLDERS):
        item.add_marker(pytest.mark.fleet)
    if item.nodeid.split("::")[0] in SERVER_FILES:
        item.add_marker(pytest.mark.server)


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        _mark_by_what_it_uses(item)
    rank = {path: i for i, path in enumerate(LONG_FILES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))  # stable: files stay whole

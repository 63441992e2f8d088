"""Suite-wide settings: tests never touch the network or the user's data dir."""

from __future__ import annotations

import os

from tests.support.pgcluster import pg_cluster_fixture

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

# One throwaway PostgreSQL cluster per test session, shared by every suite that asks for `pg_cluster`.
pg_cluster = pg_cluster_fixture()

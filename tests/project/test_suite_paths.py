"""The paths tests/conftest.py names exist: a moved or renamed test file would otherwise silently lose its
place in the xdist order (tests/durations.json) or its `server`/`fleet` marker, and slip into the fast
lane."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import FLEET_FOLDERS, SERVER_FILES

ROOT = Path(__file__).resolve().parents[2]


def test_every_path_conftest_names_exists() -> None:
    missing = [path for path in SERVER_FILES if not (ROOT / path).is_file()]
    # Folders are matched against node ids with startswith: without the trailing slash, tests/scale would
    # also match a tests/scale_x/.
    missing += [folder for folder in FLEET_FOLDERS if not (folder.endswith("/") and (ROOT / folder).is_dir())]
    assert not missing, f"tests/conftest.py names paths that are not there (moved? update it): {missing}"

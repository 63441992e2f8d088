"""Where the real labelled datasets are: `../shared/datasets`, a folder beside the checkout, not in it.

The benchmarks read them in place (nothing is copied into the repository or downloaded). A clone on its own
has no such folder: `$SCORING_DATASETS` names it wherever it is; a git worktree under `<root>/wt/<branch>`
finds `<root>/shared/datasets` too.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CANDIDATES = (ROOT.parent / "shared" / "datasets", ROOT.parents[1] / "shared" / "datasets")


def find_datasets() -> Path | None:
    """The datasets folder, or None when this machine has none."""
    env = os.environ.get("SCORING_DATASETS")
    if env:
        return Path(env)
    return next((path for path in CANDIDATES if path.is_dir()), None)


def datasets_dir() -> Path:
    """The datasets folder; without one, exit with what to do (a benchmark's first step)."""
    found = find_datasets()
    if found is None:
        raise SystemExit(
            "the labelled datasets are missing: this benchmark reads ../shared/datasets (beside the "
            "checkout, not part of it); set SCORING_DATASETS to the folder that holds them"
        )
    return found

"""`core.contract.pole_of` for arrays of qualities: the one pole rule, vectorised for the engine.

A quality above the middle is on the positive pole, below it on the negative pole, and at it neutral (within
`NEUTRAL_TOLERANCE`, the rounding of a mean of votes): on neither. Neutral samples define no pole, so
everything that fits or measures a pole (training, the metrics, flags, suggestions, discovery's and
synthesis's axes) leaves them out and says how many it left out.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from core.contract import NEUTRAL_QUALITY, NEUTRAL_TOLERANCE


def pole_signs(quality: Iterable[float] | np.ndarray) -> np.ndarray:
    """Per quality: +1 positive, -1 negative, 0 neutral (int8), as `pole_of` says for each one."""
    off = np.asarray(quality, dtype=np.float64) - NEUTRAL_QUALITY
    signs: np.ndarray = np.where(np.abs(off) <= NEUTRAL_TOLERANCE, 0, np.sign(off)).astype(np.int8)
    return signs


def on_poles(quality: Iterable[float] | np.ndarray) -> np.ndarray:
    """Which qualities are on a pole (not neutral): the rows a pole's fit or metric may use."""
    on: np.ndarray = pole_signs(quality) != 0
    return on

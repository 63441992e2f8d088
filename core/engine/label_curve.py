"""How well a trait's labels separate so far: the out-of-fold ROC-AUC behind the Label page's chart.

The workbench embeds the labelled texts (once per process, through its embedding cache) and asks this module
for one point of the curve when the analyst wants it, never on every label.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import roc_auc_score

from core.engine.poles import pole_signs
from core.engine.trait_model import BalancedCosineTrait

FOLDS = 5
MIN_PER_POLE = 2  # stratified folds need two of each pole


def out_of_fold_auc(X: np.ndarray, quality: np.ndarray) -> float | None:
    """ROC-AUC of the positive pole ranked by scores from folds that did not see each row.

    `X` holds L2-normalised embeddings (n, dim). Neutral labels (quality 0.5) are on neither pole and are left
    out. None until each pole has `MIN_PER_POLE` labels: below that there is no held-out score to rank.
    """
    signs = pole_signs(quality)
    on = signs != 0
    positive = signs[on] > 0
    if min(int(positive.sum()), int((~positive).sum())) < MIN_PER_POLE:
        return None
    q = np.asarray(quality, dtype=np.float64)[on]
    model = BalancedCosineTrait(shrinkage=1.0, folds=FOLDS).fit(np.asarray(X, dtype=np.float64)[on], q)
    if model.oof_raw_ is None:
        return None
    # The calibrated score is a monotone function of the raw one, so the raw scores rank the same.
    return float(roc_auc_score(positive, model.oof_raw_.mean(axis=0)))

"""Moved to `core.engine.flags` (machine learning lives in the engine); these names stay importable here."""

from core.engine.flags import flag_samples, knn_similarity, oof_scores, robust_z

__all__ = ["flag_samples", "knn_similarity", "oof_scores", "robust_z"]

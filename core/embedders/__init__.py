"""Embedders behind one interface (`Embedder`), each with a stable id recorded in snapshots."""

from core.embedders.base import Embedder
from core.embedders.batching import BatcherClosedError, BatchingEmbedder
from core.embedders.cache import CachedEmbedder, MemoryStore, SqliteStore, cache_key
from core.embedders.hashing import HashingEmbedder
from core.embedders.minilm import MINILM_ID, MiniLMEmbedder
from core.embedders.registry import available, get_embedder

__all__ = [
    "MINILM_ID",
    "BatcherClosedError",
    "BatchingEmbedder",
    "CachedEmbedder",
    "Embedder",
    "HashingEmbedder",
    "MemoryStore",
    "MiniLMEmbedder",
    "SqliteStore",
    "available",
    "cache_key",
    "get_embedder",
]

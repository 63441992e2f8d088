"""The vectors a local service keeps on this machine, read by checks that run in this process.

A local service (`core.start_local_service`) caches the vector of every text it embeds for a model without
zero-data-retention in its data directory (`EMBEDDING_CACHE`, keyed by embedder id and text:
`core.embedders.cache_key`). `flags()` and `LocalService.scorer` read it first, so the texts the service
trained on or scored are not embedded again in a notebook; the API itself answers no vectors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.embedders import Embedder

#: The service's embedding cache in its data directory (service/context.py names it too).
EMBEDDING_CACHE = "embeddings.sqlite"


def cached_embedder(base: Embedder, cache: Path) -> Embedder:
    """`base` reading the vectors kept in the cache file `cache` first: a read-only view, whose misses `base`
    encodes here and never writes there; `base` itself when there is no such file."""
    if not cache.is_file():
        return base
    from core.embedders import CachedEmbedder, SqliteStore

    return CachedEmbedder(base, SqliteStore(cache), write=False)

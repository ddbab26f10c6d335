"""Plan every corpus op file for several target layouts and check the planned module against
TVM's numbers (interpreter): a sweep for the planner's soundness on real TVM output.

    python3 benchmarks/plan_corpus.py [--details]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tir  # noqa: E402
from layout.planner import plan  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "ops"
TARGETS = [
    {"nn.conv2d": ("NHWC", "OHWI"), "nn.max_pool2d": "NHWC", "nn.avg_pool2d": "NHWC"},
    {"nn.conv2d": ("NCHW4c", "OIHW4i4o"), "nn.max_pool2d": "NCHW4c", "nn.avg_pool2d": "NCHW4c"},
    {"nn.conv1d": "NWC", "nn.conv3d": ("NDHWC", "DHWIO"), "nn.max_pool3d": "NDHWC"},
]


def check(path: Path, targets: dict) -> "tuple[str, int]":
    mod = tir.parse(path.read_text())
    if mod.main is None or not hasattr(mod.main, "blocks"):
        return "skip", 0
    data = np.load(path.with_suffix(".npz"))
    xs = [data[f"arr_{i}"] for i in range(len(mod.main.params))]
    new, summary = plan(mod, targets)
    out = tir.run(new, *xs)
    ok = np.allclose(np.asarray(out, dtype=np.float64), data["out"].astype(np.float64), rtol=1e-4, atol=1e-4,
                     equal_nan=True)
    return ("ok" if ok else "MISMATCH"), len(summary.converted)


def main() -> int:
    details = "--details" in sys.argv
    bad, converted, total = 0, 0, 0
    t0 = time.perf_counter()
    for path in sorted(CORPUS.glob("*.py")):
        if not path.with_suffix(".npz").exists():
            continue
        for targets in TARGETS:
            try:
                status, n = check(path, targets)
            except Exception as err:  # report and go on: this is a sweep
                status, n = f"ERROR {type(err).__name__}: {err}", 0
            if status == "skip":
                break
            total += 1
            converted += n > 0
            if status != "ok":
                bad += 1
                print(f"{path.name} {list(targets)[0]}: {status}")
            elif details and n:
                print(f"{path.name} {list(targets)[0]}: ok ({n} converted)")
    print(f"{total} plans, {converted} with conversions, {bad} failures, {time.perf_counter() - t0:.1f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

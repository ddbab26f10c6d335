"""BYOC on every corpus op: partition each case for ONNX Runtime and compare with TVM's numbers.

    python3 benchmarks/byoc_corpus.py [--details]

Counts cases offloaded and equal to TVM's output (rtol/atol 1e-4), cases kept in TIR (with
the reasons under --details), mismatches (must be 0: a mismatch is a wrong offload) and
errors.
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import byoc  # noqa: E402
import tir  # noqa: E402
from tir import relax as R  # noqa: E402

OPS = ROOT.parent / "shared" / "corpus" / "ops"


def check_case(case: dict) -> "tuple[str, str]":
    """(status, detail) for one corpus case: offloaded, kept, mismatch, skipped."""
    mod = tir.parse((OPS / f"{case['id']}.py").read_text())
    if not case.get("numeric") or not isinstance(mod.main, R.Function):
        return "skipped", ""
    part = byoc.partition(mod, "onnxruntime")
    info = byoc.summary(part)
    if not info["regions"]:
        return "kept", "; ".join(k["reason"] for k in info["kept"])
    data = np.load(OPS / f"{case['id']}.npz")
    out = np.asarray(tir.run(part, *[data[f"arr_{i}"] for i in range(len(mod.main.params))]), dtype=np.float64)
    ref = data["out"].astype(np.float64)
    if out.shape == ref.shape and np.allclose(out, ref, rtol=1e-4, atol=1e-4, equal_nan=True):
        return "offloaded", ""
    return "mismatch", f"max abs diff {np.max(np.abs(out - ref)) if out.shape == ref.shape else 'shape'}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--details", action="store_true")
    args = ap.parse_args()
    cases = json.loads((OPS / "index.json").read_text())["cases"]
    counts = collections.Counter()
    t = time.perf_counter()
    for case in cases:
        try:
            status, detail = check_case(case)
        except Exception as err:  # report, keep going
            status, detail = "error", f"{type(err).__name__}: {err}"
        counts[status] += 1
        if status in ("mismatch", "error") or (args.details and status == "kept"):
            print(f"{status:9s} {case['id']}: {detail[:200]}")
    print(dict(counts), f"({time.perf_counter() - t:.1f} s)")
    return 1 if counts["mismatch"] or counts["error"] else 0


if __name__ == "__main__":
    sys.exit(main())

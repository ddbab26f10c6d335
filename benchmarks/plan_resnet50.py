"""Plan ResNet-50 (the corpus model) to NHWC and check it: layouts by re-analysis, number of
activation transforms, and the same output as the unplanned module (C engine).

    python3 benchmarks/plan_resnet50.py [--engine c|interp] [--layout nn.conv2d=NHWC:OHWI ...]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tir  # noqa: E402
import layout  # noqa: E402
from opinfo import analyze  # noqa: E402

MODEL = ROOT.parent / "shared" / "corpus" / "models" / "resnet50.py"
SPATIAL = ("nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d")


def inputs_for(mod, seed=0):
    """Random inputs at the scale of a trained network (He-initialised weights, batch-norm
    statistics near 0 and 1), so the softmax output is not saturated."""
    rng = np.random.default_rng(seed)
    out = []
    for p in mod.main.params:
        shape = tuple(int(s) for s in p.type.shape)
        if not p.type.dtype.is_float:  # unused shape operands of the ONNX import
            out.append(np.ones(shape, dtype=p.type.dtype.numpy))
            continue
        arr = rng.standard_normal(shape)
        if len(shape) >= 2 and p.name.endswith("_w_0"):
            fan_in = int(np.prod(shape[1:])) if len(shape) == 4 else shape[-1]
            arr = arr * np.sqrt(2.0 / fan_in)
            if len(shape) == 2:  # the classifier: keep the logits small (untrained statistics grow)
                arr = arr * 1e-3
        elif p.name.endswith(("_s_0", "_riv_0")):
            arr = 1.0 + 0.1 * np.abs(arr)
        elif len(shape) == 1:
            arr = 0.1 * arr
        out.append(arr.astype(np.float32))
    return out


def layouts_of(mod) -> dict:
    found = {}
    for name, f in mod.prim_funcs():
        for op in analyze(f).ops:
            if op.name in SPATIAL:
                lay = op.attrs.get("data_layout") or op.attrs.get("layout")
                found.setdefault(lay, []).append(name)
    return found


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", default="c", choices=["c", "interp"])
    ap.add_argument("--no-run", action="store_true")
    args = ap.parse_args()
    mod = tir.parse(MODEL.read_text())
    t0 = time.perf_counter()
    new, summary = layout.plan(mod, {"nn.conv2d": ("NHWC", "OHWI"), "nn.max_pool2d": "NHWC"})
    print(f"plan: {time.perf_counter() - t0:.2f} s")
    acts = summary.activation_transforms()
    print(f"converted ops: {len(summary.converted)}, transforms: {len(summary.transforms)} "
          f"({len(acts)} on activations), left: {len(summary.unchanged)}")
    for t in acts:
        print(f"  {t.value}: {t.src} -> {t.dst} ({t.reason})")
    print("spatial ops by layout after planning:", {k: len(v) for k, v in layouts_of(new).items()})
    if args.no_run:
        return 0
    xs = inputs_for(mod)
    t0 = time.perf_counter()
    ref = tir.run(mod, *xs, engine=args.engine)
    t1 = time.perf_counter()
    out = tir.run(new, *xs, engine=args.engine)
    t2 = time.perf_counter()
    err = float(np.max(np.abs(np.asarray(ref) - np.asarray(out))))
    ref_arr = np.asarray(ref)
    print(f"output {ref_arr.shape}: min {ref_arr.min():.3g} max {ref_arr.max():.3g} std {ref_arr.std():.3g}")
    print(f"run original {t1 - t0:.1f} s, planned {t2 - t1:.1f} s ({args.engine}); max abs diff {err:.2e}")
    return 0 if err <= 1e-4 else 1


if __name__ == "__main__":
    sys.exit(main())

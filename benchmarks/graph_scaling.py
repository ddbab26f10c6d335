"""Time the graph-level passes -- BYOC partitioning and layout planning -- on ResNet-50 (the
corpus model) and on a main holding the network twice side by side (every binding copied
with fresh variables, both copies calling the same PrimFuncs), as the ratio to the first.

    python3 benchmarks/graph_scaling.py [--repeat 3]

The ratio is at most about 2.0 when the passes grow linearly with the number of bindings
(kernel analysis is shared: both copies call the same PrimFuncs, answered once; planning's
ratio is near 1.0, its time being the conversion and re-analysis of kernels, which both
copies share too). A pass that looks
at every binding for every region grows quadratically: outlining did, before session 41,
and took 25 s on densenet121's 1,509 bindings. Partitioning runs without codegen (the
external modules' build does not depend on main's size). Times are the best of --repeat.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tir  # noqa: E402
from tir import relax as R  # noqa: E402
from tir.functor import substitute  # noqa: E402
from byoc import memoized, partition  # noqa: E402
from layout.planner import plan  # noqa: E402

MODEL = ROOT.parent / "shared" / "corpus" / "models" / "resnet50.py"
TARGETS = {"nn.conv2d": ("NHWC", "OHWI"), "nn.max_pool2d": "NHWC"}


def side_by_side(mod):
    """``mod`` whose main runs its network twice on separate inputs and returns both results."""
    main = mod.main
    mapping = {p: R.RVar(p.name + "_b", p.type) for p in main.params}
    for b in main.bindings:
        mapping[b.var] = R.RVar(b.var.name + "_b", b.var.type)
    blocks = []
    for blk in main.blocks:
        copies = tuple(substitute(b, mapping) for b in blk.bindings)
        if isinstance(blk, R.DataflowBlock):
            outs = tuple(blk.outputs) + tuple(mapping[o] for o in blk.outputs)
            blocks.append(R.DataflowBlock(tuple(blk.bindings) + copies, outs))
        else:
            blocks.append(R.BindingBlock(tuple(blk.bindings) + copies))
    ret = R.Tuple((main.ret, substitute(main.ret, mapping)))
    ret_type = R.TupleType((main.ret_type, main.ret_type)) if main.ret_type is not None else None
    params = tuple(main.params) + tuple(mapping[p] for p in main.params)
    return mod.with_function("main", attrs.evolve(main, params=params, blocks=tuple(blocks), ret=ret,
                                                  ret_type=ret_type))


def timed(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not MODEL.exists():
        print(f"{MODEL} not found (needs ../shared beside the project)")
        return 1
    one = tir.parse_file(str(MODEL))
    two = side_by_side(one)
    n1, n2 = len(one.main.bindings), len(two.main.bindings)
    for label, run in (("byoc partition (onnxruntime, no codegen)",
                        lambda m, an: partition(m, "onnxruntime", analyze=an, codegen=False)),
                       ("layout plan (conv2d NHWC:OHWI, max_pool2d NHWC)",
                        lambda m, an: plan(m, TARGETS, an))):
        an = memoized()
        run(one, an)  # warm-up: every kernel analysed once, shared by both sizes
        t1 = timed(lambda: run(one, an), args.repeat)
        t2 = timed(lambda: run(two, an), args.repeat)
        print(f"{label}: {n1} bindings {t1:.3f} s, {n2} bindings {t2:.3f} s, ratio {t2 / t1:.2f} (linear: about 2.00 or less)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

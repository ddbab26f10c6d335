"""Execution benchmarks: interpreter vs C engine vs a plain scalar walk vs numpy.

    python3 benchmarks/exec.py [--skip-scalar] [--skip-resnet]

Prints, for conv2d and matmul: the vectorised interpreter, the C engine (compiled, warm), a
plain scalar walk of the same loops (``interpret(..., vectorize=False)``, on a smaller size
so it finishes) and a numpy reference; a conv2d whose pad block is computed at the output
rows (a ``compute_at`` schedule), with the interpreter's loop distribution and without it; a
matmul whose reduction loop is split by a factor that does not divide it, as one masked
combine and walked step by step;
then the whole ResNet-50 ``main`` from the shared corpus (batch 1, 224x224, random weights)
with both engines.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import tir  # noqa: E402
from tir.graph_exec import GraphExecutor  # noqa: E402
from tir.interp import interpret  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def best_of(fn, repeat=3) -> float:
    """Shortest wall time of ``repeat`` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def best_without(module, name, stand_in, fn, repeat=1) -> float:
    """:func:`best_of` ``fn`` with ``module.name`` replaced by ``stand_in`` (a mechanism of
    the interpreter switched off), restored afterwards."""
    original = getattr(module, name)
    setattr(module, name, stand_in)
    try:
        return best_of(fn, repeat)
    finally:
        setattr(module, name, original)


def conv_ref(x, w, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), (pad, pad), (pad, pad)])
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, o, oh, ow), np.float32)
    for dy in range(kh):
        for dx in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, dy:dy + oh, dx:dx + ow], w[:, :, dy, dx])
    return out


def conv_case(n, c, hw, o, k):
    f = tir.topi.lower("nn.conv2d", [((n, c, hw, hw), "float32"), ((o, c, k, k), "float32")], padding=[k // 2] * 4)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, hw, hw)).astype(np.float32)
    w = rng.standard_normal((o, c, k, k)).astype(np.float32)
    return f, (x, w), lambda: conv_ref(x, w, k // 2)


def matmul_case(m, k, n):
    f = tir.topi.lower("matmul", [((m, k), "float32"), ((k, n), "float32")])
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    return f, (a, b), lambda: a @ b


def scalar_ratio(case, args) -> str:
    """Scalar walk vs vectorised interpreter on the same (small) function."""
    f, inputs, _ = case(*args)
    out = tir.run(f, *inputs)
    t_vec = best_of(lambda: tir.run(f, *inputs))
    t0 = time.perf_counter()
    interpret(f, *inputs, np.zeros_like(out), vectorize=False)
    t_scalar = time.perf_counter() - t0
    return f"scalar walk {t_scalar:8.3f} s, interp {t_vec * 1e3:7.2f} ms -> interp is {t_scalar / t_vec:6.0f}x faster"


def op_row(name, case, args, small, skip_scalar) -> None:
    f, inputs, ref = case(*args)
    t_np = best_of(ref)
    out_i = tir.run(f, *inputs)
    t_i = best_of(lambda: tir.run(f, *inputs))
    fn = tir.build(f)
    out = np.zeros_like(out_i)
    fn(*inputs, out)
    t_c = best_of(lambda: fn(*inputs, out))
    err = float(np.abs(out - out_i).max())
    print(f"{name} {args}: interp {t_i * 1e3:8.2f} ms | C {t_c * 1e3:8.2f} ms | numpy {t_np * 1e3:8.2f} ms "
          f"| interp/numpy {t_i / t_np:5.1f}x  C/numpy {t_c / t_np:5.1f}x | max |C - interp| {err:.2g}")
    if not skip_scalar:
        print(f"    {name} {small}: {scalar_ratio(case, small)}")


COMPUTE_AT = """
@T.prim_func
def f(x: T.Buffer((1, {C}, {H}, {H}), "float32"), w: T.Buffer(({C}, {C}, 3, 3), "float32"),
      out: T.Buffer((1, {C}, {H}, {H}), "float32")):
    pad = T.alloc_buffer((1, {C}, {H} + 2, {H} + 2))
    for oc, oh in T.grid({C}, {H}):
        for ic, kh, wp in T.grid({C}, 3, {H} + 2):
            with T.block("pad"):
                vn = T.axis.spatial(1, 0)
                vc, vw = T.axis.remap("SS", [ic, wp])
                vrow = T.axis.spatial({H} + 2, oh + kh)
                pad[vn, vc, vrow, vw] = T.if_then_else(1 <= vrow and vrow <= {H} and 1 <= vw and vw <= {H},
                                                      x[0, vc, vrow - 1, vw - 1], T.float32(0))
        for ow, ic, kh, kw in T.grid({H}, {C}, 3, 3):
            with T.block("conv"):
                vo, vy, vx, vc, vkh, vkw = T.axis.remap("SSSRRR", [oc, oh, ow, ic, kh, kw])
                with T.init():
                    out[0, vo, vy, vx] = T.float32(0)
                out[0, vo, vy, vx] = out[0, vo, vy, vx] + pad[0, vc, vy + vkh, vx + vkw] * w[vo, vc, vkh, vkw]
"""


def compute_at_row(c: int = 8, h: int = 16) -> None:
    """A compute_at conv2d: sibling nests under the output-row loops, run one after the
    other (the interpreter's loop distribution) vs walked one row at a time."""
    import tir.interp_distribute as dist

    f = tir.parse(COMPUTE_AT.replace("{C}", str(c)).replace("{H}", str(h)))
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, c, h, h)).astype(np.float32)
    w = rng.standard_normal((c, c, 3, 3)).astype(np.float32)
    out = np.zeros((1, c, h, h), np.float32)
    t_dist = best_of(lambda: interpret(f, x, w, out))
    err = float(np.abs(out - conv_ref(x, w, 1)).max())
    walked = np.zeros_like(out)
    t_walk = best_without(dist, "run_distributed", lambda loop, ctx: False, lambda: interpret(f, x, w, walked))
    print(f"conv2d compute_at (1, {c}, {h}, {h}): distributed {t_dist * 1e3:7.2f} ms, walked per row "
          f"{t_walk * 1e3:8.2f} ms -> {t_walk / t_dist:5.1f}x | max |interp - numpy| {err:.2g}, "
          f"same as the walk: {bool(np.allclose(out, walked, rtol=1e-5, atol=1e-5))}")


SPLIT_MATMUL = """
@T.prim_func
def f(a: T.Buffer(({M}, {K}), "float32"), b: T.Buffer(({K}, {M}), "float32"), c: T.Buffer(({M}, {M}), "float32")):
    for i, j, ko, ki in T.grid({M}, {M}, ({K} + 7) // 8, 8):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            vk = T.axis.reduce({K}, ko * 8 + ki)
            T.where(ko * 8 + ki < {K})
            with T.init():
                c[vi, vj] = T.float32(0)
            c[vi, vj] = c[vi, vj] + a[vi, vk] * b[vk, vj]
"""


def split_reduction_row(m: int = 48, k: int = 100) -> None:
    """A matmul whose reduction loop is split by a factor that does not divide it (``T.where``
    on the reduction loops): one masked combine vs the reduction walked step by step."""
    import tir.interp_nest as nest

    f = tir.parse(SPLIT_MATMUL.replace("{M}", str(m)).replace("{K}", str(k)))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, m)).astype(np.float32)
    out = np.zeros((m, m), np.float32)
    t_comb = best_of(lambda: interpret(f, a, b, out))
    walked = np.zeros_like(out)  # with no masked lanes the nest is left to the ordered walk
    t_walk = best_without(nest, "_reduced_mask", lambda n, full: None, lambda: interpret(f, a, b, walked))
    print(f"matmul ({m}, {k}, {m}), reduction split by 8: masked combine {t_comb * 1e3:7.2f} ms, walked "
          f"{t_walk * 1e3:8.2f} ms -> {t_walk / t_comb:5.1f}x | max |interp - numpy| "
          f"{float(np.abs(out - a @ b).max()):.2g}, same as the walk: {bool(np.allclose(out, walked, rtol=1e-5, atol=1e-5))}")


def resnet_inputs(main):
    rng = np.random.default_rng(0)
    arrays = []
    for p in main.params:
        shape = tuple(int(getattr(d, "value", d)) for d in p.type.shape)
        arrays.append((rng.standard_normal(shape) * 0.05).astype(str(p.type.dtype)))
    return arrays


def resnet_row() -> None:
    path = CORPUS / "models" / "resnet50.py"
    if not path.exists():
        print("resnet50: corpus not found, skipped")
        return
    mod = tir.parse(path.read_text())
    inputs = resnet_inputs(mod.main)
    interp = GraphExecutor(mod, engine="interp")
    t_i = best_of(lambda: interp.run(*inputs), repeat=2)
    c = GraphExecutor(mod, engine="c")
    t0 = time.perf_counter()
    out_c = c.run(*inputs)
    t_first = time.perf_counter() - t0
    t_c = best_of(lambda: c.run(*inputs), repeat=3)
    err = float(np.abs(out_c - interp.run(*inputs)).max())
    print(f"resnet50 main (1x3x224x224): interp {t_i:6.2f} s | C {t_c:6.3f} s "
          f"(first call incl. compile/cache load {t_first:5.1f} s) | max |C - interp| {err:.2g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skip-scalar", action="store_true")
    ap.add_argument("--skip-resnet", action="store_true")
    args = ap.parse_args()
    op_row("conv2d", conv_case, (1, 64, 56, 64, 3), (1, 8, 12, 16, 3), args.skip_scalar)
    op_row("matmul", matmul_case, (512, 512, 512), (48, 48, 48), args.skip_scalar)
    compute_at_row()
    split_reduction_row()
    if not args.skip_resnet:
        resnet_row()


if __name__ == "__main__":
    main()

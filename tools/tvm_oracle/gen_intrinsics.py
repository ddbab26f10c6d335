"""TVM's numbers for scalar intrinsics, binary operators and casts, as a corpus check_numeric reads.

    gen_intrinsics.py OUT [SEED]

Each case is one PrimFunc ``o[i] = EXPR(x[i][, y[i]])`` over 256 elements (float16 and float32
math intrinsics on inputs in their domain, binary float and integer operators, casts), built by
TVM for llvm and run on random inputs: OUT/CASE.py, OUT/CASE.npz (``arr_0``, ``arr_1``, ``out``)
and OUT/index.json, so that

    python3 ../shared/tools/check_numeric.py OUT --engine interp|c --details

compares both engines with TVM element for element (within check_numeric's 1e-4). Cases TVM
itself cannot build (float16 asin/acos/atan/sinh/cosh/asinh/acosh/erf/log1p, float fmod and
floordiv in TVM 0.27) are listed and skipped.
"""
import json
import os
import sys

import numpy as np
import tvm
from tvm.script import from_source
from tvm.script import tirx as T  # noqa: F401  (the scripts below are read in its namespace)

N = 256
UNARY = ["exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sigmoid", "tanh", "sin", "cos",
         "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "erf", "floor", "ceil", "round",
         "trunc", "abs"]
DOMAIN = {"log": (0.05, 8), "log2": (0.05, 8), "log10": (0.05, 8), "log1p": (-0.9, 8), "sqrt": (0, 8),
          "rsqrt": (0.05, 8), "asin": (-0.99, 0.99), "acos": (-0.99, 0.99), "atanh": (-0.99, 0.99), "acosh": (1, 8),
          "exp10": (-3, 3), "sinh": (-5, 5), "cosh": (-5, 5), "tan": (-1.4, 1.4)}
FLOAT_BINARY = ["T.pow(x[v], y[v])", "T.atan2(x[v], y[v])", "T.hypot(x[v], y[v])", "T.copysign(x[v], y[v])",
                "T.nextafter(x[v], y[v])", "x[v] / y[v]", "T.truncmod(x[v], y[v])", "T.max(x[v], y[v])",
                "x[v] * y[v] + x[v]"]
INT_BINARY = ["T.floordiv(x[v], y[v])", "T.floormod(x[v], y[v])", "T.truncdiv(x[v], y[v])", "T.truncmod(x[v], y[v])",
              "x[v] * y[v]", "x[v] + y[v]", "x[v] - y[v]", 'T.shift_right(x[v], T.Cast("{dt}", 2))']
CASTS = [("float16", "int8"), ("float32", "int8"), ("float32", "uint8"), ("float16", "uint8"), ("float32", "int32"),
         ("float16", "float32"), ("float32", "float16"), ("int32", "float16"), ("float32", "bool"), ("int32", "int8")]


def cases():
    """(id, x dtype, y dtype or None, out dtype, expression, (low, high) of x)."""
    for dt in ("float16", "float32"):
        for op in UNARY:
            yield f"{op}_{dt}", dt, None, dt, f"T.{op}(x[v])", DOMAIN.get(op, (-6, 6))
        for k, expr in enumerate(FLOAT_BINARY):
            yield f"fbin{k}_{dt}", dt, dt, dt, expr, (-6, 6)
    for dt in ("int8", "int32", "int64", "uint8"):
        for k, expr in enumerate(INT_BINARY):
            yield f"ibin{k}_{dt}", dt, dt, dt, expr.replace("{dt}", dt), None
    for src, dst in CASTS:
        yield f"cast_{src}_{dst}", src, None, dst, f'T.Cast("{dst}", x[v])', (-300, 300)


def draw(rng, dtype: str, domain):
    if dtype.startswith("float"):
        lo, hi = domain or (-6, 6)
        return rng.uniform(lo, hi, N).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -100), min(info.max, 100), N, endpoint=True).astype(dtype)


def script(dx: str, dy, do: str, expr: str) -> str:
    y = f', y: T.Buffer(({N},), "{dy}")' if dy else ""
    return f'''
@T.prim_func(s_tir=True)
def main(x: T.Buffer(({N},), "{dx}"){y}, o: T.Buffer(({N},), "{do}")):
    for i in range({N}):
        with T.sblock("o"):
            v = T.axis.spatial({N}, i)
            o[v] = {expr}
'''


def main() -> None:
    out = sys.argv[1]
    rng = np.random.default_rng(int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    os.makedirs(out, exist_ok=True)
    index = []
    for cid, dx, dy, do, expr, domain in cases():
        x = draw(rng, dx, domain)
        arrays = [x]
        if dy:
            y = draw(rng, dy, domain)
            if any(k in expr for k in ("/", "div", "mod")):
                y = np.where(y == 0, y.dtype.type(3), y)
            arrays.append(y)
        text = script(dx, dy, do, expr)
        try:
            lib = tvm.compile(tvm.IRModule({"main": from_source(text)}), target="llvm")
            result = tvm.runtime.tensor(np.zeros(N, do))
            lib["main"](*[tvm.runtime.tensor(a) for a in arrays], result)
        except Exception as err:  # TVM cannot build it: not a case
            print(f"SKIP {cid}: {type(err).__name__}: {str(err).splitlines()[0][:100]}")
            continue
        with open(os.path.join(out, cid + ".py"), "w") as f:
            f.write("# from tvm.script import tirx as T\n" + text)
        np.savez(os.path.join(out, cid + ".npz"), **{f"arr_{i}": a for i, a in enumerate(arrays)},
                 out=result.numpy())
        index.append({"id": cid, "op": expr, "inputs": [{"shape": [str(N)], "dtype": str(a.dtype)} for a in arrays],
                      "variant": "plain", "dynamic": False, "numeric": True})
    with open(os.path.join(out, "index.json"), "w") as f:
        json.dump({"generator": f"apache-tvm {tvm.__version__}", "cases": index}, f, indent=1)
    print(len(index), "cases")


if __name__ == "__main__":
    main()

"""Give a generated ops corpus TVM's numbers, like ../shared/corpus/ops (CASE.npz).

    gen_numeric.py CORPUS_DIR [SEED]

For every static case (the sample has no numbers for a symbolic batch) the module is read
by TVM 0.27 (the old ``tir`` dialect rewritten to ``tirx``), built for llvm and run on random
inputs; ``CASE.npz`` then holds ``arr_0..`` (``main``'s parameters, or the PrimFunc's inputs
when the file holds only a PrimFunc, as a ``layout`` case does) and TVM's ``out``, and the
case's ``numeric`` becomes true in ``index.json``. Inputs: floats from a normal
distribution, booleans at random, integers in [0, 2) (indices stay in range; [1, 3) for an op
that divides by them). Cases whose output is a tuple are skipped.

A TVM crash (segfault) ends the process: the case being built is named in
``CORPUS_DIR/numeric.current``; rerun and it is skipped (``numeric.failed``), the cases done
are kept. Then ``python3 ../shared/tools/check_numeric.py CORPUS_DIR --engine interp|c``.
"""
import json
import os
import sys
import zlib
from typing import TypeVar

import numpy as np
import tvm
from tvm import relax
from tvm.script import ir as I, relax as R, tirx as T

DIVIDING = ("divide", "mod", "floor_mod", "trunc_mod", "floor_divide", "trunc_divide", "power")


def module_from_text(src: str):
    """An IRModule read by TVM 0.27 from TVMScript in either dialect (the old ``tir`` one
    rewritten to ``tirx``); shared with build_compare.py."""
    for old, new in (("import tir as T", "import tirx as T"), ("T.block(", "T.sblock("),
                     ("T.alloc_buffer(", "T.sblock_alloc_buffer("), ("T.block_attr(", "T.sblock_attr("),
                     ("@T.prim_func(private=True)", "@T.prim_func(private=True, s_tir=True)"),
                     ('"tir.noalias"', '"tirx.noalias"')):
        src = src.replace(old, new)
    src = "\n".join(line for line in src.splitlines() if not line.startswith(("from tvm.script", "# from")))
    return tvm.script.from_source(src, extra_vars={"I": I, "T": T, "R": R, "TypeVar": TypeVar})


def read_module(path: str):
    return module_from_text(open(path).read())


def draw(rng, shape, dtype: str, op: str) -> np.ndarray:
    if dtype.startswith(("float", "bfloat")):
        return rng.normal(size=shape).astype(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    lo, hi = (1, 3) if op.endswith(DIVIDING) else (0, 2)
    return rng.integers(lo, hi, size=shape).astype(dtype)


def run_case(path: str, op: str, rng):
    mod = read_module(path)
    main = mod["main"] if any(g.name_hint == "main" for g in mod.get_global_vars()) else None
    if isinstance(main, relax.Function):
        args = []
        for p in main.params:
            ty = p.ty
            if not isinstance(ty, relax.TensorType) or ty.shape is None:
                return None, "parameter is not a tensor of known shape"
            args.append(draw(rng, [int(d) for d in ty.shape.values], str(ty.dtype), op))
        ex = tvm.compile(mod, target="llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        res = vm["main"](*[tvm.runtime.tensor(a) for a in args])
        if not hasattr(res, "numpy"):
            return None, "tuple output"
        return args, res.numpy()
    funcs = [(g, f) for g, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc)]
    if len(funcs) != 1:
        return None, "no main and not one PrimFunc"
    g, func = funcs[0]
    bufs = [p.ty for p in func.params]  # TVM 0.27: a parameter's type is its buffer's
    arrays = [draw(rng, [int(d) for d in b.shape], str(b.dtype), op) for b in bufs]
    lib = tvm.compile(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")
    tensors = [tvm.runtime.tensor(a) for a in arrays]
    lib["main"](*tensors)
    return arrays[:-1], tensors[-1].numpy()


def main() -> None:
    corpus = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    index_path = os.path.join(corpus, "index.json")
    index = json.load(open(index_path))
    current = os.path.join(corpus, "numeric.current")
    failed_path = os.path.join(corpus, "numeric.failed")
    failed = set(open(failed_path).read().split()) if os.path.exists(failed_path) else set()
    if os.path.exists(current):  # the last run crashed on this case
        failed.add(open(current).read().strip())
        open(failed_path, "w").write("\n".join(sorted(failed)) + "\n")
        os.remove(current)
    made = skipped = 0
    for case in index["cases"]:
        cid = case["id"]
        npz = os.path.join(corpus, cid + ".npz")
        if case.get("dynamic") or cid in failed:
            continue
        if os.path.exists(npz):
            case["numeric"] = True
            continue
        open(current, "w").write(cid)
        rng = np.random.default_rng([seed, zlib.crc32(cid.encode())])
        try:
            ins, out = run_case(os.path.join(corpus, cid + ".py"), case["op"], rng)
        except Exception as e:  # noqa: BLE001 -- a TVM error on one case skips that case
            ins, out = None, f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
        os.remove(current)
        if ins is None:
            print("SKIP", cid, out, file=sys.stderr)
            skipped += 1
            continue
        np.savez(npz, *ins, out=out)
        case["numeric"] = True
        made += 1
    json.dump(index, open(index_path, "w"), indent=1)
    print(f"{made} made, {skipped} skipped")


if __name__ == "__main__":
    main()

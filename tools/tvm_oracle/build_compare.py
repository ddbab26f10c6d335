"""Build a scheduled corpus case and its unscheduled function with TVM itself and compare
their outputs (development only; needs TVM, like the generators beside it).

``gen_ops.py`` with ``OPINFO_SAVE_PLAIN=1`` writes ``CASE.plain`` beside a scheduled ``CASE.py``.
Both are built for llvm (thread bindings made serial loops, the old ``tir`` dialect rewritten
to 0.27's) and run on the same random inputs, symbolic extents bound to N. What TVM's build
computes can differ from running the loops as written: TVM allocates an intermediate at the
lowest common ancestor of its accesses, fresh at each iteration of the loops around them
(:mod:`opinfo.intermediate_check` models that). Vectorized math (``erf``, ``cos``) and index
inputs drawn out of range make some differences meaningless: read them case by case.

    ../../../tvmenv/bin/python build_compare.py CASE.py [N]
"""
import re
import sys

import numpy as np
import tvm

from gen_numeric import module_from_text


def load(path: str):
    """The one PrimFunc of a TVMScript file, read by TVM 0.27 (thread bindings made serial loops)."""
    src = re.sub(r'T\.thread_binding\(([^,]+), thread="[^"]+"\)', r'range(\1)', open(path).read())
    mod = module_from_text(src)
    (func,) = [f for f in mod.functions.values() if isinstance(f, tvm.tirx.PrimFunc)]
    return func


def run(func, n: int) -> np.ndarray:
    """The last parameter after one call of ``func`` built for llvm on random inputs."""
    return run_all(func, n)[-1]


def run_all(func, n: int) -> list:
    """Every parameter after one call of ``func`` built for llvm on random inputs."""
    lib = tvm.compile(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}), target="llvm")
    rng = np.random.default_rng(0)
    signature = next(line for line in func.script().split("\n") if line.startswith("def "))
    args = []
    for dims, dtype in re.findall(r'\w+: T\.Buffer\(\((.*?),?\), "(\w+)"\)', signature):
        shape = []
        for d in (d.strip() for d in dims.split(",") if d.strip()):
            m = re.fullmatch(r"T\.int64\((\d+)\)", d)
            shape.append(int(m.group(1)) if m else n)
        args.append(rng.normal(size=shape).astype(dtype) if dtype.startswith("float")
                    else rng.integers(0, 2 if dtype == "bool" else 3, size=shape).astype(dtype))
    tensors = [tvm.runtime.tensor(a) for a in args]
    lib["main"](*tensors)
    return [t.numpy() for t in tensors]


def main() -> None:
    path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    scheduled, plain = run(load(path), n), run(load(path[:-3] + ".plain"), n)
    diff = np.abs(scheduled.astype("float64") - plain.astype("float64"))
    bad = np.argwhere(~(diff <= 1e-4))
    print(f"{len(bad)} of {diff.size} elements differ; first: {bad[:8].tolist()}")


if __name__ == "__main__":
    main()

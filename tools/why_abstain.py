#!/usr/bin/env python3
"""Which stage of ``opinfo.analyze`` leaves a PrimFunc unnamed (a development tool).

For every PrimFunc of FILE (or only FUNC) prints the gates ``analyze`` checks before
recognising (partial writes, misrealized loops, uninitialised reads), whether
``normalize`` gives a function, its stages, what the decomposer makes of each output and
the final answer. Usage (from the project root):

    .venv/bin/python tools/why_abstain.py FILE [FUNC]
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tir  # noqa: E402
from opinfo import api  # noqa: E402
from opinfo.coverage import partial_writes  # noqa: E402
from opinfo.decompose import Decomposer  # noqa: E402
from opinfo.intermediate_check import uninitialised_reads  # noqa: E402
from opinfo.normalize import normalize, pads_cut_readings  # noqa: E402
from opinfo.recognize import families  # noqa: E402
from opinfo.semantic import Semantics  # noqa: E402


def report(name: str, func) -> None:
    print("==", name)
    merged = api.merge_partitions(func)
    moved = api.unblockize(api.move_block_loops(merged))
    print("  gates: partial", partial_writes(func), "misrealized", api._misrealized(merged),
          "moved", moved is not merged and (partial_writes(moved) or api._misrealized(moved)),
          "uninitialised", uninitialised_reads(func))
    _readings(func, normalize(func), "normalize")
    for cut in pads_cut_readings(func):  # pad_einsum's blocks cut to demand (api.recognize_ops)
        _readings(func, cut, "cut to demand")
    with np.errstate(all="ignore"):
        info = api.analyze(func)
        print("  answer:", [(o.name, dict(o.attrs)) for o in info.ops],
              "| with conventions:", [o.name for o in api.analyze(func, conventions=True).ops])
        for o in info.undecided:
            print("  undecided:", o.name, dict(o.attrs), "assumed", tuple(o.assumed))


def _readings(func, norm, title: str) -> None:
    print(f"  {title}:", "None (a predicate may drop elements)" if norm is None else "ok")
    if norm is not None:
        sem = Semantics(norm)
        print("  stages:", [(st.buffer.name if st.buffer is not None else None, type(st.expr).__name__)
                            for st in sem.stages], "opaque" if sem.opaque else "")
        if not sem.opaque:
            dec = Decomposer(sem, families.ALL)
            for st in sem.outputs():
                with np.errstate(all="ignore"):
                    ok = dec.output(st)
                print("  output", st.buffer.name, "decomposed" if ok else "not decomposed", [o.name for o in dec.ops])


def main() -> None:
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    parsed = tir.parse_file(sys.argv[1])
    funcs = parsed.prim_funcs() if hasattr(parsed, "prim_funcs") else [(parsed.name or "main", parsed)]
    for name, func in funcs:  # a module, or a file holding one PrimFunc
        if len(sys.argv) < 3 or name == sys.argv[2]:
            report(name, func)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Confirm opinfo's answers by building them again (a development tool, not a test).

For every PrimFunc of the given TVMScript files that opinfo names as one op,
:func:`opinfo.verify_op` lowers the op afresh with the project's lowering library
(``tir.topi.lower``) from the answer alone (its name, attributes and the operands' shapes
and types) and runs both functions in the interpreter on the same random inputs (as
``opinfo analyze --verify`` does). Each answer is then

  confirmed   the fresh function computes what the PrimFunc computes
  DIFFERS     it computes something else: the answer is wrong (or the lowering library and
              TVM disagree on the op; either is a bug)
  unchecked   the answer cannot be built from itself (an operand that is a scalar
              constant, an attribute the library takes otherwise) or a function cannot run
              on random inputs (index tensors out of range)

This reads what the function computes, not which Relax op a corpus recorded: it also judges
scheduled functions (whose loops may compute something else than the op they came from).

Usage (from the project root; a symbolic extent is run at 5):
    .venv/bin/python tools/relower_audit.py FILE_OR_DIR... [--seed 0] [--show]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tir  # noqa: E402
from opinfo.api import analyze_module  # noqa: E402
from opinfo.verify import verify_op  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="TVMScript files or folders of them")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", action="store_true", help="also list confirmed and unchecked answers")
    args = ap.parse_args(argv)
    files = []
    for p in args.paths:
        files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".py")) if os.path.isdir(p) else [p]
    rng = np.random.default_rng(args.seed)
    stats = dict(confirmed=0, differs=0, unchecked=0)
    for path in files:
        try:
            mod = tir.parse_file(path)
            infos = analyze_module(mod)
        except Exception:  # unreadable: opinfo analyze reports those
            continue
        funcs = dict(mod.prim_funcs())
        for name, info in infos.items():
            if len(info.ops) != 1 or name not in funcs:
                continue
            op = info.ops[0]
            same = verify_op(funcs[name], op, rng)
            bad = same is False
            verdict = "unchecked" if same is None else "differs" if bad else "confirmed"
            stats[verdict] += 1
            if bad or args.show:
                print(f"{verdict.upper() if bad else verdict:10} {path} {name} {op.name} {dict(op.attrs)}", flush=True)
    print(stats)
    return 1 if stats["differs"] else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Which scheduled functions of a generated corpus compute what their unscheduled function
does, and what opinfo says of each (a development tool, not a test).

``tools/tvm_oracle/gen_ops.py`` run with ``OPINFO_SAVE_PLAIN=1`` writes, beside a scheduled
case ``CASE.py``, the function TVM legalized before scheduling (``CASE.plain``). Some
schedules (``compute_at`` of a decomposed reduction under a loop it does not depend on,
``reverse_compute_at`` of a pad) make TVM's function compute something else. Both are run
with the project's interpreter on the same random inputs, the storage each allocates
holding junk; each case is then one of

  ok-named     same values, opinfo names the op
  ok-abstain   same values, opinfo abstains (recognition could still improve)
  bad-abstain  different values, opinfo abstains (right: the function is not the op)
  bad-NAMED    different values, opinfo names the op anyway: a confident wrong answer
               that the corpus scorer, which reads the Relax op, cannot see

Usage (from the project root; a symbolic extent is run at 5):
    .venv/bin/python tools/schedule_audit.py CORPUS_DIR... [--show ok-abstain,bad-NAMED]
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
from collections import Counter

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tir  # noqa: E402
from tir.interp_data import InterpError  # noqa: E402
from opinfo.api import analyze_module  # noqa: E402
from opinfo.verify import JUNK, run_copies  # noqa: E402
from tools.fuzz_soundness import _alarm, _differ, _guarded, random_inputs  # noqa: E402


def _run(func, arrays) -> list:
    """Every array after a run in which storage the function allocates itself holds junk
    (7) instead of the interpreter's zeros: a schedule whose reads of an intermediate come
    before its writes (an init stored into another buffer than the one summed) must not pass
    for right because memory was zero."""
    return run_copies(func, arrays, scratch_fill=JUNK)


def _only_func(mod):
    funcs = list(mod.prim_funcs())
    return funcs[0] if len(funcs) == 1 else (None, None)


def audit_case(path: str) -> "tuple[str, str]":
    """(verdict, detail) of one scheduled case whose ``.plain`` sits beside it."""
    scheduled = tir.parse_file(path)
    plain = tir.parse_file(path[:-3] + ".plain")
    name, func = _only_func(scheduled)
    _, reference = _only_func(plain)
    if func is None or reference is None:
        return "skipped", "not one PrimFunc"
    inputs = len(reference.buffers) - 1
    try:
        arrays = random_inputs(reference, np.random.default_rng(0))
        want = _guarded(_run, reference, arrays)[inputs:]
    except InterpError:  # an integer division by an input that drew 0
        arrays = random_inputs(reference, np.random.default_rng(0), low=1)
        want = _guarded(_run, reference, arrays)[inputs:]
    got = _guarded(_run, func, arrays)[inputs:]
    same = not any(_differ(a, b) for a, b in zip(want, got))
    ops = [op.name for op in analyze_module(scheduled)[name].ops]
    verdict = ("ok-" if same else "bad-") + ("named" if same and ops else "NAMED" if ops else "abstain")
    return verdict, ",".join(ops)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="+")
    ap.add_argument("--show", default="bad-NAMED,error", help="verdicts to list case by case")
    args = ap.parse_args()
    show = set(args.show.split(","))
    signal.signal(signal.SIGALRM, _alarm)
    tally: Counter = Counter()
    for corpus in args.corpora:
        for fn in sorted(os.listdir(corpus)):
            if not fn.endswith(".plain"):
                continue
            path = os.path.join(corpus, fn[:-6] + ".py")
            try:
                verdict, detail = audit_case(path)
            except Exception as exc:  # noqa: BLE001 - a tool: report and go on
                verdict, detail = "error", f"{type(exc).__name__}: {str(exc)[:120]}"
            tally[verdict] += 1
            if verdict in show:
                print(f"{verdict:12s} {path} {detail}", flush=True)
    print(dict(sorted(tally.items())))


if __name__ == "__main__":
    main()

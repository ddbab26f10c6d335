#!/usr/bin/env python3
"""Check opinfo on lowered TIR (a development tool, not a test).

For every file of LOWERED (written by ``tvm_oracle/lower_pipeline.py`` from CORPUS) it reads
the lowered function, prints it back (the print must read back to the same text), and runs it
on both engines on random inputs against the unlowered function of CORPUS run by the
interpreter (a symbolic extent is run at 5). With ``LOWERED/tvm_kinds.json``
(``tvm_oracle/lower_kinds.py``) it also compares ``opinfo.analyze``'s kind with TVM's.

Usage (from the project root):
    .venv/bin/python tools/lowered_check.py CORPUS LOWERED [--timeout 60]
Prints one line per problem and a summary count.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import signal
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import opinfo  # noqa: E402
import tir  # noqa: E402
from tir.interp_data import InterpError  # noqa: E402


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def _inputs(func, rng):
    shapes = []
    for b in func.buffers:
        dims = []
        for d in b.shape:
            if hasattr(d, "value"):
                dims.append(int(d.value))
            elif type(d).__name__ in ("Var", "SizeVar"):
                dims.append(5)
            else:
                return None  # an extent the check does not derive from one batch value
        shapes.append(tuple(dims))
    arrays = []
    for b, s in zip(func.buffers[:-1], shapes[:-1]):
        d = str(b.dtype)
        arrays.append(rng.standard_normal(s).astype(d) if "float" in d else
                      (rng.random(s) < 0.5) if d == "bool" else rng.integers(0, 3, s).astype(d))
    return arrays


def check(corpus: str, lowered: str, timeout: int) -> collections.Counter:
    signal.signal(signal.SIGALRM, _alarm)
    counts = collections.Counter()
    for path in sorted(glob.glob(os.path.join(lowered, "*.py"))):
        name = os.path.basename(path)
        signal.alarm(timeout)
        try:
            outcome = _one(os.path.join(corpus, name), path)
        except _Timeout:
            outcome = ("timeout", "")
        except Exception as e:  # noqa: BLE001 - anything else is a finding, reported
            outcome = ("crash", f"{type(e).__name__}: {str(e)[:150]}")
        finally:
            signal.alarm(0)
        counts[outcome[0]] += 1
        if outcome[0] not in ("ok", "symbolic", "orig_fails"):
            print(name, *outcome)
    kinds_path = os.path.join(lowered, "tvm_kinds.json")
    if os.path.exists(kinds_path):
        for name, want in json.load(open(kinds_path)).items():
            (_, func), = tir.parse(open(os.path.join(lowered, name)).read()).prim_funcs()
            got = opinfo.analyze(func).kind
            counts["kind_same" if got == want else "kind_differs"] += 1
            if got != want:
                print(name, "kind", got, "TVM", want)
    return counts


def _one(original: str, lowered: str) -> tuple:
    try:
        module = tir.parse(open(lowered).read())
    except tir.ParseError as e:
        return "parse_error", str(e)[:150]
    (_, low), = module.prim_funcs()
    text = tir.to_script(module)
    if tir.to_script(tir.parse(text)) != text:
        return "print_differs", ""
    (_, orig), = tir.parse(open(original).read()).prim_funcs()
    if len(orig.buffers) != len(low.buffers):
        return "params_differ", ""
    args = _inputs(orig, np.random.default_rng(0))
    if args is None:
        return "symbolic", ""
    try:
        want = tir.run(orig, *args)
    except InterpError:
        return "orig_fails", ""
    for engine in ("interp", "c"):
        got = tir.run(low, *args, engine=engine)
        pairs = zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,))
        if not all(np.allclose(np.asarray(g, float), np.asarray(w, float), rtol=1e-4, atol=1e-4, equal_nan=True)
                   for g, w in pairs):
            return f"{engine}_differs", ""
    return "ok", ""


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus")
    parser.add_argument("lowered")
    parser.add_argument("--timeout", type=int, default=60)
    a = parser.parse_args()
    print(dict(check(a.corpus, a.lowered, a.timeout)))

#!/usr/bin/env python3
"""Differential mutation fuzzer for opinfo's soundness (a development tool, not a test).

Each mutant changes one statement of a TVMScript file: a loop extent or index constant
by one, two block variables swapped, an operator flipped (``+``/``-``, ``max``/``min``,
``<``/``<=``, ...), a float constant changed, an index variable replaced by 0, an index
shifted, another buffer read, a block variable's kind flipped (spatial/reduction), a
block predicate (``T.where``) dropped, an intrinsic for a neighbour (``exp``/``log``,
``tanh``/``sigmoid``, ...), a comparison or connective for its counterpart (``==``/``!=``,
``and``/``or``), a condition of ``if_then_else``/``Select`` negated, or a store dropped. When opinfo still gives a PrimFunc exactly the answer it gave the original, the
original and the mutant are run with the project's interpreter on the same random inputs:
if their outputs differ, the unchanged answer is a confident wrong one (``WRONG`` line).
An answer that changes is counted (``CHANGED``): abstaining or naming the new meaning are
both fine. A changed answer is checked too: one op with :func:`opinfo.verify_op` (the op
lowered afresh with ``tir.topi`` from the answer and run on the same inputs), the ops of a
fused answer one by one with :func:`opinfo.verify.verify_fused` (each run on the values of
the parameters or intermediate buffers it reads); an output other than the mutant's is a
confident wrong new answer (``WRONG-NEW`` line). An unchanged answer with neither attributes
nor operands (``shape_to_tensor``, whose values are the graph's argument) is not run
(``valueless``): a mutant of other values is still that op. An op the
lowering library cannot build from the answer alone (an operand that comes from ``main``,
an output of another shape over symbolic extents) is listed as ``UNCHECKED-NEW`` for a
reader to judge: a reindex copy of a parameter named ``multiply`` for its block's tag was
found so, before scalar constant operands were built.

Usage (from the project root; a symbolic extent is run at 5, and past every constant of the
function's body when that input is small enough -- for a one-op answer, only at values where
the op is defined, :func:`opinfo.verify.defined_at`, else at the first such value below 5):
    .venv/bin/python tools/fuzz_soundness.py [--per-file 12] [--seed 0] [--depth 1] FILE_OR_DIR...
"""
from __future__ import annotations

import argparse
import os
import re
import signal
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tir  # noqa: E402
from opinfo.api import analyze_module  # noqa: E402
from opinfo.recognize.running import above_constants, concrete_shapes, symbols  # noqa: E402
from opinfo.verify import SYMBOLIC, defined_at, differ as _differ, random_inputs, run_copies as run, verify_fused, verify_op  # noqa: E402

TIMEOUT = 30
INT = re.compile(r"T\.int64\((\d+)\)")
FLOAT = re.compile(r"T\.float32\((-?[\d.e+-]+)\)")
SWAPS = [(" + ", " - "), (" - ", " + "), (" * ", " / "), ("T.max(", "T.min("), ("T.min(", "T.max("),
         (" < ", " <= "), (" <= ", " < "), (" // ", " % ")]
INTRINSIC_SWAPS = [("T.exp(", "T.log("), ("T.log(", "T.exp("), ("T.sqrt(", "T.rsqrt("), ("T.rsqrt(", "T.sqrt("),
                   ("T.tanh(", "T.sigmoid("), ("T.sigmoid(", "T.tanh("), ("T.sin(", "T.cos("), ("T.cos(", "T.sin("),
                   ("T.floor(", "T.ceil("), ("T.ceil(", "T.floor("), ("T.round(", "T.floor("), ("T.erf(", "T.tanh("),
                   (" == ", " != "), (" != ", " == "), (" > ", " >= "), (" >= ", " > "), (" and ", " or "),
                   (" or ", " and ")]
"""Kind 10: an intrinsic for a neighbour, a comparison or a connective for its counterpart."""
KINDS = 13


class _TimeOut(Exception):
    pass


def _alarm(*_):
    raise _TimeOut()


def answers(text: str, infos: "dict | None" = None):
    """(module, {function: [(op, sorted attrs, operands, constants)]}) of ``text``: an answer
    naming other operands (``minimum(x, x)`` for ``minimum(x, y)``) or other folded scalar
    constants (``subtract`` of -3.0 for ``subtract`` of 3.0) is a changed one. ``infos``,
    when given, receives each function's :class:`opinfo.FuncInfo`."""
    mod = tir.parse(text)
    found = analyze_module(mod)
    if infos is not None:
        infos.update(found)
    return mod, {name: [(op.name, repr(sorted(dict(op.attrs).items())),
                         tuple((o.role, o.buffer) for o in op.operands), tuple(op.constants))
                        for op in info.ops]
                 for name, info in found.items()}


def _statement_lines(lines) -> list:
    return [i for i, line in enumerate(lines)
            if ("=" in line and "[" in line and not any(k in line for k in ("T.reads", "T.writes", "T.axis",
                                                                          "alloc_buffer", "def ", "R.")))
            or "T.grid(" in line or "T.where" in line or "T.axis.remap(" in line
            or "T.axis.spatial(" in line or "T.axis.reduce(" in line]


def _swapped(line: str, table: list, rng) -> "str | None":
    """``line`` with one occurrence of one ``(old, new)`` pair of ``table`` it holds replaced."""
    options = [(o, r) for o, r in table if o in line]
    if not options:
        return None
    o, r = options[rng.integers(len(options))]
    spots = [m.start() for m in re.finditer(re.escape(o), line)]
    at = spots[rng.integers(len(spots))]
    return line[:at] + r + line[at + len(o):]


def _mutate_line(line: str, kind: int, rng, others=()) -> "str | None":
    if kind in (0, 1):  # an integer constant (a loop extent, an index offset) by one
        found = list(INT.finditer(line))
        if not found:
            return None
        m = found[rng.integers(len(found))]
        value = int(m.group(1)) + (1 if kind == 0 else -1)
        return None if value < 0 else line[:m.start()] + f"T.int64({value})" + line[m.end():]
    if kind == 2:  # one block variable for another
        names = sorted(set(re.findall(r"\bv_\w+", line)))
        if len(names) < 2:
            return None
        a, b = rng.choice(names, 2, replace=False)
        spots = [m.start() for m in re.finditer(r"\b" + a + r"\b", line)]
        at = spots[rng.integers(len(spots))]
        return line[:at] + b + line[at + len(a):]
    if kind in (3, 10):  # an operator; an intrinsic, comparison or connective
        return _swapped(line, SWAPS if kind == 3 else INTRINSIC_SWAPS, rng)
    if kind == 4:  # a float constant
        found = list(FLOAT.finditer(line))
        if not found:
            return None
        m = found[rng.integers(len(found))]
        try:
            value = float(m.group(1))
        except ValueError:
            return None
        new = rng.choice([value * 2 if value else 1.0, value + 1, -value if value else 0.5, 3.0])
        return line[:m.start()] + f"T.float32({new!r})" + line[m.end():]
    if kind == 7:  # another buffer read on the right-hand side
        if " = " not in line or not others:
            return None
        off = line.index(" = ") + 3
        found = [m for m in re.finditer(r"\b([A-Za-z_]\w*)\[", line[off:]) if m.group(1) != "T"]
        if not found:
            return None
        m = found[rng.integers(len(found))]
        pick = [b for b in others if b != m.group(1)]
        if not pick:
            return None
        return line[:off + m.start(1)] + str(rng.choice(pick)) + line[off + m.end(1):]
    if kind == 8:  # a block variable's kind (spatial <-> reduction)
        m = re.search(r'T\.axis\.remap\("([SR]+)"', line)
        if m:
            kinds = list(m.group(1))
            i = int(rng.integers(len(kinds)))
            kinds[i] = "R" if kinds[i] == "S" else "S"
            return line[:m.start(1)] + "".join(kinds) + line[m.end(1):]
        m = re.search(r"T\.axis\.(spatial|reduce)\(", line)
        if not m:
            return None
        return line[:m.start(1)] + ("reduce" if m.group(1) == "spatial" else "spatial") + line[m.end(1):]
    if kind == 11:  # a condition negated (if_then_else, Select)
        spots = [m.end() for m in re.finditer(r"T\.(?:if_then_else|Select)\(", line)]
        if not spots:
            return None
        at = spots[rng.integers(len(spots))]
        return line[:at] + "not " + line[at:]
    if kind == 12:  # a store dropped
        if " = " not in line or "[" not in line.split(" = ", 1)[0] or "T." in line.split(" = ", 1)[0]:
            return None
        return line[:len(line) - len(line.lstrip())] + "T.evaluate(0)"
    if kind == 9:  # a predicate dropped
        return line[:len(line) - len(line.lstrip())] + "# T.where dropped" if "T.where(" in line else None
    rhs = line.split(" = ", 1)[-1]
    if kind == 5:  # an index variable of the right-hand side replaced by 0
        found = list(re.finditer(r"\bv_\w+\b", rhs))
        if not found:
            return None
        off = len(line) - len(rhs)
        m = found[rng.integers(len(found))]
        return line[:off + m.start()] + "T.int64(0)" + line[off + m.end():]
    found = list(re.finditer(r"\bv_\w+\b", line))  # an index shifted
    if not found:
        return None
    m = found[rng.integers(len(found))]
    return line[:m.start()] + f"({m.group(0)} + T.int64(1)) % T.int64(2)" + line[m.end():]


def mutants(text: str, rng, count: int, depth: int = 1) -> list:
    """Up to ``count`` (line, old, new, text) mutants of ``text``, each ``depth`` one-statement
    mutations applied in turn (the lines joined by `` ; ``): two changes that agree (an
    extent and the index that runs over it) can make a function that reads as another op
    where either alone is refused."""
    if depth > 1:
        out = []
        for i, old, new, mutated in mutants(text, rng, count):
            more = mutants(mutated, rng, 1, depth - 1)
            if more:
                _, old2, new2, mutated = more[0]
                out.append((i, f"{old} ; {old2}", f"{new} ; {new2}", mutated))
        return out
    lines = text.split("\n")
    where = _statement_lines(lines)
    others = sorted(set(re.findall(r"\b([A-Za-z_]\w*): T\.Buffer\(", text))
                    | set(re.findall(r"\b([A-Za-z_]\w*) = T\.(?:sblock_)?alloc_buffer\(", text)))
    out, tries = [], 0
    while where and len(out) < count and tries < count * 20:
        tries += 1
        i = int(rng.choice(where))
        new = _mutate_line(lines[i], int(rng.integers(0, KINDS)), rng, others)
        if new and new != lines[i]:
            out.append((i, lines[i].strip(), new.strip(), "\n".join(lines[:i] + [new] + lines[i + 1:])))
    return out


def _guarded(fn, *args):
    signal.alarm(TIMEOUT)
    try:
        return fn(*args)
    finally:
        signal.alarm(0)


def fuzz_file(path: str, per_file: int, rng, stats: dict, depth: int = 1) -> None:
    text = open(path).read()
    try:
        mod, base = _guarded(answers, text)
    except Exception:  # unreadable or too slow: not this tool's business
        return
    if not any(base.values()):
        return
    stats["files"] += 1
    for _, old, new, mutated in mutants(text, rng, per_file, depth):
        stats["mutants"] += 1
        infos: dict = {}
        try:
            mmod, got = _guarded(answers, mutated, infos)
        except Exception:
            continue
        for name, ops in got.items():
            if not ops or name not in base:
                continue
            if ops != base[name]:
                stats["changed"] += 1
                print("CHANGED", path, name, base[name], "->", ops, "|", old, "=>", new, flush=True)
                func = dict(mmod.prim_funcs())[name]
                try:
                    if len(infos[name].ops) == 1:
                        same = _guarded(verify_op, func, infos[name].ops[0], rng)
                    else:  # a fused answer, op by op
                        found = _guarded(verify_fused, func, infos[name].ops, rng)
                        same = False if False in found else None if None in found else True
                except Exception:
                    same = None
                if same is False:
                    stats["wrong_new"] += 1
                    print("WRONG-NEW", path, name, ops, "|", old, "=>", new, flush=True)
                elif same is None:  # for a reader to judge: nothing else checks it
                    stats["unchecked_new"] += 1
                    print("UNCHECKED-NEW", path, name, ops, "|", old, "=>", new, flush=True)
                continue
            stats["same"] += 1
            if all(attrs == "[]" and not operands and not constants for _, attrs, operands, constants in ops):
                # an answer with neither attributes nor operands (shape_to_tensor: the values
                # are main's argument) says nothing a mutant's other values contradict
                stats["valueless"] += 1
                continue
            f0, f1 = dict(mod.prim_funcs())[name], dict(mmod.prim_funcs())[name]
            values = _symbol_values(f0)
            if len(infos[name].ops) == 1 and symbols(f0.buffers):
                # only where the op is defined (a reshape of an (n,) vector to 3 elements: n = 3)
                one = infos[name].ops[0]
                values = [v for v in values if defined_at(f0, one, v) is not False] or \
                    [v for v in range(1, SYMBOLIC) if defined_at(f0, one, v)][:1]
            for value in values:
                try:
                    arrays = _guarded(random_inputs, f0, rng, 0, value)
                    r0, r1 = _guarded(run, f0, arrays), _guarded(run, f1, arrays)
                except Exception:  # odd extents, an interpreter error, too slow: skipped
                    continue
                if any(_differ(a, b) for a, b in zip(r0, r1)):
                    stats["wrong"] += 1
                    print("WRONG", path, name, ops, "|", old, "=>", new, f"(symbols at {value})", flush=True)
                    break


def _symbol_values(func) -> list:
    """The values symbolic extents are run at: :data:`opinfo.verify.SYMBOLIC`, and for a
    function with symbolic extents also one past every constant of its body (a mutated
    clamp ``min(i, 12)`` or test ``i < 12`` bites only beyond 12), when that input is small
    enough to run."""
    first = [SYMBOLIC]
    if not symbols(func.buffers):
        return first
    beyond = max(SYMBOLIC + 2, above_constants(func) + 1)
    shapes = concrete_shapes(list(func.buffers), beyond)
    if shapes is None or sum(int(np.prod(s)) for s in shapes) > BEYOND_ELEMENTS:
        return first
    return first + [beyond]


BEYOND_ELEMENTS = 1 << 18
"""Largest total of elements the run past the constants may take."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", help="TVMScript files or folders of them")
    ap.add_argument("--per-file", type=int, default=12, help="mutants per file (default 12)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--depth", type=int, default=1, help="mutations per mutant (default 1)")
    args = ap.parse_args(argv)
    files = []
    for p in args.paths:
        files += sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".py")) if os.path.isdir(p) else [p]
    signal.signal(signal.SIGALRM, _alarm)
    rng = np.random.default_rng(args.seed)
    stats = dict(files=0, mutants=0, same=0, changed=0, wrong=0, wrong_new=0, unchecked_new=0, valueless=0)
    for path in files:
        fuzz_file(path, args.per_file, rng, stats, args.depth)
    print(stats)
    return 1 if stats["wrong"] or stats["wrong_new"] else 0


if __name__ == "__main__":
    sys.exit(main())

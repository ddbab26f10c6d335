"""Movement ops over a symbolic extent (a batch ``n``): index maps read with sympy.

TVM keeps a symbolic dimension in the loop extents (``n * 2``, ``n + 3``), in offsets
(``x[n - v - 1]``), in guards (``v < n``) and as a modulus (``v % n``). The readers here
compare such extents exactly (:func:`.extent.always_equal`), so a recognizer that needs
integer attributes gets them only when the symbol cancels (``(2 * n) / n``, ``(n + 2) - n``).
"""
from __future__ import annotations

import re

import numpy as np
import sympy

from tir.expr import GE, GT, LE, LT, Add, And, FloorDiv, FloorMod, IntImm, Mul, Sub, Var
from tir.functor import pre_order_visit, substitute, transform

from ..affine import ONE, affine, const_of
from ..bounded import bounded_form
from ..probe import NotEvaluable, evaluate
from .extent import always_equal, sym, sym_int
from .movement_index import grid_over


def mentions(node, variables) -> bool:
    """Whether ``node`` (an expression, or an affine atom) involves one of ``variables``."""
    if node is ONE:
        return False
    ids = {id(v) for v in variables}
    found = []

    def visit(n):
        if id(n) in ids:
            found.append(n)
        return not found

    pre_order_visit(node, visit)
    return bool(found)


def sym_terms(load, space) -> "list | None":
    """Per dimension of ``load``: (output dim or None, coefficient, offset as sympy), where the
    offset may hold symbolic extents but no loop variable; None when not of that form."""
    pos = {id(v): j for j, v in enumerate(space.indices)}
    out = []
    for idx in load.indices:
        f = affine(idx)
        s = sym(idx)
        if f is None or s is None:
            return None
        own = [(k, c) for k, c in f.items() if k is not ONE and id(k) in pos]
        rest = [k for k in f if k is not ONE and id(k) not in pos]
        if len(own) > 1 or any(mentions(k, space.indices) for k in rest):
            return None
        j, c = (pos[id(own[0][0])], own[0][1]) if own else (None, 0)
        off = sympy.expand(s - c * sym(own[0][0])) if own else sympy.expand(s)
        out.append((j, c, off))
    return out


def extent_text(e) -> str:
    """A symbolic extent as Relax prints it in a shape (``n * 3 * 4``: TVMScript's text with
    the integer constants bare)."""
    return re.sub(r"T\.int(?:32|64)\((-?\d+)\)", r"\1", str(e))


def ratio(big, small) -> "int | None":
    """``big / small`` when it is a positive integer for every value of the symbols."""
    if big is None or small is None or small == 0:
        return None
    r = sympy.simplify(big / small)
    return int(r) if r.is_Integer and r > 0 else None


def difference(a, b) -> "int | None":
    """``a - b`` when it is an integer constant."""
    if a is None or b is None:
        return None
    return sym_int(sympy.simplify(a - b))


def solve_single(lhs, rhs) -> "dict | None":
    """{symbol: positive integer} making ``lhs == rhs`` when the one symbol of ``lhs - rhs``
    has exactly one positive integer solution (extents are linear in it), else None."""
    d = sympy.expand(lhs - rhs)
    syms = list(d.free_symbols)
    if len(syms) != 1 or not d.is_polynomial(syms[0]) or sympy.Poly(d, syms[0]).degree() != 1:
        return None
    (s,) = syms
    sol = sympy.solve(d, s)
    if len(sol) != 1 or not sol[0].is_Integer or sol[0] <= 0:
        return None
    return {s: int(sol[0])}


def instantiate(exprs, variables: dict):
    """``exprs`` (PrimExprs) with each Var of ``variables`` (Var -> int) replaced by its value."""
    mapping = {v: IntImm(v.dtype, val) for v, val in variables.items()}
    return [substitute(e, mapping) for e in exprs]


def symbol_vars(exprs) -> dict:
    """{sympy symbol: Var} for the Vars of ``exprs`` (extents)."""
    out = {}

    def visit(n):
        if isinstance(n, Var):
            out[sym(n)] = n
        return True

    for e in exprs:
        pre_order_visit(e, visit)
    return out


# ---------------------------------------------------------------- guards
def conjuncts(cond) -> "list | None":
    """The atoms of a conjunction of comparisons."""
    if isinstance(cond, And):
        a, b = conjuncts(cond.a), conjuncts(cond.b)
        return None if a is None or b is None else a + b
    return [cond] if isinstance(cond, (LT, LE, GT, GE)) else None


def bounds(cond, space) -> "dict | None":
    """{output dim: ([lower bounds], [upper bounds])} (inclusive, sympy) that a conjunction of
    comparisons puts on the output variables, each atom bounding one variable with
    coefficient +-1; None for any other condition."""
    atoms = conjuncts(cond)
    if atoms is None:
        return None
    svars = [sym(v) for v in space.indices]
    out: dict = {}
    for atom in atoms:
        a, b = sym(atom.a), sym(atom.b)
        if a is None or b is None:
            return None
        # every atom as ``e >= 0`` (integers: ``e > 0`` is ``e - 1 >= 0``)
        e = sympy.expand(b - a if isinstance(atom, (LT, LE)) else a - b)
        if isinstance(atom, (LT, GT)):
            e = e - 1
        hits = [(d, e.coeff(s)) for d, s in enumerate(svars) if e.has(s)]
        if len(hits) != 1 or hits[0][1] not in (1, -1):
            return None
        d, c = hits[0]
        rest = sympy.expand(e - c * svars[d])
        if not rest.free_symbols.isdisjoint(svars):
            return None
        lo, hi = out.setdefault(d, ([], []))
        (lo if c == 1 else hi).append(-rest if c == 1 else rest)
    return out


def guard_is(cond, space, want) -> bool:
    """Whether ``cond`` holds exactly where every output variable ``v_d`` lies in
    ``want[d] = (lo, hi)`` (sympy, inclusive), given ``0 <= v_d < extent_d``: each bound the
    guard states is the wanted one or implied by the loop range, and every wanted bound
    that the loop range does not give is stated."""
    got = bounds(cond, space)
    if got is None:
        return False
    for d, ext in enumerate(space.extents):
        top = sym(ext) - 1
        lo, hi = want[d]
        los, his = got.get(d, ([], []))
        if any(not (always_equal(x, lo) or _le(x, 0)) for x in los):
            return False
        if any(not (always_equal(x, hi) or _le(top, x)) for x in his):
            return False
        if not (_le(lo, 0) or any(always_equal(x, lo) for x in los)):
            return False
        if not (_le(top, hi) or any(always_equal(x, hi) for x in his)):
            return False
    return True


def _le(a, b) -> bool:
    """``a <= b`` for every value of the symbols (their difference a constant)."""
    d = difference(b, a)
    return d is not None and d >= 0


# ---------------------------------------------------------------- reshape over a symbolic batch
def symbolic_reshape(load, space) -> bool:
    """Whether ``load`` copies its data in row-major order into an output whose leading
    extent is ``c * n`` (``n`` the data's one symbolic extent, leading too): e.g. flatten
    of ``(n, 3, 4)`` reading ``x[v // 12 % n, v % 12 // 4, v % 4]`` for ``v < n * 12``.

    Proved exactly: ``v = c * q + r`` with ``0 <= r < c`` and ``0 <= q < n``, so
    ``(c * q + r) // c == q`` on the index forms, ``q % n == q`` and ``q // n == 0``, so that
    each index is ``k * q`` plus a function of ``r`` and the other (constant) output
    variables: the ``q`` parts must weigh ``c`` in the row-major position read, the rest
    must be the row-major position of ``(r, ...)``, checked at every point of that box
    (the leading extents never weigh a row-major position, every other one is constant)."""
    ine = [sym(e) for e in load.buffer.shape]
    oute = [sym(e) for e in space.extents]
    if None in ine or None in oute or not ine or not oute:
        return False
    syms = set().union(*(e.free_symbols for e in ine + oute))
    if len(syms) != 1 or any(e.free_symbols for e in ine[1:] + oute[1:]):
        return False
    (s,) = syms
    c = ratio(oute[0], s)
    if c is None or not always_equal(sympy.Mul(*ine), sympy.Mul(*oute)):
        return False
    n = symbol_vars(load.buffer.shape).get(s)
    v0 = space.indices[0]
    if n is None:
        return False
    q, r = Var("q", v0.dtype), Var("r", v0.dtype)
    ranges = {r: (0, c - 1)}
    ranges.update({v: (0, int(e) - 1) for v, e in zip(space.indices[1:], oute[1:])})
    split = Add(Mul(q, IntImm(v0.dtype, c)), r)
    indices, weights, w = [], [], 1
    for x in reversed(ine[1:]):
        weights.insert(0, w)
        w *= int(x)
    weights.insert(0, w)
    q_coeff = 0
    for idx, wt in zip(load.indices, weights):
        e = _drop_mod_n(substitute(idx, {v0: split}), n, q, ranges)
        f = None if e is None else bounded_form(e, ranges)
        if f is None or any(isinstance(k, tuple) and _has(k, q) for k in f):
            return False
        q_coeff += f.get(q, 0) * wt
        indices.append(substitute(e, {q: IntImm(q.dtype, 0)}))
    # q weighs c times the trailing output extents in the position written, as in the one
    # read; the rest is checked per point
    if q_coeff != c * int(sympy.Mul(*oute[1:])):
        return False
    return _rest_in_order(indices, weights, [r, *space.indices[1:]], [c] + [int(e) for e in oute[1:]])


def _has(atom, var) -> bool:
    _, inner, _ = atom
    return any(k is var or isinstance(k, tuple) and _has(k, var) for k, _ in inner)


def _rest_in_order(indices, weights, variables, extents) -> bool:
    """Whether the row-major position read (``indices`` weighted) is the row-major position
    of ``variables`` in ``extents``, at every point."""
    env = grid_over(variables, extents)
    if env is None:
        return False
    try:
        got = sum(np.broadcast_to(evaluate(i, env), env[variables[0]].shape) * wt for i, wt in zip(indices, weights))
    except NotEvaluable:
        return False
    return bool(np.array_equal(got, np.arange(got.size, dtype=float)))


def _drop_mod_n(e, n, q, ranges):
    """``e`` with ``X % n`` replaced by ``X`` and ``X // n`` by 0 where ``X`` is ``q`` (whose
    values lie in ``[0, n)``), or None when ``n`` divides anything else; multiples of ``d``
    dropped from ``q``'s term under ``% d``."""
    failed = []

    def post(node):
        d = const_of(node.b) if isinstance(node, FloorMod) else None
        if d:  # (d * k * q + R) % d == R % d
            k = (bounded_form(node.a, ranges) or {}).get(q, 0)
            if k and k % d == 0:
                return FloorMod(Sub(node.a, Mul(q, IntImm(q.dtype, k))), node.b)
        if isinstance(node, (FloorMod, FloorDiv)) and node.b is n:
            if bounded_form(node.a, ranges) != {q: 1}:
                failed.append(node)
                return None
            return node.a if isinstance(node, FloorMod) else IntImm(node.a.dtype, 0)
        return None

    out = transform(e, post)
    return None if failed else out


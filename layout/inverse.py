"""Inverting index maps that have no explicit inverse.

Two families are handled, and mixed per variable:

* affine maps (permutations, shifts, unimodular skews): the linear system is solved with
  sympy and the inverse kept only if it is integral;
* splits and fusions: each output is a *digit* ``(x // a) % b`` of one input, or a
  mixed-radix fusion ``sum(c_i * x_i)`` of several; inputs are rebuilt from their digits
  (``x = sum(digit_j * a_j)``) and fused outputs are taken apart with ``//`` and ``%``.

The candidate is checked against the forward map on sample points when a shape is known.
"""
from __future__ import annotations

from typing import Sequence

import sympy

from tir import dtype as dt
from tir.expr import Add, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Var, as_int, convert

from .simplify import simplify_index


def invert(imap, shape: "Sequence | None" = None):
    """The inverse IndexMap of ``imap``; raises ValueError when it cannot be found."""
    from .index_map import IndexMap

    ys = tuple(Var(f"y{k}", dt.int64) for k in range(imap.ndim_out))
    exprs = _affine_inverse(imap, ys)
    if exprs is None:
        exprs = _radix_inverse(imap, ys, shape)
    if exprs is None:
        raise ValueError(f"cannot invert {imap!r}: not affine, not a split/fusion of its indices")
    inv = IndexMap(ys, exprs)
    if shape is not None and not inv.compose_check(imap, shape):
        raise ValueError(f"{imap!r} is not invertible on shape {tuple(shape)}")
    return inv


# ----------------------------------------------------------------------------- affine

def _to_sympy(e: PrimExpr, symbols: dict):
    if isinstance(e, IntImm):
        return sympy.Integer(e.value)
    if isinstance(e, Var):
        if id(e) not in symbols:
            raise ValueError("free variable")
        return symbols[id(e)]
    if isinstance(e, Add):
        return _to_sympy(e.a, symbols) + _to_sympy(e.b, symbols)
    if isinstance(e, Mul):
        return _to_sympy(e.a, symbols) * _to_sympy(e.b, symbols)
    from tir.expr import Sub

    if isinstance(e, Sub):
        return _to_sympy(e.a, symbols) - _to_sympy(e.b, symbols)
    raise ValueError("not affine")


def _affine_inverse(imap, ys) -> "tuple | None":
    if imap.ndim_in != imap.ndim_out:
        return None
    xs = [sympy.Dummy(v.name, integer=True) for v in imap.initial]
    symbols = {id(v): s for v, s in zip(imap.initial, xs)}
    try:
        exprs = [sympy.expand(_to_sympy(e, symbols)) for e in imap.final]
    except ValueError:
        return None
    if any(not e.is_polynomial(*xs) or sympy.Poly(e, *xs).total_degree() > 1 for e in exprs):
        return None
    mat = sympy.Matrix([[e.coeff(x) for x in xs] for e in exprs])
    offs = sympy.Matrix([e.subs({x: 0 for x in xs}) for e in exprs])
    if mat.det() == 0:
        return None
    inv = mat.inv()
    if any(not v.is_integer for v in inv):
        return None
    return tuple(_affine_expr(inv.row(i), offs, ys) for i in range(len(xs)))


def _affine_expr(row, offs, ys) -> PrimExpr:
    const = -int(sum(row[j] * offs[j] for j in range(len(ys))))
    out = convert(const, dt.int64)
    for j, y in enumerate(ys):
        c = int(row[j])
        if c:
            out = out + (y if c == 1 else y * convert(c, dt.int64))
    return simplify_index(out)


# ----------------------------------------------------------------------------- splits

def _digit(e: PrimExpr) -> "tuple[Var, int, int | None] | None":
    """``(x, a, b)`` when ``e == (x // a) % b`` (b None: no modulus)."""
    if isinstance(e, Var):
        return e, 1, None
    k = as_int(getattr(e, "b", None))
    if k is None or k <= 0:
        return None
    inner = _digit(e.a) if isinstance(e, (FloorDiv, FloorMod)) else None
    if inner is None:
        return None
    x, a, b = inner
    if isinstance(e, FloorDiv) and b is None:
        return x, a * k, None
    if isinstance(e, FloorMod) and (b is None or b % k == 0):
        return x, a, k
    return None


def _fusion(e: PrimExpr) -> "list[tuple[Var, int]] | None":
    """``[(x_i, c_i)]`` when ``e == sum(c_i * x_i)`` over distinct variables."""
    if isinstance(e, Var):
        return [(e, 1)]
    if isinstance(e, Mul) and isinstance(e.a, Var) and as_int(e.b) is not None:
        return [(e.a, as_int(e.b))]
    if isinstance(e, Add):
        a, b = _fusion(e.a), _fusion(e.b)
        return None if a is None or b is None else a + b
    return None


def _radix_inverse(imap, ys, shape) -> "tuple | None":
    digits: dict = {id(v): [] for v in imap.initial}
    for y, e in zip(ys, imap.final):
        if not _add_output(e, y, digits, imap, shape):
            return None
    out = []
    for v in imap.initial:
        parts = sorted(digits[id(v)], key=lambda p: p[0])
        if not parts or parts[0][0] != 1:
            return None
        expr = None
        for a, part in parts:
            term = part if a == 1 else part * convert(a, dt.int64)
            expr = term if expr is None else expr + term
        out.append(simplify_index(expr))
    return tuple(out)


def _add_output(e, y, digits, imap, shape) -> bool:
    d = _digit(e)
    if d is not None and id(d[0]) in digits:
        digits[id(d[0])].append((d[1], y))
        return True
    terms = _fusion(e)
    if terms is None or shape is None or any(id(x) not in digits for x, _ in terms):
        return False
    extents = {id(v): as_int(s) for v, s in zip(imap.initial, shape)}
    terms.sort(key=lambda t: t[1])
    expected = 1
    for i, (x, c) in enumerate(terms):
        if c != expected or extents.get(id(x)) is None:
            return False
        part = y // convert(c, dt.int64) if c != 1 else y
        if i + 1 < len(terms):
            part = part % convert(extents[id(x)], dt.int64)
        digits[id(x)].append((1, part))
        expected = c * extents[id(x)]
    return True

"""Comparing extents and counts that may be symbolic (``n * 8``)."""
from __future__ import annotations

import math

import sympy

from ..affine import SympyConverter, const_of, float_of
from tir.expr import Cast

_CONV = SympyConverter()


def product(extents) -> "int | None":
    vals = [const_of(e) for e in extents]
    return None if any(v is None for v in vals) else math.prod(vals)


def same_extent(count_expr, extents) -> bool:
    """Whether ``count_expr`` (a float or int constant, or a symbolic product, maybe cast)
    equals the product of ``extents``."""
    n = product(extents)
    v = float_of(count_expr)
    if n is not None and v is not None:
        return v == float(n)
    e = count_expr
    while isinstance(e, Cast):
        e = e.value
    try:
        lhs = _CONV(e)
        rhs = 1
        for x in extents:
            rhs = rhs * _CONV(x)
        return (lhs - rhs).expand() == 0
    except (ValueError, TypeError):
        return False


# ---------------------------------------------------------------- symbolic extents
def sym(e) -> "sympy.Expr | None":
    """An integer extent or index expression as sympy (one integer Dummy per Var), or None."""
    try:
        return _CONV(e)
    except (ValueError, TypeError):
        return None


def sym_int(e) -> "int | None":
    """The integer value of a sympy expression that is constant, else None."""
    if e is None:
        return None
    e = sympy.simplify(e) if e.free_symbols == set() else e
    return int(e) if e.is_Integer else None


def _divisors(e) -> list:
    """Constant divisors of the floor / Mod nodes in ``e`` (their period in each symbol)."""
    out = []
    for node in sympy.preorder_traversal(e):
        if isinstance(node, sympy.Mod) and node.args[1].is_Integer:
            out.append(int(node.args[1]))
        elif isinstance(node, (sympy.floor, sympy.ceiling)):
            for r in node.args[0].atoms(sympy.Rational):
                if not r.is_Integer:
                    out.append(int(r.q))
    return out


def always_equal(a, b) -> bool:
    """Whether sympy expressions ``a`` and ``b`` are equal for every positive integer value
    of their (at most one) symbol. Proved exactly: by expansion when they are polynomial;
    else ``a - b`` is, on each residue class modulo ``L`` (the lcm of the floor / mod
    divisors), a polynomial of degree at most 1 in the symbol, so it vanishes everywhere
    once it vanishes at two points of each class."""
    if a is None or b is None:
        return False
    d = sympy.expand(a - b)
    if d == 0:
        return True
    syms = d.free_symbols
    if len(syms) != 1:
        return False
    (s,) = syms
    if not d.is_polynomial(s) and not _quasi_linear(d, s):
        return False
    if d.is_polynomial(s):
        return sympy.Poly(d, s).is_zero
    period = math.lcm(*_divisors(d)) if _divisors(d) else 1
    if period > 256:
        return False
    return all(d.subs(s, k) == 0 for k in range(1, 2 * period + 1))


def _quasi_linear(d, s) -> bool:
    """``d`` is a sum of terms ``c``, ``c * s``, ``c * floor(linear / q)``, ``c * Mod(linear, q)``."""
    for term in sympy.Add.make_args(d):
        coeff, rest = term.as_coeff_Mul()
        if not coeff.is_Rational:
            return False
        if rest == 1 or rest == s:
            continue
        if isinstance(rest, (sympy.floor, sympy.ceiling)) or (isinstance(rest, sympy.Mod) and rest.args[1].is_Integer):
            inner = rest.args[0]
            if not (inner.is_polynomial(s) and sympy.Poly(inner, s).degree() <= 1):
                return False
            continue
        return False
    return True

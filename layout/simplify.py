"""A small simplifier for integer index expressions built by layout rewrites.

Index maps turn ``c`` into ``c // 4`` and ``c % 4`` and their inverses turn them back into
``co * 4 + ci``; composing the two must give plain indices again. This simplifier keeps an
expression as a linear form (coefficients over atoms) and folds ``floordiv``/``floormod``
by constants using the known ranges of the variables. It only applies identities that
hold for all integers in the given ranges.
"""
from __future__ import annotations

from typing import Dict, Tuple

from tir.expr import (
    Add, FloorDiv, FloorMod, IntImm, Mul, PrimExpr, Sub, Var, as_int, convert,
)
from tir.functor import transform

Bounds = Dict[Var, Tuple[int, int]]
"""Inclusive integer range of each variable."""


class _Linear:
    """``sum(coeff * atom) + const`` with atoms kept in first-seen order."""

    def __init__(self, terms=None, const=0):
        self.terms: dict = dict(terms or {})
        self.const = const

    def add(self, other: "_Linear", sign: int = 1) -> "_Linear":
        terms = dict(self.terms)
        for atom, c in other.terms.items():
            terms[atom] = terms.get(atom, 0) + sign * c
        return _Linear({a: c for a, c in terms.items() if c}, self.const + sign * other.const)

    def scale(self, k: int) -> "_Linear":
        if k == 0:
            return _Linear()
        return _Linear({a: c * k for a, c in self.terms.items()}, self.const * k)

    def split(self, k: int) -> "tuple[_Linear, _Linear]":
        """(Q, R) with self == k * Q + R and R holding the terms k does not divide."""
        q = {a: c // k for a, c in self.terms.items() if c % k == 0}
        r = {a: c for a, c in self.terms.items() if c % k}
        return _Linear(q, self.const // k), _Linear(r, self.const % k)


def _atom_key(e: PrimExpr):
    return e if not isinstance(e, Var) else ("var", id(e))


class _Simplifier:
    def __init__(self, bounds: Bounds, dtype):
        self.bounds = {id(v): b for v, b in bounds.items()}
        self.dtype = dtype
        self.atoms: dict = {}

    def atom(self, e: PrimExpr) -> _Linear:
        key = _atom_key(e)
        self.atoms.setdefault(key, e)
        return _Linear({key: 1})

    def linear(self, e: PrimExpr) -> _Linear:
        v = as_int(e)
        if v is not None and isinstance(e, IntImm) and not e.dtype.is_bool:
            return _Linear({}, v)
        if isinstance(e, Add):
            return self.linear(e.a).add(self.linear(e.b))
        if isinstance(e, Sub):
            return self.linear(e.a).add(self.linear(e.b), -1)
        if isinstance(e, Mul):
            return self.mul(e)
        if isinstance(e, FloorDiv) and as_int(e.b) is not None and as_int(e.b) > 0:
            return self.floordiv(self.linear(e.a), as_int(e.b))
        if isinstance(e, FloorMod) and as_int(e.b) is not None and as_int(e.b) > 0:
            return self.floormod(self.linear(e.a), as_int(e.b))
        return self.atom(e)

    def mul(self, e: Mul) -> _Linear:
        a, b = self.linear(e.a), self.linear(e.b)
        if not b.terms:
            return a.scale(b.const)
        if not a.terms:
            return b.scale(a.const)
        return self.atom(Mul(self.expr(a), self.expr(b)))

    def range(self, lin: _Linear) -> "tuple[int, int] | None":
        lo = hi = lin.const
        for key, c in lin.terms.items():
            r = self.atom_range(key)
            if r is None:
                return None
            lo += min(c * r[0], c * r[1])
            hi += max(c * r[0], c * r[1])
        return lo, hi

    def atom_range(self, key) -> "tuple[int, int] | None":
        if isinstance(key, tuple):
            return self.bounds.get(key[1])
        e = self.atoms[key]
        if isinstance(e, FloorMod) and as_int(e.b) is not None and as_int(e.b) > 0:
            return 0, as_int(e.b) - 1
        if isinstance(e, FloorDiv) and as_int(e.b) is not None and as_int(e.b) > 0:
            r = self.range(self.linear(e.a))
            return None if r is None else (r[0] // as_int(e.b), r[1] // as_int(e.b))
        return None

    def floordiv(self, lin: _Linear, k: int) -> _Linear:
        if k == 1:
            return lin
        q, r = lin.split(k)
        rr = self.range(r)
        if rr is not None and rr[0] // k == rr[1] // k:
            return q.add(_Linear({}, rr[0] // k))
        if not r.terms:
            return q.add(_Linear({}, r.const // k))
        return q.add(self.atom(FloorDiv(self.expr(r), convert(k, self.dtype))))

    def floormod(self, lin: _Linear, k: int) -> _Linear:
        if k == 1:
            return _Linear()
        _, r = lin.split(k)
        rr = self.range(r)
        if rr is not None and rr[0] // k == rr[1] // k:
            return r.add(_Linear({}, -(rr[0] // k) * k))
        return self.atom(FloorMod(self.expr(r), convert(k, self.dtype)))

    def fold_divmod(self, lin: _Linear) -> _Linear:
        """Rewrite ``k * (a // k) + (a % k)`` (times a common coefficient) into ``a``."""
        for key, c in list(lin.terms.items()):
            e = self.atoms.get(key)
            if not isinstance(e, FloorMod) or key not in lin.terms:
                continue
            k = as_int(e.b)
            div_key = _atom_key(FloorDiv(e.a, e.b))
            if k is None or lin.terms.get(div_key) != c * k:
                continue
            rest = _Linear({a: v for a, v in lin.terms.items() if a not in (key, div_key)}, lin.const)
            return self.fold_divmod(rest.add(self.linear(e.a).scale(c)))
        return lin

    def expr(self, lin: _Linear) -> PrimExpr:
        lin = self.fold_divmod(lin)
        out = None
        for key, c in lin.terms.items():
            term = self.atoms[key] if c == 1 else self.atoms[key] * convert(c, self.dtype)
            out = term if out is None else out + term
        if out is None:
            return convert(lin.const, self.dtype)
        if lin.const > 0:
            return out + convert(lin.const, self.dtype)
        if lin.const < 0:
            return out - convert(-lin.const, self.dtype)
        return out


def simplify_index(e, bounds: "Bounds | None" = None) -> PrimExpr:
    """Simplify an integer index expression given inclusive ranges of its variables.

    Plain Python ints are returned unchanged; non-integer expressions are only
    simplified inside (each integer sub-expression that is an index is left as is).
    """
    if isinstance(e, int) or not isinstance(e, PrimExpr):
        return e
    if not (e.dtype.is_integer and not e.dtype.is_bool):
        return e
    s = _Simplifier(bounds or {}, e.dtype)
    return s.expr(s.linear(e))


def simplify_indices(node, bounds: "Bounds | None" = None):
    """Simplify every buffer index inside ``node`` (loads, stores and region starts)."""
    import attrs
    from tir.buffer import Range
    from tir.expr import BufferLoad
    from tir.stmt import BufferStore

    def post(n):
        if isinstance(n, (BufferLoad, BufferStore)):
            return attrs.evolve(n, indices=tuple(simplify_index(i, bounds) for i in n.indices))
        if isinstance(n, Range):
            return Range(simplify_index(n.min, bounds), n.extent)
        return None

    return transform(node, post)

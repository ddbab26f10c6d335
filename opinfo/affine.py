"""Index expressions as (quasi-)affine forms, and the one conversion to sympy.

An affine form is a dict from *atoms* to integer coefficients; the key ``1`` holds the
constant. Atoms are variables (compared by identity) and ``floordiv``/``floormod`` nodes
of an affine expression by a constant (kept whole, so ``c // 4`` and ``c % 4`` are
atoms). Anything else (a product of two variables, a load) is not affine: ``None``.

:func:`to_sympy` is the single bridge to sympy: every Var maps to its own ``Dummy``, so
two variables that share a name never become one symbol; results are cached.
"""
from __future__ import annotations

from fractions import Fraction
from functools import lru_cache

import sympy

from tir.expr import (Add, Cast, Div, FloatImm, FloorDiv, FloorMod, IntImm, Max, Min, Mod, Mul, PrimExpr, SizeVar, Sub,
                      Var)
from tir.structural import same_ir

ONE = 1


def add_forms(a: dict, b: dict, scale: int = 1) -> dict:
    out = dict(a)
    for k, v in b.items():
        c = out.get(k, 0) + scale * v
        if c:
            out[k] = c
        else:
            out.pop(k, None)
    return out


def affine(e: PrimExpr) -> "dict | None":
    """The affine form of an integer index expression, or None."""
    return _affine(e)


@lru_cache(maxsize=65536)
def _affine_cached(e):
    return _affine_impl(e)


def _affine(e):
    try:
        return _affine_cached(e)
    except TypeError:  # unhashable
        return _affine_impl(e)


def _affine_impl(e) -> "dict | None":
    if isinstance(e, IntImm):
        return {ONE: e.value} if e.value else {}
    if isinstance(e, Var):
        return {e: 1}
    if isinstance(e, Cast):
        return _affine(e.value) if not e.dtype.is_float else None
    if isinstance(e, (Add, Sub)):
        a, b = _affine(e.a), _affine(e.b)
        if a is None or b is None:
            return None
        return _fold_divmod(add_forms(a, b, 1 if isinstance(e, Add) else -1))
    if isinstance(e, Mul):
        return mul_forms(_affine(e.a), _affine(e.b))
    if isinstance(e, (FloorDiv, FloorMod)):
        inner, d = _affine(e.a), const_of(e.b)
        if inner is None or d is None or d <= 0:
            return None
        return _div_atom(e, inner, d)
    if isinstance(e, (Max, Min)):
        # one arm provably the larger for every non-negative size variable (dlight's
        # ``max(n + 5, 0)`` in a concat's index): that arm's form
        a, b = _affine(e.a), _affine(e.b)
        if a is None or b is None:
            return None
        if _at_least(a, b):
            return a if isinstance(e, Max) else b
        if _at_least(b, a):
            return b if isinstance(e, Max) else a
    return None


def _fold_divmod(form: dict) -> dict:
    """``c * d * (x // d) + c * (x % d)`` folded back to ``c * x`` (a split loop fused again
    writes its variable that way)."""
    mods = [k for k in form if isinstance(k, FloorMod)]
    for m in mods:
        d = const_of(m.b)
        div = next((k for k in form if isinstance(k, FloorDiv) and const_of(k.b) == d
                    and _affine(k.a) == _affine(m.a)), None)
        inner = _affine(m.a)
        if div is None and d:
            # d * ((x % q) // d) + x % d == x % q when d divides q (fused, split, split again)
            div = next((k for k in form if isinstance(k, FloorDiv) and const_of(k.b) == d
                        and _outer_mod(k.a, m.a, d) is not None), None)
            inner = _affine(_outer_mod(div.a, m.a, d)) if div is not None else None
        c = form.get(m)
        if div is None or c is None or form.get(div) != c * d:
            continue
        if inner is None:
            continue
        form = add_forms({k: v for k, v in form.items() if k is not m and k is not div}, inner, c)
    return _fold_nested_div(form)


def _fold_nested_div(form: dict) -> dict:
    """``c * k * (y // (k * d)) + c * ((x % (k * d)) // d)`` folded to ``c * (y // d)`` when
    ``y`` is ``x`` or ``x % q`` with ``k * d`` dividing ``q`` (three loops fused, split and bound
    to threads: TVM prints the middle variable's bound this way)."""
    for inner in [a for a in form if isinstance(a, FloorDiv)]:
        d = const_of(inner.b)
        rem = inner.a
        kd = const_of(rem.b) if isinstance(rem, FloorMod) else None
        if not d or not kd or kd % d or kd == d or inner not in form:
            continue
        k = kd // d
        c = form[inner]
        outer = next((a for a in form if isinstance(a, FloorDiv) and a is not inner and const_of(a.b) == kd
                      and form[a] == c * k and (_affine(a.a) == _affine(rem.a)
                                                or _outer_mod(a.a, rem.a, kd) is not None)), None)
        if outer is None:
            continue
        folded = _affine(FloorDiv(outer.a, IntImm(inner.b.dtype, d)))
        if folded is None:
            continue
        form = add_forms({a: v for a, v in form.items() if a is not inner and a is not outer}, folded, c)
    return form


def _outer_mod(e, x, d: int):
    """``e`` when it is ``x % q`` with ``d`` dividing ``q``, else None."""
    q = const_of(e.b) if isinstance(e, FloorMod) else None
    return e if q and q % d == 0 and _affine(e.a) == _affine(x) else None


def mul_forms(a, b):
    if a is None or b is None:
        return None
    if set(a) <= {ONE}:
        a, b = b, a
    if not set(b) <= {ONE}:
        return None
    k = b.get(ONE, 0)
    return {key: v * k for key, v in a.items() if v * k}


def _div_atom(e, inner: dict, d: int) -> dict:
    if d == 1:
        return inner if isinstance(e, FloorDiv) else {}
    if set(inner) <= {ONE}:
        c = inner.get(ONE, 0)
        v = c // d if isinstance(e, FloorDiv) else c % d
        return {ONE: v} if v else {}
    return {e: 1}


def extents_differ(a, b) -> bool:
    """Two extents known to differ: both constant and unequal (a symbolic one may take the
    other's value; :func:`equal_extents` asks the converse)."""
    ca, cb = const_of(a), const_of(b)
    return ca is not None and cb is not None and ca != cb


def equal_extents(a, b) -> bool:
    """Two extents known equal: the same constant, or (neither constant) the same
    expression or the same affine form (``n * 18`` and ``n * 6 * 3``, as a flattening
    block's loop and its buffer's shape are printed)."""
    ca, cb = const_of(a), const_of(b)
    if ca is not None or cb is not None:
        return ca == cb
    if a is b or same_ir(a, b):
        return True
    fa = _affine(a) if isinstance(a, PrimExpr) else None
    fb = _affine(b) if isinstance(b, PrimExpr) else None
    if fa is not None and fa == fb:
        return True
    if fa is not None and fb is not None and _canonical(fa) == _canonical(fb):
        return True
    return _equal_minima(a, b)


def _canonical(form: dict) -> "frozenset | None":
    """``form`` with its floor division/remainder atoms keyed by what they compute (the
    kind, the canonical form of the dividend, the divisor) rather than by their nodes:
    ``(n + 3 - 1) // 3`` and ``(n + 2) // 3`` are one atom (TVM prints a split's section
    length both ways, in a buffer's shape and in the domain of the block filling it)."""
    out = []
    for atom, c in form.items():
        if isinstance(atom, (FloorDiv, FloorMod)):
            inner, d = _affine(atom.a), const_of(atom.b)
            key = None if inner is None or d is None else _canonical(inner)
            if key is None:
                return None
            atom = ("div" if isinstance(atom, FloorDiv) else "mod", key, d)
        out.append((atom, c))
    merged: dict = {}
    for atom, c in out:
        merged[atom] = merged.get(atom, 0) + c
    return frozenset((k, v) for k, v in merged.items() if v)


# ------------------------------------------------------------ extents that are minima
# TVM writes a block variable's domain after ``compute_at`` with symbolic shapes as a
# minimum of the extent and rounded-up tilings of it, ``T.min(n, T.min((n + 2) // 3,
# (n + 5) // 6 * 2) * 3)``, which is ``n`` for every ``n >= 0``. :func:`_equal_minima` proves
# such equalities: each side is the minimum of affine *arms* (``min`` pushed out through sums
# and non-negative constant factors), and ``min(A) == min(B)`` when every arm of each side is
# at least some arm of the other, ``x >= y`` shown by a lower bound of ``x - y`` in the size
# variables (non-negative) with no negative coefficient. Only size variables and floor
# divisions/remainders of them by positive constants are bounded; anything else refutes.

_MAX_ARMS = 16


def _min_arms(e) -> "list | None":
    """Affine forms whose minimum ``e`` is, or None."""
    if not isinstance(e, PrimExpr):
        return None
    if isinstance(e, Min):
        a, b = _min_arms(e.a), _min_arms(e.b)
        return None if a is None or b is None or len(a) + len(b) > _MAX_ARMS else a + b
    if isinstance(e, Cast) and not e.dtype.is_float:
        return _min_arms(e.value)
    if isinstance(e, Mul):
        for x, k in ((e.a, const_of(e.b)), (e.b, const_of(e.a))):
            if k is not None and k >= 0:
                arms = _min_arms(x)
                return None if arms is None else [{key: v * k for key, v in f.items() if v * k} for f in arms]
    if isinstance(e, Add):
        a, b = _min_arms(e.a), _min_arms(e.b)
        if a is None or b is None or len(a) * len(b) > _MAX_ARMS:
            return None
        return [add_forms(x, y) for x in a for y in b]
    if isinstance(e, Sub):
        a, b = _min_arms(e.a), _affine(e.b)  # minus a minimum is a maximum: not taken
        return None if a is None or b is None else [add_forms(x, b, -1) for x in a]
    f = _affine(e)
    return None if f is None else [f]


def _bound(form: dict, upper: bool) -> "dict | None":
    """A form in size variables (Fraction coefficients) below (``upper``: above) ``form``
    for all non-negative values of the size variables, or None."""
    out: dict = {}

    def put(f: dict, scale) -> None:
        for key, v in f.items():
            out[key] = out.get(key, 0) + scale * v

    for atom, c in form.items():
        if atom is ONE or isinstance(atom, SizeVar):
            put({atom: Fraction(c)}, 1)
            continue
        d = const_of(atom.b) if isinstance(atom, (FloorDiv, FloorMod)) else None
        if d is None or d <= 0:
            return None
        if isinstance(atom, FloorMod):  # 0 <= a % d <= d - 1
            put({ONE: Fraction(d - 1)}, c if (c > 0) == upper else 0)
            continue
        inner = _affine(atom.a)
        # (a - (d - 1)) / d <= a // d <= a / d
        low_side = (c > 0) != upper
        b = _bound(inner, not low_side) if inner is not None else None
        if b is None:
            return None
        if low_side:
            b = add_forms(b, {ONE: -(d - 1)})
        put(b, Fraction(c, d))
    return out


def _at_least(x: dict, y: dict) -> bool:
    """``x >= y`` for all non-negative values of the size variables."""
    low = _bound(add_forms(x, y, -1), upper=False)
    return low is not None and all(v >= 0 for v in low.values())


def _equal_minima(a, b) -> bool:
    """``a == b`` proven with :func:`_min_arms` (see above); False when unsure."""
    if not (_has_min(a) or _has_min(b)):
        return False
    arms_a, arms_b = _min_arms(a), _min_arms(b)
    if not arms_a or not arms_b:
        return False
    return all(any(_at_least(x, y) for y in arms_b) for x in arms_a) and \
        all(any(_at_least(y, x) for x in arms_a) for y in arms_b)


def _has_min(e) -> bool:
    while isinstance(e, (Add, Sub, Mul, Cast)):
        if isinstance(e, Cast):
            e = e.value
            continue
        if _has_min(e.a):
            return True
        e = e.b
    return isinstance(e, Min)


def const_of(e) -> "int | None":
    """The value of an integer constant expression (through casts), else None."""
    if type(e) is IntImm:  # the common case, without the affine form
        return e.value
    a = _affine(e) if isinstance(e, PrimExpr) else None
    if a is None or not set(a) <= {ONE}:
        return None
    return a.get(ONE, 0)


def float_of(e) -> "float | None":
    """The value of a numeric constant (float or int, through casts), else None."""
    while isinstance(e, Cast):
        e = e.value
    if isinstance(e, FloatImm):
        return e.value
    if isinstance(e, IntImm):
        return float(e.value)
    return None


def vars_of(form: dict) -> list:
    """The variables an affine form depends on (including inside div/mod atoms)."""
    out = []
    for k in form:
        if isinstance(k, Var):
            out.append(k)
        elif k is not ONE:
            out.extend(vars_of(_affine(k.a) or {}))
    return out


# ---------------------------------------------------------------------------- sympy bridge

class SympyConverter:
    """Converts integer expressions to sympy with one Dummy per Var object (cached)."""

    def __init__(self):
        self.symbols: dict = {}
        self.cache: dict = {}

    def symbol(self, v: Var):
        s = self.symbols.get(id(v))
        if s is None:
            s = sympy.Dummy(v.name, integer=True)
            self.symbols[id(v)] = (v, s)
            return s
        return s[1]

    def __call__(self, e: PrimExpr):
        hit = self.cache.get(e)
        if hit is None:
            hit = self._convert(e)
            self.cache[e] = hit
        return hit

    def _convert(self, e):
        if isinstance(e, IntImm):
            return sympy.Integer(e.value)
        if isinstance(e, FloatImm):
            return sympy.Float(e.value)
        if isinstance(e, Var):
            return self.symbol(e)
        if isinstance(e, Cast):
            return self(e.value)
        ops = {Add: lambda a, b: a + b, Sub: lambda a, b: a - b, Mul: lambda a, b: a * b,
               FloorDiv: lambda a, b: sympy.floor(a / b), FloorMod: lambda a, b: sympy.Mod(a, b),
               Min: sympy.Min, Max: sympy.Max}
        for cls, fn in ops.items():
            if type(e) is cls:
                return fn(self(e.a), self(e.b))
        if isinstance(e, (Div, Mod)):
            raise ValueError(f"truncating {type(e).__name__} is not converted to sympy")
        raise ValueError(f"cannot convert {type(e).__name__} to sympy")

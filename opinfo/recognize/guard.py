"""Bounds guards of padded reads.

A pad reads ``if_then_else(cond, x[idx], pad_value)``. That is a pad of ``x`` only when
``cond`` is, over the loop domain, exactly "every index of ``x`` is in bounds".
:func:`guard_sides` checks this and reports, per dimension of ``x``, which sides ``cond``
tests. TVM's C++ ``pad`` (the one pooling uses) tests a side only when it pads it, so a
tested side is evidence of padding there; the Python ``pad`` (convolutions) tests both
sides of every padded dimension.

The check works on intervals: each index is an affine form whose range over the domain
is taken as an interval, and a bound must agree with the buffer bound on every value of
that interval (stricter than needed when some values are unreachable, never looser).
"""
from __future__ import annotations

import math
from fractions import Fraction

import attrs

from tir.expr import GE, GT, LE, LT, And, FloorDiv, FloorMod, Var

from ..affine import ONE, add_forms, affine, const_of


@attrs.frozen
class Sides:
    """Which bounds of one dimension the guard tests."""

    lower: bool
    upper: bool


def conjuncts(cond) -> list:
    """The terms of a conjunction (``a and b and c`` -> ``[a, b, c]``)."""
    if isinstance(cond, And):
        return conjuncts(cond.a) + conjuncts(cond.b)
    return [cond]


def nonneg_form(cmp) -> "dict | None":
    """An affine ``g`` with ``cmp`` equivalent to ``g >= 0`` (integers), or None."""
    if not isinstance(cmp, (LT, LE, GT, GE)):
        return None
    a, b = affine(cmp.a), affine(cmp.b)
    if a is None or b is None:
        return None
    if isinstance(cmp, (LT, LE)):
        a, b = b, a
    g = add_forms(a, b, -1)
    return add_forms(g, {ONE: -1}) if isinstance(cmp, (LT, GT)) else g


def value_range(form: dict, dom: dict) -> "tuple | None":
    """(min, max) of an affine form over the domain ``dom`` (Var -> extent), or None."""
    lo = hi = form.get(ONE, 0)
    for atom, c in form.items():
        if atom is ONE:
            continue
        r = _atom_range(atom, dom)
        if r is None:
            return None
        lo, hi = lo + min(c * r[0], c * r[1]), hi + max(c * r[0], c * r[1])
    return lo, hi


def _atom_range(atom, dom) -> "tuple | None":
    if isinstance(atom, Var):
        ext = const_of(dom[atom]) if atom in dom else None
        return (0, ext - 1) if ext else None
    inner = affine(atom.a)
    r = value_range(inner, dom) if inner is not None else None
    k = const_of(atom.b)
    if isinstance(atom, FloorMod) and r is None and k and k > 0 and inner is not None and nonneg(inner, dom):
        return 0, k - 1  # e.g. a loop fused with a symbolic one, then split
    if r is None or not k:
        return None
    if isinstance(atom, FloorDiv):
        return r[0] // k, r[1] // k
    if isinstance(atom, FloorMod) and 0 <= r[0] and r[1] < k:
        return r
    return (0, k - 1) if isinstance(atom, FloorMod) else None


def nonneg(form: dict, dom: dict) -> bool:
    """Whether an affine form is >= 0 on the domain, whatever the (symbolic) extents are:
    loop variables start at 0, so non-negative combinations of them and of their floor
    divisions and remainders by positive constants are."""
    for atom, c in form.items():
        if c < 0:
            return False
        if atom is ONE or (isinstance(atom, Var) and atom in dom):
            continue
        if not isinstance(atom, (FloorDiv, FloorMod)) or not (const_of(atom.b) or 0) > 0:
            return False
        inner = affine(atom.a)
        if inner is None or not nonneg(inner, dom):
            return False
    return True


def _bounds(conds, forms) -> "tuple | None":
    """Per dimension, the lower bounds (``f >= L``) and upper bounds (``f < U``) of ``conds``."""
    lows = [[] for _ in forms]
    highs = [[] for _ in forms]
    for c in (t for cond in conds for t in conjuncts(cond)):
        g = nonneg_form(c)
        if g is None:
            return None
        hit = _match(g, forms)
        if hit is None:
            return None
        d, is_low, value = hit
        (lows if is_low else highs)[d].append(value)
    return lows, highs


def _match(g, forms) -> "tuple | None":
    for d, f in enumerate(forms):
        if f is None or not set(f) - {ONE}:
            continue
        diff = add_forms(g, f, -1)
        if set(diff) <= {ONE}:
            return d, True, -diff.get(ONE, 0)
        tot = add_forms(g, f, 1)
        if set(tot) <= {ONE}:
            return d, False, tot.get(ONE, 0) + 1
    for d, f in enumerate(forms):
        hit = _scaled_match(g, f) if f is not None and set(f) - {ONE} else None
        if hit is not None:
            return (d,) + hit
    return None


def _scaled_match(g, f) -> "tuple | None":
    """``g >= 0`` as a bound on the index ``f`` when ``g``'s variable part is a multiple
    ``s`` of ``f``'s (TVM divides ``2 * o + 2 * r < 10`` by 2: ``o + r < 5``): with
    ``f = fv + c`` and ``g = s * fv + g0``, ``g >= 0`` is ``f >= c - g0 / s`` (``s > 0``)
    or ``f <= c + g0 / -s`` (``s < 0``), exact on the integers once rounded inwards.
    (is_low, bound) as :func:`_match` gives it, or None."""
    gv = {a: c for a, c in g.items() if a is not ONE}
    fv = {a: c for a, c in f.items() if a is not ONE}
    if set(gv) != set(fv) or not fv:
        return None
    atom = next(iter(fv))
    s = Fraction(gv[atom], fv[atom])
    if s == 0 or any(Fraction(gv[a]) != s * fv[a] for a in fv):
        return None
    c, g0 = f.get(ONE, 0), g.get(ONE, 0)
    if s > 0:
        return True, math.ceil(c - Fraction(g0) / s)
    return False, math.floor(c + Fraction(g0) / -s) + 1


def _agrees(rng, bound, real, below: bool) -> bool:
    """Whether ``v >= bound`` (below) or ``v < bound`` equals the same test against ``real``
    for every ``v`` in ``rng``; ``bound`` None means "no test"."""
    lo, hi = rng
    if bound is None:
        return lo >= real if below else hi < real
    a, b = min(bound, real), max(bound, real) - 1
    return b < a or hi < a or lo > b


def _trivially_inside(index, extent, dom) -> bool:
    """A symbolic dimension read at its own iteration variable (``x[n, ...]`` over ``n``)."""
    if not isinstance(index, Var) or index not in dom:
        return False
    return dom[index] == extent or dom[index] is extent


def guard_sides(conds, indices, shape, dom) -> "tuple | None":
    """Per dimension of the read ``x[indices]``, the :class:`Sides` the guard ``conds``
    tests; None unless the guard is exactly "in bounds" over ``dom``."""
    forms = [affine(i) for i in indices]
    got = _bounds(conds, forms)
    if got is None:
        return None
    out = []
    for d, (idx, f) in enumerate(zip(indices, forms)):
        lows, highs = got[0][d], got[1][d]
        size = const_of(shape[d])
        rng = value_range(f, dom) if f is not None else None
        if rng is None or size is None:
            if lows or highs or not _trivially_inside(idx, shape[d], dom):
                return None
            out.append(Sides(False, False))
            continue
        low = max(lows) if lows else None
        high = min(highs) if highs else None
        if not (_agrees(rng, low, 0, True) and _agrees(rng, high, size, False)):
            return None
        out.append(Sides(bool(lows), bool(highs)))
    return tuple(out)


# ---------------------------------------------------------------- equality on a domain
def fold(form: dict, dom: dict) -> dict:
    """``form`` with unit variables (always 0) dropped and ``(q * k + r) // k``,
    ``(q * k + r) % k`` folded to ``q`` and ``r`` where ``0 <= r < k`` on the domain."""
    out = {}
    for atom, c in form.items():
        if isinstance(atom, Var) and const_of(dom.get(atom)) == 1:
            continue
        folded = _fold_divmod(atom, dom) if isinstance(atom, (FloorDiv, FloorMod)) else None
        for k, v in (folded or {atom: 1}).items():
            out = add_forms(out, {k: v * c})
    return out


def _fold_divmod(atom, dom) -> "dict | None":
    inner, k = affine(atom.a), const_of(atom.b)
    if inner is None or not k:
        return None
    inner = fold(inner, dom)
    quot = {a: c // k for a, c in inner.items() if a is not ONE and c % k == 0}
    rest = {a: c for a, c in inner.items() if a not in quot}
    rng = value_range(rest, dom)
    if rng is None or rng[0] < 0 or rng[1] >= k:
        return None
    return quot if isinstance(atom, FloorDiv) else rest


def same_on_domain(a, b, dom: dict) -> bool:
    """Whether two index expressions agree at every point of the domain (Var -> extent),
    judged on their affine forms after :func:`fold`; False when unsure."""
    if a is b or a == b:
        return True
    fa, fb = affine(a), affine(b)
    if fa is None or fb is None:
        return False
    return fold(fa, dom) == fold(fb, dom)

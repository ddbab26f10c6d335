"""Index expressions simplified with the ranges of their variables.

TVM prints a reshape's read index without simplifying it against the loop extents, e.g.
``x[0, (v1 * 28 + (v4 // 56 + v3) // 56 + v2) % 112, ...]`` where ``v4 < 56`` and ``v3 < 56``.
:func:`bounded_form` rewrites such an expression into a canonical quasi-affine form using
only identities that hold on the given ranges:

- ``(d * A + R) // d == A + k`` and ``(d * A + R) % d == R - k * d`` when every value of
  ``R`` lies in ``[k * d, (k + 1) * d)``;
- ``d * (X // d) + X % d == X`` (a div and a mod of the same form recombine).

Forms are dicts like :mod:`opinfo.affine`'s, but the div/mod atoms are keys
``("div" | "mod", inner form as a frozenset of items, d)``, so equal forms compare equal
whatever expression objects produced them. Everything here is exact: a form that cannot be
reduced keeps its atoms, it is never approximated.
"""
from __future__ import annotations

from tir.expr import Add, Cast, FloorDiv, FloorMod, IntImm, Mul, Sub, Var

from .affine import ONE, add_forms, const_of, mul_forms


def bounded_form(e, ranges: dict) -> "dict | None":
    """The canonical form of integer expression ``e`` given ``ranges`` (Var -> (lo, hi),
    inclusive), or None when ``e`` is not quasi-affine."""
    form = _form(e, ranges)
    return None if form is None else recombine(form, ranges)


def interval(form: dict, ranges: dict) -> "tuple | None":
    """Inclusive bounds of a form's values, or None when a variable has no range."""
    lo = hi = 0
    for k, c in form.items():
        if k is ONE:
            a = b = 1
        else:
            r = _atom_range(k, ranges)
            if r is None:
                return None
            a, b = r
        lo += min(c * a, c * b)
        hi += max(c * a, c * b)
    return lo, hi


def _atom_range(k, ranges):
    if isinstance(k, tuple):
        kind, inner, d = k
        r = interval(dict(inner), ranges)
        if r is None:
            return (0, d - 1) if kind == "mod" else None
        lo, hi = r
        if kind == "div":
            return lo // d, hi // d
        return (lo % d, hi % d) if lo // d == hi // d else (0, d - 1)
    return ranges.get(k)


def _form(e, ranges) -> "dict | None":
    if isinstance(e, IntImm):
        return {ONE: e.value} if e.value else {}
    if isinstance(e, Var):
        return {} if ranges.get(e) == (0, 0) else {e: 1}
    if isinstance(e, Cast):
        return None if e.dtype.is_float else _form(e.value, ranges)
    if isinstance(e, (Add, Sub)):
        a, b = _form(e.a, ranges), _form(e.b, ranges)
        if a is None or b is None:
            return None
        return add_forms(a, b, 1 if isinstance(e, Add) else -1)
    if isinstance(e, Mul):
        return mul_forms(_form(e.a, ranges), _form(e.b, ranges))
    if isinstance(e, (FloorDiv, FloorMod)):
        inner, d = _form(e.a, ranges), const_of(e.b)
        if inner is None or d is None or d <= 0:
            return None
        return _divmod(recombine(inner, ranges), d, isinstance(e, FloorDiv), ranges)
    return None


def _divmod(inner: dict, d: int, is_div: bool, ranges) -> dict:
    if d == 1:
        return inner if is_div else {}
    quot, rest = {}, {}
    for k, c in inner.items():
        if k is ONE:
            continue
        if c % d == 0:
            quot[k] = c // d
        else:
            rest[k] = c
    c0 = inner.get(ONE, 0)
    quot = add_forms(quot, {ONE: c0 // d})
    rest = add_forms(rest, {ONE: c0 % d})
    r = interval(rest, ranges)
    if r is not None and r[0] // d == r[1] // d:
        k = r[0] // d
        return add_forms(quot, {ONE: k}) if is_div else add_forms(rest, {ONE: -k * d})
    atom = ("div" if is_div else "mod", frozenset(inner.items()), d)
    return {atom: 1}


def recombine(form: dict, ranges) -> dict:
    """Replace ``c * d * (X // d) + c * (X % d)`` by ``c * X`` until nothing changes."""
    changed = True
    while changed:
        changed = False
        for k, c in list(form.items()):
            if not (isinstance(k, tuple) and k[0] == "mod" and k in form):
                continue
            _, inner, d = k
            div = ("div", inner, d)
            if form.get(div) == c * d:
                form = add_forms(add_forms(form, {k: -c, div: -c * d}), dict(inner), c)
                changed = True
                break
    return form

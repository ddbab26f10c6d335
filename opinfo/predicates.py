"""Block predicates (``T.where``) that drop no element: those of TVM's splits.

A predicate conjunct ``e < c`` drops nothing when it holds on every loop iteration, or when
it is exactly "some block iterator stays in its domain": a binding ``k * e + r`` with
``0 <= r < k`` and extent ``k * c`` (a non-divisible split), also with ``e // m`` for ``e``
and ``c / m`` for ``c`` (loops fused, then split). Loops are taken to start at 0; a loop
that does not is left out of the domain, so nothing about it is proven.
"""
from __future__ import annotations

import attrs

from tir.expr import FloorDiv, IntImm, LT, Var
from tir.function import PrimFunc
from tir.functor import post_order_visit, transform
from tir.stmt import BlockRealize, For

from .affine import ONE, _add, affine, const_of
from .recognize.guard import _nonneg, conjuncts, value_range


def _scale(binding: dict, e: dict) -> "int | None":
    """``k`` with ``binding = k * e + rest`` where ``rest`` shares no atom with ``e``."""
    atoms = [a for a in e if a is not ONE]
    if not atoms or e[atoms[0]] == 0 or binding.get(atoms[0], 0) % e[atoms[0]]:
        return None
    k = binding.get(atoms[0], 0) // e[atoms[0]]
    return k if k > 0 and all(binding.get(a, 0) == k * e[a] for a in atoms) else None


def _times(form: dict, k: int) -> dict:
    return {a: k * v for a, v in form.items() if k * v}


def _divided(form: dict, m: int) -> "dict | None":
    """``form / m`` when ``m`` divides every coefficient, else None."""
    return None if any(v % m for v in form.values()) else {a: v // m for a, v in form.items()}


def _ceil_of(ext: dict, k: int) -> "dict | None":
    """``ceil(ext / k)`` of a constant extent, as a form: ``e < ceil(ext / k)`` follows from
    ``k * e + r < ext`` (the split of an already split loop repeats its outer bound)."""
    if not set(ext) <= {ONE}:
        return None
    q = -(-ext.get(ONE, 0) // k)
    return {ONE: q} if q else {}


def _bounds(value, iv, e: dict, c: dict, dom: dict) -> bool:
    """``e < c`` is exactly ``value < extent`` (see :func:`_scaled_bound`), ``e >= 0``."""
    lo, ext = const_of(iv.dom.min), affine(iv.dom.extent)
    e_range = value_range(e, dom)
    form = affine(value)
    if lo != 0 or ext is None or form is None:
        return False
    if not (e_range is not None and e_range[0] >= 0 or e_range is None and _nonneg(e, dom)):
        return False
    return _scaled_bound(form, ext, e, c, dom)


def _scaled_bound(form: dict, ext: dict, e: dict, c: dict, dom: dict) -> bool:
    """``form = k * e + r`` with ``0 <= r < k`` and ``ext = k * c`` (or ``c = ceil(ext / k)``:
    then ``e < c`` is implied by ``form < ext``), or with ``r`` in ``[r0, r0 + k)`` and
    ``ext - r0 = k * c``; or the same with
    ``e // m`` for ``e`` and ``c / m`` for ``c`` (``m`` dividing ``c``). ``ext`` and ``c``
    are affine forms: a symbolic loop fused and split compares with ``n * 3``."""
    k = _scale(form, e)
    rest = value_range(_add(form, e, -k), dom) if k is not None else None
    if rest is not None and (ext == _times(c, k) or _ceil_of(ext, k) == c) and 0 <= rest[0] and rest[1] < k:
        return True
    if rest is not None and rest[1] - rest[0] < k and _add(ext, {ONE: -rest[0]}) == _times(c, k):
        return True  # an offset binding (decompose_padding's interior, k * e + r - 2 < 6 as e < 4)
    for atom in form:
        m = const_of(atom.b) if isinstance(atom, FloorDiv) else None
        part = _divided(c, m) if m and m > 0 else None
        if part is not None and affine(atom.a) == e and _scaled_bound(form, ext, {atom: 1}, part, dom):
            return True
    return False


def implied(term, realize: BlockRealize, dom: dict) -> bool:
    """``e < c`` holds on every loop iteration, or is implied by some iterator's domain
    (see :func:`_bounds`)."""
    if not isinstance(term, LT):
        return False
    if any(_is_binding_bound(term, iv, v) or _is_divided_binding_bound(term, iv, v, dom)
           for iv, v in zip(realize.block.iter_vars, realize.iter_values)):
        return True
    e, c = affine(term.a), affine(term.b)
    if e is None or c is None:
        return False
    whole = value_range(e, dom)
    if whole is not None and set(c) <= {ONE} and whole[1] < c.get(ONE, 0):
        return True  # true on every loop iteration
    if _repeats_only(e, c, realize, dom):
        return True
    return any(_bounds(v, iv, e, c, dom) for iv, v in zip(realize.block.iter_vars, realize.iter_values))


def _is_binding_bound(term, iv, value) -> bool:
    """``term`` is literally ``value < extent`` of an iterator bound to ``value`` with domain
    ``[0, extent)``: the block's domain already says it (this also covers bindings that are
    not affine, such as ``o * 2 + f // n`` of a symbolic loop fused and split)."""
    return const_of(iv.dom.min) == 0 and term.a == value and term.b == iv.dom.extent


def _is_divided_binding_bound(term, iv, value, dom: dict) -> bool:
    """``term`` is ``e < k * m`` for an iterator bound to ``e // m`` with domain ``[0, k)``,
    ``e >= 0`` and ``m`` a positive form (also symbolic: ``f < n * 21`` with binding
    ``f // (n * 7)`` of extent 3, loops of a symbolic extent fused and bound to threads)."""
    if not isinstance(value, FloorDiv) or const_of(iv.dom.min) != 0 or term.a != value.a:
        return False
    k, m, c, e = const_of(iv.dom.extent), affine(value.b), affine(term.b), affine(term.a)
    if k is None or k <= 0 or m is None or c is None or e is None or not m:
        return False
    if any(v <= 0 for v in m.values()) or any(a is not ONE and not isinstance(a, Var) for a in m):
        return False
    if any(isinstance(a, Var) and a in dom for a in m):
        return False  # a loop variable in the divisor: not a size
    return c == _times(m, k) and _nonneg(e, dom)


def _repeats_only(e: dict, c: dict, realize: BlockRealize, dom: dict) -> bool:
    """``e < c`` over loops no binding reads, true with those loops at 0: it only keeps the
    block from running again on the same points (TVM's split of a fused extent-1 loop, bound
    to threads, gives ``b * 8 + t < 1`` over a block whose variables are all constants)."""
    atoms = [a for a in e if a is not ONE]
    if not atoms or not set(c) <= {ONE} or not all(isinstance(a, Var) and a in dom for a in atoms):
        return False
    read = set()
    for value in realize.iter_values:
        post_order_visit(value, lambda n: read.add(id(n)) if isinstance(n, Var) else None)
    return not any(id(a) in read for a in atoms) and e.get(ONE, 0) < c.get(ONE, 0)


def _is_true(pred) -> bool:
    return isinstance(pred, IntImm) and pred.value == 1


def loop_domain(func: PrimFunc) -> dict:
    """Loop variable -> extent, for the loops starting at 0."""
    dom = {}
    post_order_visit(func.body, lambda n: dom.__setitem__(n.loop_var, n.extent)
                     if isinstance(n, For) and const_of(n.min) == 0 else None)
    return dom


def drop_predicates(func: PrimFunc) -> "PrimFunc | None":
    """``func`` without split predicates, or None when one may drop elements."""
    bad = []
    dom = loop_domain(func)

    def post(n):
        if not isinstance(n, BlockRealize) or _is_true(n.predicate):
            return None
        if not all(implied(t, n, dom) for t in conjuncts(n.predicate)):
            bad.append(n)
            return None
        return attrs.evolve(n, predicate=IntImm(n.predicate.dtype, 1))

    out = transform(func, post)
    return None if bad else out

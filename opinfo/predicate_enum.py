"""Block predicates shown to drop no element by enumerating the loops they constrain.

Splits of splits with factors that do not divide (``split(i, [None, 4])`` then the inner
loop by 5) give predicates that bound a *part* of an iterator's binding
(``i0_1_0 * 5 + i0_1_1 < 4`` beside ``i0_0 * 4 + (i0_1_0 * 5 + i0_1_1) < 9``): each says
"this digit stays below its radix", none is "an iterator stays in its domain", so the
rules of :mod:`.predicates` do not see through them. This module checks such a predicate
exactly, one group of loops at a time: loops are grouped when a binding or a conjunct
uses them together; for every group some conjunct reads, all its loops must have constant
extents (or ranges that use only the group's outer loops: each run as far as it evaluates
there, :func:`_points`), and enumerating them must reach every point of the domain of the
block variables bound over that group exactly once (a reduction must not add a point twice). Groups of
constant loops no conjunct reads are enumerated too; those over a symbolic extent that no
conjunct reads keep their bindings as TVM wrote them.

A group over a symbolic extent (``n`` split twice) cannot be enumerated. Its constant digits
(``i0_0_1_0 * 3 + i0_0_1_1 < 2``, enumerated on their own) are contracted to one fresh loop
each (:func:`_contract`); the bindings must then be plain mixed-radix numbers again and the
rules of :mod:`.predicates` judge the conjuncts left (``v < n``, ``g < (n + 2) // 3``).
"""
from __future__ import annotations

import math

import attrs
import numpy as np

from tir.expr import GE, GT, LE, LT, Add, FloorDiv, FloorMod, IntImm, Mul, SizeVar, Sub, Var
from tir.functor import post_order_visit, substitute, transform
from tir.stmt import BlockRealize

from .affine import ONE, affine, const_of
from .predicates import conjunction
from .recognize.symbolic import mentions
from .probe import NotEvaluable, collect_vars, distinct, evaluate_points, flat_points, loops_points, vars_in
from .recognize.guard import conjuncts

MAX_POINTS = 1 << 18
"""Iterations of one group of loops above which the predicate is not enumerated."""


def _vars(expr) -> list:
    """The variables of ``expr`` but the function's symbolic extents (SizeVar ``n``)."""
    found = []
    post_order_visit(expr, lambda n: found.append(n)
                     if isinstance(n, Var) and not isinstance(n, SizeVar) and n not in found else None)
    return found


def _groups(items: list) -> list:
    """Union of the variable sets in ``items`` that share a variable."""
    groups: list = []
    for vs in items:
        vs = set(vs)
        touching = [g for g in groups if g & vs]
        for g in touching:
            groups.remove(g)
            vs |= g
        groups.append(vs)
    return groups


def covers_exactly(realize: BlockRealize, loops: tuple, restates=None, repeats: bool = False) -> bool:
    """Every point of the block's iteration domain is run exactly once under its predicate
    (see the module docstring); ``loops``: the loops between the block and the enclosing one.
    ``restates(realize, dom)``: the rules of :mod:`.predicates` (``restates_domain``), asked
    about the conjuncts of groups over a symbolic extent once their constant digits are
    contracted (:func:`_contract`). ``repeats``: a point may also run more than once (a
    block that computes the same value wherever it runs: a producer placed by
    ``compute_at`` under a consumer's split loops recomputes the rows two consumer tiles
    share); every point must still run."""
    by_var = {lp.loop_var: lp for lp in loops}
    terms = conjuncts(realize.predicate)
    term_vars = [_vars(t) for t in terms]
    bind_vars = [_vars(v) for v in realize.iter_values]
    if any(v not in by_var for vs in term_vars + bind_vars for v in vs):
        return False  # a variable of an outer block or loop: not enumerated here
    symbolic_terms, symbolic_values, symbolic_vars = [], set(), set()
    for group in _groups(term_vars + bind_vars):
        group_terms = [t for t, vs in zip(terms, term_vars) if set(vs) & group]
        loops_in = [by_var[v] for v in by_var if v in group]
        if all(const_of(lp.extent) is not None for lp in loops_in):
            if not _group_covers(realize, loops_in, group_terms, group, repeats):
                return False
        else:
            symbolic_terms += group_terms
            symbolic_values |= {k for k, vs in enumerate(bind_vars) if set(vs) & group}
            symbolic_vars |= group
    if not symbolic_terms:
        return True
    if restates is not None:
        contracted, dom = _contract(realize, symbolic_terms, by_var)
        # Once digits are contracted, the bindings must be plain mixed-radix numbers again
        # (the rules below only bound their top digit); then the rules judge what is left.
        values = [affine(contracted.iter_values[k]) for k in sorted(symbolic_values)]
        if all(f is not None and _mixed_radix(f, dom) for f in values) and restates(contracted, dom):
            return True
    return _covers_at_sizes(realize, loops, symbolic_vars, repeats)


SIZE_PERIODS = 2
"""Periods of the constants (divisors, moduli, bounds) over which :func:`_covers_at_sizes`
enumerates a symbolic extent."""
MAX_SIZES = 1024
"""Most values of a symbolic extent :func:`_covers_at_sizes` tries; more needed: unproven."""
MAX_SIZE_POINTS = 1 << 23
"""Loop iterations :func:`_covers_at_sizes` enumerates over all the values it tries."""


def _covers_at_sizes(realize: BlockRealize, loops: tuple, group: set, repeats: bool = False) -> bool:
    """Exact coverage of the groups of loops over a symbolic extent ``n`` (one SizeVar;
    ``group``: their variables), enumerated
    with ``n`` bound to every value from 1 past a few periods of the constants the loops,
    bindings and conjuncts use. Their indices are quasi-affine in ``n`` (floor divisions and
    remainders by constants or by ``(n + c) // k``), so whether every point is run exactly
    once depends on ``n`` modulo those constants once ``n`` passes them (a symbolic loop
    split by 2, reordered, fused and bound to threads of 8: ``f % ((n + 1) // 2) * 2 + f //
    ((n + 1) // 2)`` under ``f < (n + 1) // 2 * 2``). Ceiling splits of a symbolic extent
    are fused back first (:func:`_fuse_ceil_splits`): their factor (threads of 32) is no
    period of the coverage; a loop over ``c * K`` is then split into ``K`` and ``c``
    (:func:`_split_scaled`), so the digits a fuse reads below ``c`` are no period either.
    Only the group's loops, conjuncts and bindings count."""
    group = set(group)
    realize, loops = _fuse_ceil_splits(realize, loops, group)
    realize, loops = _split_scaled(realize, loops, group)
    loops = [lp for lp in loops if lp.loop_var in group]
    terms = [t for t in conjuncts(realize.predicate) if set(_vars(t)) & group]
    bound = [(iv, v) for iv, v in zip(realize.block.iter_vars, realize.iter_values) if set(_vars(v)) & group]
    exprs = [*terms, *(v for _, v in bound), *(lp.extent for lp in loops),
             *(iv.dom.extent for iv, _ in bound), *(iv.dom.min for iv, _ in bound)]
    sizes = []
    for e in exprs:
        sizes += [v for v in _sizes(e) if v not in sizes]
    if len(sizes) != 1:
        return False
    (n,) = sizes
    consts, scales = [1], [1]

    def visit(x):
        if isinstance(x, IntImm) and x.value:
            consts.append(abs(x.value))
        # the periods in n: constants dividing or scaling an expression of n
        if isinstance(x, (FloorDiv, FloorMod, Mul)) and mentions(x, [n]):
            scales.extend(abs(c.value) for c in (x.a, x.b) if isinstance(c, IntImm) and c.value)

    for e in exprs:
        post_order_visit(e, visit)
    period = 1
    for c in set(scales):
        period = math.lcm(period, c)
    top = SIZE_PERIODS * period + max(consts)
    if top > MAX_SIZES:
        return False
    budget = MAX_SIZE_POINTS
    for value in range(1, top + 1):
        at, fixed = _at_size(realize, loops, n, value)
        got = _points(fixed)
        if got is None:
            return False
        budget -= got[1]
        at_terms = [t for t in conjuncts(at.predicate) if set(_vars(t)) & group]
        if budget < 0 or not _group_covers(at, fixed, at_terms, group, repeats):
            return False
    return True


def _fuse_ceil_splits(realize: BlockRealize, loops: tuple, group: set) -> tuple:
    """(realize, loops) with every ceiling split of an extent ``E`` -- an outer loop ``o`` over
    ``(E + c - 1) // c``, an inner ``i`` over ``c``, a conjunct ``o * c + i < E`` -- made one
    loop ``f`` over ``E`` again, when ``o`` and ``i`` appear nowhere but in ``o * c + i``: the
    same values of ``o * c + i`` are run, each once. The fused loop joins ``group``."""
    for term in conjuncts(realize.predicate):
        if not isinstance(term, LT):
            continue
        form, bound = affine(term.a), affine(term.b)
        pair = _ceil_split(form, bound, {lp.loop_var: lp for lp in loops}) if form and bound else None
        if pair is None:
            continue
        outer, inner, c = pair
        fused = Var(outer.loop_var.name + "_f", outer.loop_var.dtype)

        def post(n, outer=outer.loop_var, inner=inner.loop_var, c=c, fused=fused):
            if isinstance(n, Add) and affine(n) == {outer: c, inner: 1}:
                return fused
            return None

        values = tuple(transform(v, post) for v in realize.iter_values)
        # the split's own conjunct is the fused loop's domain: dropped
        predicate = conjunction([transform(t, post) for t in conjuncts(realize.predicate) if t is not term],
                                realize.predicate.dtype)
        left: set = set()
        for e in (*values, predicate):
            collect_vars(e, left)
        if outer.loop_var in left or inner.loop_var in left:
            continue
        realize = attrs.evolve(realize, iter_values=values, predicate=predicate)
        group.add(fused)
        loops = tuple(attrs.evolve(lp, loop_var=fused, extent=term.b) if lp is outer else lp
                      for lp in loops if lp is not inner)
    return realize, loops


def _split_scaled(realize: BlockRealize, loops: tuple, group: set) -> tuple:
    """(realize, loops) with every loop ``f`` over ``c * K`` (``c`` a constant above 1, ``K``
    symbolic) made two, ``h`` over ``K`` and ``l`` over ``c``, ``f`` replaced by ``h * c + l``
    (the same values, each once). Digits of ``f`` below ``c`` (``f % 2``, ``f % 54 // 18``,
    ``f // 54`` for ``c = 54``: fused loops bound to threads) then read ``l`` alone or ``h``
    alone, so the constants of the fuse stop counting as periods of the symbolic extent.
    The new loops join ``group``."""
    out = []
    for lp in loops:
        form = affine(lp.extent) if lp.loop_var in group and const_of(lp.min) == 0 else None
        if not form or len(form) != 1 or ONE in form:
            out.append(lp)
            continue
        (atom, c), = form.items()
        if c <= 1 or not _sizes(lp.extent):
            out.append(lp)
            continue
        f = lp.loop_var
        hi, lo = Var(f.name + "_h", f.dtype), Var(f.name + "_l", f.dtype)
        whole = Add(Mul(hi, IntImm(f.dtype, c)), lo)

        def post(n, hi=hi, lo=lo, c=c):
            return _digit_of(n, hi, lo, c)

        values = tuple(transform(substitute(v, {f: whole}), post) for v in realize.iter_values)
        predicate = transform(substitute(realize.predicate, {f: whole}), post)
        realize = attrs.evolve(realize, iter_values=values, predicate=predicate)
        group.discard(f)
        group |= {hi, lo}
        out += [attrs.evolve(lp, loop_var=hi, extent=atom), attrs.evolve(lp, loop_var=lo, extent=IntImm(f.dtype, c))]
    return realize, tuple(out)


def _sizes(e) -> list:
    """The shape variables (SizeVar) ``e`` uses, each once."""
    found: list = []
    post_order_visit(e, lambda n: found.append(n) if isinstance(n, SizeVar) and n not in found else None)
    return found


def _digit_of(n, hi: Var, lo: Var, c: int):
    """``n`` (a floor division or remainder by a constant) with the multiple of ``hi`` taken
    out when the constant divides its coefficient, ``lo // d`` (``d >= c``) as 0 and ``lo % m``
    (``m >= c``) as ``lo``; None when nothing changes. Exact for integers (``lo`` in
    ``[0, c)``)."""
    if not isinstance(n, (FloorDiv, FloorMod)):
        return None
    d = const_of(n.b)
    form = affine(n.a)
    if d is None or d <= 0 or form is None:
        return None
    if form == {lo: 1} and d >= c:
        return IntImm(lo.dtype, 0) if isinstance(n, FloorDiv) else lo
    k = form.get(hi, 0)
    if not k or k % d:
        return None
    rest = _form_expr({v: x for v, x in form.items() if v is not hi}, hi.dtype)
    low = (FloorMod if isinstance(n, FloorMod) else FloorDiv)(rest, n.b)
    simpler = _digit_of(low, hi, lo, c)
    low = low if simpler is None else simpler
    return low if isinstance(n, FloorMod) else Add(Mul(hi, IntImm(hi.dtype, k // d)), low)


def _form_expr(form: dict, dtype):
    """An expression for the affine ``form`` (atoms are expressions themselves)."""
    out = None
    for v, x in form.items():
        term = IntImm(dtype, x) if v is ONE else (v if x == 1 else Mul(v, IntImm(dtype, x)))
        out = term if out is None else Add(out, term)
    return out if out is not None else IntImm(dtype, 0)


def _ceil_split(form: dict, bound: dict, by_var: dict) -> "tuple | None":
    """(outer loop, inner loop, factor) when ``form < bound`` is ``o * c + i < E`` with ``i``
    over ``c`` and ``o`` over ``(E + c - 1) // c``."""
    if ONE in form or len(form) != 2 or not all(v in by_var for v in form):
        return None
    (a, ca), (b, cb) = sorted(form.items(), key=lambda t: t[1])
    inner, outer, c = by_var[a], by_var[b], cb
    if ca != 1 or const_of(inner.extent) != c or const_of(inner.min) != 0 or const_of(outer.min) != 0:
        return None
    ext = outer.extent
    if not isinstance(ext, FloorDiv) or const_of(ext.b) != c:
        return None
    want = dict(bound)
    want[ONE] = want.get(ONE, 0) + c - 1
    return (outer, inner, c) if affine(ext.a) == {k: v for k, v in want.items() if v} else None


def _at_size(realize: BlockRealize, loops: tuple, n, value: int) -> tuple:
    """(realize, loops) with the symbolic extent ``n`` bound to ``value``, extents and
    domains folded to constants."""
    def at(e):
        return _folded(substitute(e, {n: IntImm(n.dtype, value)}))

    ivs = tuple(attrs.evolve(iv, dom=attrs.evolve(iv.dom, min=at(iv.dom.min), extent=at(iv.dom.extent)))
                for iv in realize.block.iter_vars)
    bound = attrs.evolve(realize, iter_values=tuple(at(v) for v in realize.iter_values),
                         predicate=at(realize.predicate), block=attrs.evolve(realize.block, iter_vars=ivs))
    return bound, [attrs.evolve(lp, extent=at(lp.extent)) for lp in loops]


def _folded(e):
    """``e`` (no variables left) as an IntImm, or ``e`` when it does not evaluate."""
    free = vars_in(e)
    if free:
        return e
    try:
        value = evaluate_points(e, {}, 1)
    except (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return e
    return IntImm(e.dtype, int(np.asarray(value).reshape(-1)[0]))


def _mixed_radix(form: dict, dom: dict) -> bool:
    """``form`` is ``sum(c_i * l_i)`` over distinct loops (extent-1 loops aside) with
    ``c_1 = 1`` and ``c_{i+1} = c_i * extent(l_i)``; only the last may have a symbolic extent."""
    if form.get(ONE, 0) != 0:
        return False
    terms = []
    for v, c in form.items():
        if v is ONE or not c:
            continue
        if not isinstance(v, Var) or v not in dom:
            return False
        if const_of(dom[v]) != 1:
            terms.append((c, v))
    terms.sort(key=lambda t: t[0])
    expect = 1
    for i, (c, v) in enumerate(terms):
        x = const_of(dom[v])
        if c != expect or (x is None and i != len(terms) - 1):
            return False
        expect = c * x if x is not None else None
    return True


def _contract(realize: BlockRealize, terms: list, by_var: dict) -> "tuple | None":
    """(realize, loop domain) with every *digit* among ``terms`` contracted: a conjunct
    ``e < C`` over loops of constant extent only, where enumerating those loops shows ``e``
    takes each value of ``[0, C)`` exactly once under it, and where every binding and other
    conjunct uses those loops only through ``e`` (``9 * b + 3 * c`` for ``e = 3 * b + c``).
    ``e`` then becomes one fresh loop variable of extent ``C`` (its conjunct is its domain),
    which an enclosing digit may contract in turn (splits of splits of splits). The other
    conjuncts stay, rewritten."""
    values = list(realize.iter_values)
    left = list(terms)
    dom = {v: lp.extent for v, lp in by_var.items() if const_of(lp.min) == 0}
    ext = {v: const_of(x) for v, x in dom.items() if const_of(x) is not None}
    changed = True
    while changed:
        changed = False
        for t in sorted(left, key=lambda x: len(_vars(x))):
            digit = _digit(t, ext)
            if digit is None:
                continue
            e, bound, inner = digit
            if not all(_through(x, e, inner) for x in values + [x for x in left if x is not t]):
                continue
            if not _digit_values(e, inner, ext, bound):
                continue
            unit = next(v for v in inner if e.get(v) == 1)
            fresh = Var(f"{unit.name}_digit", unit.dtype)
            sub = {unit: _expr(fresh, {v: c for v, c in e.items() if v is not unit})}
            values = [substitute(x, sub) for x in values]
            left = [substitute(x, sub) for x in left if x is not t]
            dom[fresh], ext[fresh] = IntImm(unit.dtype, bound), bound
            for v in inner:
                dom.pop(v, None)
                ext.pop(v, None)
            changed = True
            break
    return attrs.evolve(realize, iter_values=tuple(values), predicate=conjunction(left, realize.predicate.dtype)), dom


def _digit(term, ext: dict) -> "tuple | None":
    """(form of ``e``, ``C``, variables of ``e``) for a conjunct ``e < C`` over loops of
    constant extent (``ext``) with a coefficient-1 variable, else None."""
    if not isinstance(term, LT):
        return None
    e, c = affine(term.a), const_of(term.b)
    if e is None or c is None or c <= 0 or e.get(ONE, 0) != 0:
        return None
    e = {v: k for v, k in e.items() if k}  # a contracted digit's variables cancel to 0
    inner = [v for v in e if v is not ONE]
    if not inner or not all(isinstance(v, Var) and v in ext for v in inner):
        return None
    if not any(e[v] == 1 for v in inner):
        return None
    return e, c, inner


def _through(expr, e: dict, inner: list) -> bool:
    """``expr`` uses the variables ``inner`` only as a multiple of ``e`` (or not at all)."""
    found = _vars(expr)
    if not any(v in found for v in inner):
        return True
    parts = [expr.a, expr.b] if isinstance(expr, (LT, LE, GE, GT)) else [expr]
    for part in parts:
        if not any(v in _vars(part) for v in inner):
            continue  # (a bound such as (min(6, n) + 1 - min(3, n)) // 2 need not be affine)
        f = affine(part)
        if f is None:
            return False
        mine = {v: f.get(v, 0) for v in inner}
        unit = next(v for v in inner if e[v] == 1)
        m = mine[unit]
        if any(mine[v] != m * e[v] for v in inner):
            return False
    return True


def _digit_values(e: dict, inner: list, ext: dict, bound: int) -> bool:
    """Enumerating ``inner`` over their extents, ``e`` kept below ``bound`` takes each value
    of ``[0, bound)`` exactly once."""
    sizes = [ext[v] for v in inner]
    size = math.prod(sizes)
    if size > MAX_POINTS:
        return False
    grids = np.meshgrid(*[np.arange(x, dtype=np.int64) for x in sizes], indexing="ij")
    vals = sum(e[v] * g.reshape(-1) for v, g in zip(inner, grids))
    vals = vals[vals < bound]
    return len(vals) == bound and len(np.unique(vals)) == bound and vals.min() == 0


def _expr(fresh: Var, rest: dict):
    """``fresh - sum(c * v for v, c in rest)``, the unit variable of a contracted digit."""
    out = fresh
    for v, c in rest.items():
        out = Sub(out, Mul(v, IntImm(v.dtype, c)))
    return out


def _group_covers(realize, loops: list, terms: list, group: set, repeats: bool = False) -> bool:
    got = _points(loops)
    if got is None:
        return False
    env, size = got
    bound = [(iv, v) for iv, v in zip(realize.block.iter_vars, realize.iter_values) if set(_vars(v)) & group]
    dom = [(const_of(iv.dom.min), const_of(iv.dom.extent)) for iv, _ in bound]
    if any(None in d for d in dom):
        return False
    try:
        keep = np.ones(size, dtype=bool)
        for t in terms:
            keep &= evaluate_points(t, env, size).astype(bool)
        points = [evaluate_points(v, env, size)[keep] for _, v in bound]
    except (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError):
        return False
    want = math.prod(e for _, e in dom)
    runs = int(keep.sum())
    if runs < want or runs > want and not repeats:
        return False  # a point run twice, or missed
    flat = flat_points(points, dom, runs)
    return flat is not None and distinct(flat, want) == want


def _points(loops: list) -> "tuple[dict, int] | None":
    """Every iteration of ``loops`` (outermost first) as flat arrays and their number; None
    past :data:`MAX_POINTS` or when a range is not whole numbers. A loop whose range uses
    the loops around it (``compute_at`` of a producer whose region TVM could not make
    rectangular: ``for ax1 in range(T.max(f * 4 // 7 * 3, ..) + 1 - T.min(..))``) runs, at
    each of their iterations, exactly the range it evaluates to there
    (:func:`.probe.loops_points`); a range using a variable outside ``loops``: None."""
    got = loops_points(loops, {}, MAX_POINTS)
    return None if got is None else got[:2]

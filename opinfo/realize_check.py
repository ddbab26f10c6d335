"""Do a block's loops run its iteration domain the way the recognizers assume?

Recognizers read a block's iteration variables and their domains (``v_k = T.axis.reduce(5,
...)``) and take "the block runs every point of that domain once" for granted: a sum over
``v_k`` in ``[0, 5)`` is a sum over five elements. The loops and bindings above the block
(``k0 * 2 + k1`` with ``k1`` over 3, ``(i * 3 + j)`` with ``j`` over 2 of 3) decide whether
that is so, and the predicate rules only say a predicate drops nothing *of what the loops
run*. :func:`misrealized` checks the assumption by enumerating the loops of a block (its
predicate applied) and refutes it when

- a binding leaves its domain (ill-formed: the block would read or write elsewhere) in a
  reduction block or a block writing a parameter (a spatial block filling an intermediate
  may: TVM's ``cache_read`` + ``compute_at`` copy a guarded producer's region unguarded),
- a reduction block adds some point of its domain twice, or only some of the reduction
  points of a spatial point (a block with an init restarts whenever its reduction variables
  are all at their minimum: ``compute_at`` recomputing a whole reduction per outer
  iteration is fine when every run is whole; see :func:`_bad_reduction`),
- a block writing a parameter buffer leaves a point of its domain out.

Spatial points run more than once are allowed (each run stores the same value: TVM's
``compute_at`` recomputes overlapping regions) and so are intermediates written in part.

Only what can be enumerated is judged: loops between the block and the enclosing block whose
extents, the block's domain, bindings and predicate use nothing but those loops and the
function's shape variables. Shape variables (``n``) are given a few values (and 2, then 1,
when the loops are too many to enumerate at every one of them); a refutation at
any of them refutes (the function must be right for every ``n``), a value at which the
block's domain is empty is skipped, and loops that run nothing of a domain that is not empty
refute (``(n - 24) // 25`` iterations for ``(n + 24) // 25``).
"""
from __future__ import annotations

import math

import numpy as np

from tir.expr import BufferLoad, IntImm, Var
from tir.functor import post_order_visit
from tir.stmt import BufferStore, IterKind

from .affine import affine, const_of, equal_extents
from .coverage import block_realizes, copy_order
from .predicates import is_true, leading_widths, prefix_box
from .recognize.guard import conjuncts
from .rewrite import stored, stores_in
from .probe import (NotEvaluable, collect_vars, distinct, evaluate_points, flat_points, loops_points, scalar_int,
                    shape_envs, shape_vars, vars_in)

MAX_POINTS = 1 << 17
"""Loop iterations of one block above which it is not enumerated."""

COVER_POINTS = 1 << 19
"""Loop iterations of one block above which :func:`covers_domain` does not enumerate it
(a copy ``compute_at`` placed inside a convolution's reduction loops: 138,240)."""

SHAPE_VALUES = (7, 12, 5, 29)
"""Values given to the function's shape variables in turn."""

SMALL_SHAPE_VALUES = (2, 1)
"""Values tried in turn when a block's loops are too many to enumerate at every one of
:data:`SHAPE_VALUES` (a scheduled nest over a symbolic batch: 10^5 iterations per unit of
``n``): the function must be right at a batch of one too."""

_ERRORS = (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError, KeyError)



def _domains(block, env: dict) -> "list | None":
    """``(min, extent)`` of each block variable at these shape-variable values; None when
    one is not a whole number or not positive."""
    doms = []
    for iv in block.iter_vars:
        lo, ext = scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)
        if lo is None or ext is None or ext <= 0:
            return None
        doms.append((lo, ext))
    return doms


def _refuted(realize, loops, env: dict, is_param) -> "bool | None":
    """The block's loops provably break the assumption at these shape-variable values; None
    when they are too many to enumerate there."""
    block = realize.block
    doms = _domains(block, env)
    if doms is None:
        return False  # shape values at which the function makes no sense
    if math.prod(e for _, e in doms) > MAX_POINTS:
        return None
    got = loops_points(loops, env, MAX_POINTS)
    if got is None:
        return None
    loop_env, size, _ = got
    if size == 0:  # the loops run nothing of a domain that is not empty
        return any(is_param(b) for b in stored(block).values()) or \
            any(iv.kind == IterKind.REDUCE for iv in block.iter_vars)
    try:
        keep = evaluate_points(realize.predicate, loop_env, size).astype(bool)
        values = [evaluate_points(v, loop_env, size)[keep] for v in realize.iter_values]
    except _ERRORS:
        return False
    kinds = [iv.kind for iv in block.iter_vars]
    if any(k not in (IterKind.SPATIAL, IterKind.REDUCE) for k in kinds):
        return False
    writes_param = any(is_param(b) for b in stored(block).values())
    if IterKind.REDUCE not in kinds and not writes_param:
        # A spatial block filling an intermediate: TVM's cache_read + compute_at copies a
        # split producer's region without its guard (data_dilate_shared's row 19 of 19), the
        # consumer's own guard never reads those points. Nothing a recognizer assumes.
        return False
    if IterKind.REDUCE not in kinds:
        values = _past_copy_dropped(block, values, doms, env)
    n = len(values[0]) if values else int(keep.sum())
    spatial = [k for k, kind in enumerate(kinds) if kind == IterKind.SPATIAL]
    reduce = [k for k, kind in enumerate(kinds) if kind == IterKind.REDUCE]
    flat_s = flat_points([values[k] for k in spatial], [doms[k] for k in spatial], n)
    flat_r = flat_points([values[k] for k in reduce], [doms[k] for k in reduce], n)
    if flat_s is None or flat_r is None:
        return True  # a binding outside its domain
    spatial_size = math.prod(doms[k][1] for k in spatial)
    red_size = math.prod(doms[k][1] for k in reduce)
    spatial_points = np.unique(flat_s)
    if IterKind.REDUCE in kinds and _bad_reduction(flat_s, flat_r, red_size, block.init is not None):
        return True
    if not writes_param or spatial_points.size == spatial_size:
        return False
    # a leading part of every spatial domain, each point run, under a predicate
    # (reverse_compute_inline of a slice into the block writing the output: domain 7 under
    # ``T.where(v < 6)``, an output of 6) is the block over that part (predicates.prefix_box)
    # when it writes every element of the outputs it stores to
    widths = leading_widths([values[k] for k in spatial], [doms[k] for k in spatial])
    if widths is None or math.prod(widths) != spatial_points.size or is_true(realize.predicate):
        return True
    return not _writes_params_whole(block, values, n, is_param, env)


def _writes_params_whole(block, values: list, count: int, is_param, env: "dict | None" = None) -> bool:
    """Whether the block's stores to parameters, at the ``count`` points given per
    iteration variable (``values``), write every element of those buffers (their shapes
    static, or at the shape variables' values ``env`` gives)."""
    env = dict(env or {})
    env.update({iv.var: np.asarray(v) for iv, v in zip(block.iter_vars, values)})
    for store in stores_in(block.body):
        if not is_param(store.buffer):
            continue
        shape = [scalar_int(e, env) for e in store.buffer.shape]
        if None in shape:
            return False
        try:
            idx = [evaluate_points(i, env, count) for i in store.indices]
        except _ERRORS:
            return False
        flat = flat_points(idx, [(0, e) for e in shape], count)
        if flat is None or distinct(flat, math.prod(shape)) != math.prod(shape):
            return False
    return True


def _past_copy_dropped(block, values: list, doms: list, env: dict) -> list:
    """``values`` without the points where a binding leaves its domain, when the block is
    an element copy (:func:`.coverage.copy_order`; ``S[i...] = P[i...]``) and each such point copies an
    element outside both (TVM's ``reindex_cache_write`` copy runs a split loop's last tile
    unguarded, past the end of the axis): those iterations change no element of either
    buffer. Otherwise ``values`` as they are."""
    store = block.body
    if not values or not isinstance(store, BufferStore) or copy_order(store) is None:
        return values
    inside = np.ones(len(values[0]), dtype=bool)
    for v, (lo, ext) in zip(values, doms):
        inside &= (v >= lo) & (v < lo + ext)
    if inside.all():
        return values
    leaves = dict(env)
    leaves.update({iv.var: v[~inside] for iv, v in zip(block.iter_vars, values)})
    count = int((~inside).sum())
    outside = np.zeros(count, dtype=bool)
    try:
        for index, axis in zip(store.indices, store.buffer.shape):
            size = scalar_int(axis, env)
            if size is None:
                return values
            p = evaluate_points(index, leaves, count)
            outside |= (p < 0) | (p >= size)
    except _ERRORS:
        return values
    return [v[inside] for v in values] if outside.all() else values


def free_vars(realize, loops) -> set:
    """The variables the loops' ranges, the block's domain, bindings and predicate use other
    than the loops' own (shape variables, or an outer block's and loop's)."""
    used: set = set()
    for lp in loops:
        collect_vars(lp.min, used)
        collect_vars(lp.extent, used)
    for iv in realize.block.iter_vars:
        collect_vars(iv.dom.min, used)
        collect_vars(iv.dom.extent, used)
    for v in realize.iter_values:
        collect_vars(v, used)
    collect_vars(realize.predicate, used)
    return used - {lp.loop_var for lp in loops}


def runs_whole_domain(realize, loops, symbols=frozenset()) -> bool:
    """:func:`covers_domain` is True: provably every point of the domain."""
    return covers_domain(realize, loops, symbols) is True


def covers_domain(realize, loops, symbols=frozenset(), spatial_only: bool = False) -> "bool | None":
    """Whether ``loops`` (from the enclosing block down, the predicate applied) run every
    point of the spatial block's domain -- at each of a few values of the function's shape
    variables ``symbols``: True, False (provably not), or None (not enumerable: unknown
    variables, too many points). A rewrite that relies on it (:func:`.padding.merge_padding`)
    asks for True; the inliner (:class:`.semantic.Semantics`) refuses a producer on False. Unlike
    :func:`.predicate_enum.covers_exactly` (every point exactly once, inside the domain), points
    run twice or outside the domain are no concern here: ``merge_padding`` sees the nests after
    :func:`.predicates.drop_predicates` removed the domain bounds of split loops."""
    if plain_realize(realize, loops):
        return True
    free = free_vars(realize, loops)
    if not free <= set(symbols) or (not spatial_only and
                                     any(iv.kind != IterKind.SPATIAL for iv in realize.block.iter_vars)):
        return None
    answer = True
    for env in shape_envs(free, SHAPE_VALUES):
        got = _covered(realize, loops, env)
        if got is False:
            return False
        if got is None:
            answer = None
    return answer


def _covered(realize, loops, env: dict) -> "bool | None":
    """Whether the loops run every point of the (spatial) block's domain at these values.
    A variable bound to a loop of its own over exactly its domain (used nowhere else) is
    covered by it: only the other variables and the loops they use are enumerated."""
    loop_vars = {lp.loop_var for lp in loops}
    counts: dict = {}
    for v in list(realize.iter_values) + [realize.predicate]:
        found = vars_in(v)
        for x in found & loop_vars:
            counts[x] = counts.get(x, 0) + 1
    by_var = {lp.loop_var: lp for lp in loops}
    rest = []
    for k, (iv, value) in enumerate(zip(realize.block.iter_vars, realize.iter_values)):
        if iv.kind != IterKind.SPATIAL:
            continue  # the spatial points only (a reduction's are judged by _refuted)
        lp = by_var.get(value) if isinstance(value, Var) else None
        if lp is None or counts.get(value) != 1 or not equal_extents(lp.min, iv.dom.min) or not equal_extents(lp.extent, iv.dom.extent):
            rest.append(k)
    needed: set = set()
    for k in rest:
        collect_vars(realize.iter_values[k], needed)
    collect_vars(realize.predicate, needed)
    nested: set = set()
    for lp in loops:
        collect_vars(lp.min, nested)
        collect_vars(lp.extent, nested)
    if nested & loop_vars:  # extents depend on loops: every loop, every spatial variable
        rest = [k for k, iv in enumerate(realize.block.iter_vars) if iv.kind == IterKind.SPATIAL]
        needed = loop_vars
    loops = [lp for lp in loops if lp.loop_var in needed]
    return _covered_vars(realize, loops, rest, env)


def _covered_vars(realize, loops, rest: list, env: dict) -> "bool | None":
    """Whether ``loops`` run every point of the domains of block variables ``rest``."""
    doms = []
    for k in rest:
        iv = realize.block.iter_vars[k]
        lo, ext = scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)
        if lo is None or ext is None or ext < 0:
            return None
        doms.append((lo, ext))
    want = math.prod(e for _, e in doms)
    if want > COVER_POINTS:
        return None
    if want == 0:
        return True
    got = loops_points(loops, env, COVER_POINTS)
    if got is None:
        return None
    loop_env, size, _ = got
    if size == 0:
        return False
    try:
        keep = evaluate_points(realize.predicate, loop_env, size).astype(bool)
        values = [evaluate_points(realize.iter_values[k], loop_env, size)[keep] for k in rest]
    except _ERRORS:
        return None
    inside = np.ones(int(keep.sum()), dtype=bool)
    for v, (lo, ext) in zip(values, doms):
        inside &= (v >= lo) & (v < lo + ext)
    # points outside the domain are no concern here (a predicate dropped as a domain bound
    # leaves them; other checks judge them): is every point of the domain run?
    flat = flat_points([v[inside] for v in values], doms, int(inside.sum()))
    if flat is None:
        return None  # not whole numbers
    return distinct(flat, want) == want


def _bad_reduction(flat_s, flat_r, red_size: int, has_init: bool) -> bool:
    """Points of a reduction block, in the order the loops run them, do not add each
    reduction point of a spatial point exactly once. A block with an init starts again
    whenever its reduction variables are all at their minimum (``flat_r == 0``):
    ``compute_at`` recomputes a whole reduction per iteration of an outer loop, and a
    consumer under that loop reads it between runs, so *every* run from one start to the
    next must add each reduction point once (and the first point must be a start). Without
    an init (decomposed) repeats are not judged, only reduction points never reached."""
    if not has_init:
        pairs = np.unique(flat_s * red_size + flat_r)
        per_point = np.unique(pairs // red_size, return_counts=True)[1]
        return bool(np.any(per_point != red_size))  # some reduction points left out
    order = np.argsort(flat_s, kind="stable")
    s, r = flat_s[order], flat_r[order]
    first = np.ones(s.size, dtype=bool)
    first[1:] = s[1:] != s[:-1]
    if np.any(r[first] != 0):
        return True  # a point added before its init ran
    run = np.cumsum(r == 0)  # runs numbered across all spatial points, in order
    keys, counts = np.unique(run * red_size + r, return_counts=True)
    if np.any(counts != 1):
        return True  # an element added twice within one run
    per_run = np.unique(keys // red_size, return_counts=True)[1]
    return bool(np.any(per_run != red_size))  # a run that leaves reduction points out


def plain_realize(realize, loops, positions=None) -> bool:
    """No predicate, and every block variable bound to a loop of its own whose range is the
    variable's domain, every loop bound: the domain is run once, nothing to enumerate (most
    blocks as TVM lowers them). With ``positions``, only the variables at those positions
    are asked so (other loops may stay unbound): those run their whole domain."""
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        return False
    by_var = {lp.loop_var: lp for lp in loops}
    seen = set()
    for k, (iv, value) in enumerate(zip(realize.block.iter_vars, realize.iter_values)):
        if positions is not None and k not in positions:
            continue
        lp = by_var.get(value) if isinstance(value, Var) else None
        if lp is None or value in seen or not equal_extents(lp.min, iv.dom.min) or not equal_extents(lp.extent, iv.dom.extent):
            return False
        seen.add(value)
    return positions is not None or len(seen) == len(loops)


def _short_reduction(block) -> bool:
    """A reduction variable of ``block`` indexes an axis of a buffer alone (``x[i, v_k]``)
    somewhere in the block's update, the axis is longer than the variable's domain, and no
    such bare use matches the domain: the block reduces over a leading part of the data
    only (a reduction loop cut short under ``T.axis.remap`` shrinks the domain with it, so
    every other check sees a smaller but consistent reduction). Constant extents only; a
    use longer than its axis (``pad_einsum`` guards its loads) is not judged."""
    doms = {}
    for iv in block.iter_vars:
        if iv.kind == IterKind.REDUCE:
            lo, ext = const_of(iv.dom.min), const_of(iv.dom.extent)
            if lo == 0 and ext is not None:
                doms[iv.var] = ext
    if not doms:
        return False
    uses: dict = {}

    def visit(n):
        if isinstance(n, BufferLoad) and len(n.indices) == len(n.buffer.shape):
            for index, axis in zip(n.indices, n.buffer.shape):
                if isinstance(index, Var) and index in doms:
                    uses.setdefault(index, []).append(const_of(axis))
    post_order_visit(block.body, visit)
    for var, axes in uses.items():
        ext = doms[var]
        if any(a is None or a == ext for a in axes):
            continue
        if any(a > ext for a in axes):
            return True
    return False


def _idle_reduction(block) -> bool:
    """A reduction variable (extent other than 1) that the block's update never uses: the
    same term is combined once per value (a sum multiplied by the extent), which no Relax op
    lowers to -- a reduction variable of TVM's indexes what it reduces."""
    if not any(iv.kind == IterKind.REDUCE for iv in block.iter_vars):
        return False
    used = vars_in(block.body)
    return any(iv.kind == IterKind.REDUCE and const_of(iv.dom.extent) != 1 and iv.var not in used
               for iv in block.iter_vars)


def _domain_uses_loops(block, loops) -> bool:
    """A block variable's domain reads a loop around the block (``T.axis.remap`` over a
    loop of extent ``i + 1``): a block's domain is fixed, what varies from one iteration
    to the next is its binding; such a block is ill-formed and every check and recognizer
    would read a domain that is not the one run."""
    used: set = set()
    for iv in block.iter_vars:
        collect_vars(iv.dom.min, used)
        collect_vars(iv.dom.extent, used)
    return any(lp.loop_var in used for lp in loops)


def misrealized(func) -> bool:
    """True when some block's loops provably do not run its iteration domain as recognizers
    assume (see the module docstring), or some reduction covers only part of a buffer's
    axis it alone indexes (:func:`_short_reduction`: a parameter's, or an intermediate's --
    the sum of a fused exp + sum cut short)."""
    symbols = shape_vars(func)
    params = {id(b) for b in func.buffers}
    is_param = lambda b: id(b) in params  # noqa: E731
    for realize, loops in block_realizes(func.body):
        if not realize.block.iter_vars:
            continue
        if _short_reduction(realize.block) or _idle_reduction(realize.block):
            return True
        if _domain_uses_loops(realize.block, loops):
            return True
        free = free_vars(realize, loops)
        if not free <= symbols:
            continue
        if isinstance(realize.predicate, IntImm) and realize.predicate.value == 1 and not loops:
            continue
        if plain_realize(realize, loops):
            continue
        if any(is_param(b) for b in stored(realize.block).values()) and \
                covers_domain(realize, loops, symbols, spatial_only=True) is False and \
                not _cut_writes_whole(realize, loops, is_param):
            # a writer of an output leaves points out (enumerated without the loops it does
            # not need), other than by running a leading part of its domain
            return True
        got = _verdict(realize, loops, shape_envs(free, SHAPE_VALUES), is_param)
        if got is None and free:
            got = _verdict(realize, loops, shape_envs(free, SMALL_SHAPE_VALUES), is_param, first=True)
        if got is None and any(_reduction_left_short(realize, loops, env) for env in shape_envs(free, SHAPE_VALUES)):
            return True
        if got or (got is None and _repeats_inside_reduction(realize, loops)):
            return True
    return False


def _groups(realize, loops, symbols=frozenset()) -> "list | None":
    """The block's variables, predicate conjuncts and loops split into independent groups
    [(variable positions, conjuncts, loops)]: two share a group when they share a loop (a
    binding and a conjunct reading the same loop). None when a loop's range reads another
    loop or an outer variable other than the shape variables ``symbols`` is read (not
    independent; a shape variable has its value in each environment)."""
    from .predicate_enum import _groups as joined

    loop_vars = {lp.loop_var for lp in loops}
    for lp in loops:
        used = vars_in(lp.min)
        collect_vars(lp.extent, used)
        if used & loop_vars:
            return None
    items = [("v", k) for k in range(len(realize.iter_values))]
    items += [("c", term) for term in conjuncts(realize.predicate) if not is_true(term)]
    reads = []
    for kind, x in items:
        used = vars_in(realize.iter_values[x] if kind == "v" else x)
        used -= symbols
        if used - loop_vars:
            return None  # an outer loop or block variable: not enumerated here
        reads.append(used)
    # items reading no loop (a variable bound to a constant) stand alone
    sets = joined([u for u in reads if u]) + [set() for u in reads if not u]
    lone = iter(i for i, u in enumerate(reads) if not u)
    out = []
    for g in sets:
        members = [i for i, u in enumerate(reads) if u & g] if g else [next(lone)]
        out.append(([items[i][1] for i in members if items[i][0] == "v"],
                    [items[i][1] for i in members if items[i][0] == "c"],
                    [lp for lp in loops if lp.loop_var in g]))
    return out


def _reduction_left_short(realize, loops, env: dict) -> bool:
    """A reduction block too large to enumerate whole (:func:`_refuted` gives up) that some
    spatial point provably never adds some reduction point to, or whose binding leaves its
    domain: judged group by group (:func:`_groups`), since the points the loops run are the
    product of each group's. A spatial point of a group missing a reduction point of the same
    group misses it in every combination with the other groups' points; with an init, one
    adding some of its reduction points more often than others adds them unevenly in every
    combination too, which no sequence of whole runs from an init does (``compute_at``
    reruns whole reductions: even counts are not judged)."""
    block = realize.block
    kinds = [iv.kind for iv in block.iter_vars]
    if IterKind.REDUCE not in kinds or any(k not in (IterKind.SPATIAL, IterKind.REDUCE) for k in kinds):
        return False
    doms = _domains(block, env)
    groups = _groups(realize, loops, set(env)) if doms is not None else None
    if groups is None:
        return False
    for positions, terms, group_loops in groups:
        if not any(kinds[k] == IterKind.REDUCE for k in positions):
            continue
        got = loops_points(group_loops, env, MAX_POINTS)
        if got is None:
            continue
        leaves, size, _ = got
        try:
            keep = np.ones(size, dtype=bool)
            for term in terms:
                keep &= evaluate_points(term, leaves, size).astype(bool)
            values = {k: evaluate_points(realize.iter_values[k], leaves, size)[keep] for k in positions}
        except _ERRORS:
            continue
        n = int(keep.sum())
        if n == 0:
            continue  # the whole block runs nothing: other checks' concern
        spatial = [k for k in positions if kinds[k] == IterKind.SPATIAL]
        reduce = [k for k in positions if kinds[k] == IterKind.REDUCE]
        flat_s = flat_points([values[k] for k in spatial], [doms[k] for k in spatial], n)
        flat_r = flat_points([values[k] for k in reduce], [doms[k] for k in reduce], n)
        if flat_s is None or flat_r is None:
            return True  # a binding outside its domain
        red_size = math.prod(doms[k][1] for k in reduce)
        pairs, times = np.unique(flat_s * red_size + flat_r, return_counts=True)
        per_point = np.unique(pairs // red_size, return_counts=True)[1]
        if np.any(per_point != red_size):
            return True
        if block.init is not None:
            # every run from an init adds each reduction point once, so each point of a
            # spatial point is added as often as the others (a whole rerun is fine): uneven
            # counts within the group are uneven in every combination with the others
            first = np.ones(pairs.size, dtype=bool)
            first[1:] = pairs[1:] // red_size != pairs[:-1] // red_size
            start = np.flatnonzero(first)
            if np.any(np.maximum.reduceat(times, start) != np.minimum.reduceat(times, start)):
                return True
    return False


def _cut_writes_whole(realize, loops, is_param) -> bool:
    """Whether the block's predicate cuts its domain to a leading part
    (:func:`.predicates.prefix_box`) over which its stores write every element of the
    parameters they store to (the output of 6 of a block over 7 under ``T.where(v < 6)``).
    An axis the box leaves whole over a symbolic extent (a batch ``n``) is judged at several
    values of the shape variables."""
    if is_true(realize.predicate):
        return False
    box = prefix_box(realize, loops, repeats=True)
    if box is None:
        return False
    symbols: set = set()
    for iv in box:
        collect_vars(iv.dom.min, symbols)
        collect_vars(iv.dom.extent, symbols)
    for env in shape_envs(symbols, SHAPE_VALUES):
        doms = [(scalar_int(iv.dom.min, env), scalar_int(iv.dom.extent, env)) for iv in box]
        if any(lo is None or ext is None or ext < 0 for lo, ext in doms):
            return False
        axes = [np.arange(lo, lo + ext) for lo, ext in doms]
        grid = [g.ravel() for g in np.meshgrid(*axes, indexing="ij")]
        if not _writes_params_whole(realize.block, grid, grid[0].size if grid else 1, is_param, env):
            return False
    return True


def _verdict(realize, loops, envs, is_param, first: bool = False) -> "bool | None":
    """True when :func:`_refuted` refutes at one of ``envs``; else False when some could be
    enumerated (with ``first``, the first that could ends the search), None when none could."""
    verdict = None
    for env in envs:
        got = _refuted(realize, loops, env, is_param)
        if got:
            return True
        if got is not None:
            verdict = False
            if first:
                break
    return verdict


def _repeats_inside_reduction(realize, loops) -> bool:
    """Without enumerating (a nest too large for it): a reduction block with an init, no
    predicate, under a loop ``L`` its bindings do not read, nested inside a loop ``R`` that
    one of its reduction bindings reads affinely (both running at least two iterations).
    At a value of ``R`` that puts that variable past its minimum, no init runs while ``L``
    repeats the same instances: each is added again (TVM 0.27 leaves an rfactor block that
    ``compute_at`` placed under a consumer's tile loops so; what :func:`_bad_reduction`
    refutes when the nest can be enumerated)."""
    block = realize.block
    if block.init is None or not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        return False
    used: set = set()  # what the bindings read, and anything the block reads itself
    for value in realize.iter_values:
        collect_vars(value, used)
    for part in (block.body, block.init):
        post_order_visit(part, lambda n: used.add(n) if isinstance(n, Var) else None)
    feeding: set = set()
    for iv, value in zip(block.iter_vars, realize.iter_values):
        form = affine(value) if iv.kind == IterKind.REDUCE else None
        if form:
            feeding |= {atom for atom, coef in form.items() if isinstance(atom, Var) and coef != 0}
    outer_feeds = False
    for lp in loops:
        ext = const_of(lp.extent)
        if ext is None or ext < 2:
            continue
        if lp.loop_var in feeding:
            outer_feeds = True
        elif outer_feeds and lp.loop_var not in used:
            return True
    return False

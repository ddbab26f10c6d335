"""Data movement: permute_dims, reshape family, broadcast_to, strided_slice, flip, tile,
take, nn.pad, concat, stack. Each reads one element per output element; the recognizer
reads the index map (affine forms over the output variables) and checks it."""
from __future__ import annotations


import numpy as np

from tir.expr import BufferLoad, Call, Cast, FloorMod, Select, Sub, Var

from ..affine import ONE, _add, affine, const_of, float_of
from ..bounded import bounded_form, recombine
from ..probe import NotEvaluable, evaluate
from ..semantic import Inlined
from .common import Match, Space, strip
from .extent import always_equal, sym
from . import symbolic
from ..copy_tags import TAKE_OR_GATHER

MAX_GRID = 60000


def _pure_space(space: Space) -> bool:
    idx = space.indices
    return all(isinstance(i, Var) for i in idx) and len({id(i) for i in idx}) == len(idx)


def _ext(space):
    return [const_of(e) for e in space.extents]


def _in_ext(load):
    return [const_of(s) for s in load.buffer.shape]


def _terms(load, space):
    """Per input dim: (out dim or None, coeff, offset) for plain affine indices, else None."""
    out = []
    pos = {id(v): j for j, v in enumerate(space.indices)}
    for idx in load.indices:
        f = affine(idx)
        if f is None:
            return None
        keys = [k for k in f if k is not ONE]
        if len(keys) > 1 or (keys and id(keys[0]) not in pos):
            return None
        if keys and not isinstance(keys[0], Var):
            return None
        j = pos[id(keys[0])] if keys else None
        out.append((j, f.get(keys[0], 0) if keys else 0, f.get(ONE, 0)))
    return out


def match_movement(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not _pure_space(space):
        return None
    if isinstance(e, BufferLoad) and ctx.is_param(e.buffer):
        return _take(e, space, ctx) or _affine_copy(e, space) or _mod_copy(e, space)
    if isinstance(e, Call) and e.op == "if_then_else" or isinstance(e, Select):
        return _pad(e, space, ctx) or _select_chain(e, space, ctx)
    return None


def match_intermediate_movement(expr, space: Space, ctx) -> "Match | None":
    """A copy-like op (permute_dims, reshape family, strided_slice, flip, tile) whose data is
    an intermediate buffer of a fused kernel, read at other indices than the output's.
    Tried after the structural recognizers, which own such copies inside their ops
    (group_norm's closing reshape)."""
    e = expr
    while isinstance(e, Inlined) and len(e.indices) == space.rank and all(
            a is b for a, b in zip(e.indices, space.indices)):
        e = e.value
    if not isinstance(e, Inlined) or not _pure_space(space):
        return None
    return _affine_copy(e, space) or _mod_copy(e, space)


def _data(load, space):
    return (("data", load, space),)


def _affine_copy(load, space) -> "Match | None":
    t = _terms(load, space)
    if t is None:
        return None
    ine = _in_ext(load)
    used = [j for j, _, _ in t if j is not None]
    if len(set(used)) != len(used):
        return None
    plain = all(j is None and b == 0 and ine[d] == 1 or (a, b) == (1, 0) and j is not None
                and _same_extent(load.buffer.shape[d], space.extents[j])
                for d, (j, a, b) in enumerate(t))
    if plain and used == sorted(used):
        return _broadcast_family(load, space, t)
    if used == sorted(used) and _broadcast_whole(load, space, t):
        m = _broadcast_family(load, space, t)
        return m if m is not None and m.name == "broadcast_to" else None
    if plain and len(t) == space.rank and all(j is not None for j, _, _ in t):
        axes = [0] * space.rank
        for d, (j, _, _) in enumerate(t):
            axes[j] = d
        return Match("permute_dims", {"axes": axes}, _data(load, space))
    if len(t) == space.rank and all(j == d for d, (j, _, _) in enumerate(t)):
        return _slice_or_flip(load, space, t)
    return None


def _same_extent(a, b) -> bool:
    """Whether two extents are equal (constants, or the same symbolic expression): a
    dimension read whole, not sliced."""
    ca, cb = const_of(a), const_of(b)
    if ca is not None or cb is not None:
        return ca == cb
    return a is b or a == b or always_equal(sym(a), sym(b))


def _broadcast_whole(load, space, t) -> bool:
    """Each input dimension is read whole by an output one, or at 0 when it has extent 1,
    where an input extent that is symbolic against a constant output extent is taken as
    that extent: broadcast_to over a symbolic dimension assumes it (TVM reads ``x[v]``
    unless the dimension is 1). Only a growing broadcast_to is named on this ground."""
    ine = _in_ext(load)
    return all(j is None and b == 0 and ine[d] == 1 or (a, b) == (1, 0) and j is not None
               and (_same_extent(load.buffer.shape[d], space.extents[j])
                    or ine[d] is None and const_of(space.extents[j]) is not None)
               for d, (j, a, b) in enumerate(t))


def _broadcast_family(load, space, t):
    oute = _ext(space)
    R, r = space.rank, len(t)
    aligned = all(j is None or j == R - r + d for d, (j, _, _) in enumerate(t))
    used = {j for j, _, _ in t if j is not None}
    grows = any(oute[j] != 1 for j in range(R) if j not in used) or \
        any(j is None and oute[R - r + d] != 1 for d, (j, _, _) in enumerate(t) if R - r + d >= 0)
    if aligned and (grows or (R == r and all(j == d for d, (j, _, _) in enumerate(t)))):
        return Match("broadcast_to", {"shape": [s if s is not None else symbolic.extent_text(x) for s, x in
                                                zip(oute, space.extents)]}, _data(load, space))
    if any(oute[j] != 1 for j in range(R) if j not in used):
        return None
    squeezed = [d for d, (j, _, _) in enumerate(t) if j is None]
    new = [j for j in range(R) if j not in used]
    if squeezed and not new:
        return Match("squeeze", {"axis": squeezed}, _data(load, space))
    if new and not squeezed:
        return Match("expand_dims", {"axis": new}, _data(load, space))
    return Match("reshape", {"shape": oute}, _data(load, space))


def _slice_or_flip(load, space, t):
    ine, oute = _in_ext(load), _ext(space)
    changed = [d for d, (j, a, b) in enumerate(t)
               if (a, b) != (1, 0) or not _same_extent(load.buffer.shape[d], space.extents[d])]
    if any(ine[d] is None or oute[d] is None for d in changed):
        return None  # a symbolic dimension is only ever read whole
    # TVM writes flip's index ``n - 1 - v`` (a strided_slice with stride -1 writes ``v * -1 + b``)
    flips = [d for d in changed if t[d][1] == -1 and t[d][2] == ine[d] - 1 and oute[d] == ine[d]
             and isinstance(load.indices[d], Sub)]
    if flips and len(flips) == len(changed) == 1:
        return Match("flip", {"axis": flips[0]}, _data(load, space))
    if any(t[d][1] <= 0 for d in changed):
        return None
    begin = [t[d][2] for d in changed]
    strides = [t[d][1] for d in changed]
    end = [t[d][2] + t[d][1] * (oute[d] - 1) + 1 for d in changed]
    return Match("strided_slice", {"axes": changed, "begin": begin, "end": end, "strides": strides},
                 _data(load, space))


def _mod_copy(load, space) -> "Match | None":
    tile = _tile(load, space)
    if tile is not None:
        return tile
    if _reshape_ok(load, space):
        shape = [c if c is not None else symbolic.extent_text(e) for c, e in zip(_ext(space), space.extents)]
        return Match("reshape", {"shape": shape}, _data(load, space))
    return None


def _tile(load, space):
    """``x[v % n, ..]`` over the trailing output axes (``n`` the data's extent, maybe
    symbolic): repeats are the whole ratios of the extents, constant leading axes new."""
    R, r = space.rank, len(load.indices)
    if r > R:
        return None
    ine = [sym(e) for e in load.buffer.shape]
    oute = [sym(e) for e in space.extents]
    reps = [const_of(e) for e in space.extents[:R - r]]
    for d, idx in enumerate(load.indices):
        o = space.indices[R - r + d]
        if not (isinstance(idx, FloorMod) and idx.a is o and always_equal(sym(idx.b), ine[d])):
            return None
        reps.append(symbolic.ratio(oute[R - r + d], ine[d]))
    if None in reps:
        return None
    return Match("tile", {"repeats": reps}, _data(load, space))


def _grid(space):
    ext = _ext(space)
    return None if None in ext else grid_over(space.indices, ext)


def grid_over(vars_, exts) -> "dict | None":
    """Every point of the box ``exts``: var -> its value at each point (None when too big)."""
    if int(np.prod(exts)) > MAX_GRID:
        return None
    axes = np.meshgrid(*[np.arange(n, dtype=float) for n in exts], indexing="ij")
    return {v: a.ravel() for v, a in zip(vars_, axes)}


def _reshape_ok(load, space) -> bool:
    ine, oute = _in_ext(load), _ext(space)
    if None in ine and None not in oute:
        return _reshape_into_constant(load, space)
    if None in ine:
        return symbolic.symbolic_reshape(load, space)
    if None in ine or None in oute or int(np.prod(ine)) != int(np.prod(oute)):
        return False
    return _row_major_copy(load.indices, space, ine, oute)


def _row_major_copy(indices, space, ine, oute) -> bool:
    """Whether reading ``indices`` of a box of ``ine`` over the output box ``oute`` visits
    the data in row-major order: proved on the index forms, else checked on every point."""
    if _same_linear_index(indices, space, ine, oute):
        return True
    env = _grid(space)
    if env is None:
        return False
    try:
        got = [evaluate(i, env) for i in indices]
    except NotEvaluable:
        return False
    lin_in = np.zeros_like(env[space.indices[0]]) if space.rank else np.zeros(1)
    for g, n in zip(got, ine):
        lin_in = lin_in * n + np.broadcast_to(g, lin_in.shape)
    lin_out = np.arange(lin_in.size, dtype=float)
    return bool(np.array_equal(lin_in, lin_out))


def _reshape_into_constant(load, space) -> bool:
    """A reshape of data with a symbolic extent into a constant shape: the element counts
    must agree, which fixes the symbol (``n * 3 == 27``); the copy is then proved in
    row-major order with that value."""
    numel_in = 1
    for e in load.buffer.shape:
        numel_in = numel_in * sym(e)
    numel_out = int(np.prod(_ext(space)))
    fixed = symbolic.solve_single(numel_in, numel_out)
    if fixed is None:
        return False
    names = symbolic.symbol_vars(load.buffer.shape)
    values = {names[s]: v for s, v in fixed.items() if s in names}
    ine = [const_of(e) for e in symbolic.instantiate(load.buffer.shape, values)]
    indices = symbolic.instantiate(load.indices, values)
    return None not in ine and _row_major_copy(indices, space, ine, _ext(space))


def _same_linear_index(indices, space, ine, oute) -> bool:
    """Whether the row-major position read equals the one written, proved on the index
    forms simplified with the loop ranges (no evaluation: any grid size)."""
    ranges = {v: (0, n - 1) for v, n in zip(space.indices, oute)}
    read = [bounded_form(i, ranges) for i in indices]
    if None in read:
        return False
    written = [bounded_form(v, ranges) for v in space.indices]  # a unit loop's var is 0
    return recombine(_row_major(read, ine), ranges) == _row_major(written, oute)


def _row_major(forms, extents) -> dict:
    """The row-major position of the index ``forms`` in a box of ``extents``."""
    lin: dict = {}
    for f, n in zip(forms, extents):
        lin = _add({k: c * n for k, c in lin.items()}, f)
    return lin


def _take(load, space, ctx):
    nested = [d for d, i in enumerate(load.indices) if _index_load(i, ctx) is not None]
    if len(nested) != 1:
        return None
    d = nested[0]
    ind = _index_load(load.indices[d], ctx)
    # take's output dimensions are the data's before the axis, the indices', the data's after
    # it, each read once; gather_elements reads data and indices at the same positions instead
    order = list(load.indices[:d]) + list(ind.indices) + list(load.indices[d + 1:])
    if len(order) != space.rank or not all(i is o for i, o in zip(order, space.indices)):
        return None
    name = "take"
    if len(load.indices) == 1 and len(ind.indices) == 1:
        # 1-D data and indices: gather_elements(axis=0) computes exactly the same; a
        # function of this one block is named by its compute tag (copy_tags.settle)
        if len(ctx.sem.stages) != 1:
            return None
        name = TAKE_OR_GATHER
    return Match(name, {"axis": d}, (("data", load, space), ("indices", ind, space)))


def _index_load(e, ctx):
    while isinstance(e, Cast):
        e = e.value
    return e if isinstance(e, BufferLoad) and ctx.is_param(e.buffer) else None


def _branches(e):
    if isinstance(e, Select):
        return e.condition, strip(e.true_value), strip(e.false_value)
    if isinstance(e, Call) and e.op == "if_then_else":
        return e.args[0], strip(e.args[1]), strip(e.args[2])
    return None


def _pad(e, space, ctx):
    cond, t, f = _branches(e)
    value = float_of(f)
    if value is None or not isinstance(t, BufferLoad) or not ctx.is_param(t.buffer):
        return None
    terms = _terms(t, space)
    ine, oute = _in_ext(t), _ext(space)
    if terms is None or None in ine or None in oute or len(terms) != space.rank:
        return None
    if any(j != d or a != 1 or b > 0 for d, (j, a, b) in enumerate(terms)):
        return None
    width = []
    for d, (_, _, b) in enumerate(terms):
        width += [-b, oute[d] - ine[d] + b]
    if min(width) < 0 or not any(width) or not _guard_ok(cond, space, terms, ine):
        return None
    return Match("nn.pad", {"pad_width": width, "pad_value": value, "pad_mode": "constant"}, (("data", t, space),))


def _guard_ok(cond, space, terms, ine) -> bool:
    env = _grid(space)
    if env is None:
        return False
    try:
        got = np.broadcast_to(evaluate(cond, env), env[space.indices[0]].shape) != 0
    except NotEvaluable:
        return False
    want = np.ones_like(got)
    for d, (_, _, b) in enumerate(terms):
        x = env[space.indices[d]] + b
        want &= (x >= 0) & (x < ine[d])
    return bool(np.array_equal(got, want))


def chain_loads(e, ctx) -> "list | None":
    """The parameter loads a chain of selects (``c1 ? x : c2 ? y : z``) chooses from, in
    parameter order; None unless every branch is such a load and there are two or more."""
    loads, node = [], e
    while _branches(node) is not None:
        _, t, node = _branches(node)
        loads.append(t)
    loads.append(node)
    if len(loads) < 2 or not all(isinstance(l, BufferLoad) and ctx.is_param(l.buffer) for l in loads):
        return None
    return sorted(loads, key=lambda l: next(i for i, p in enumerate(ctx.sem.params) if p is l.buffer))


def _select_chain(e, space, ctx):
    order = chain_loads(e, ctx)
    if order is None:
        return None
    return _concat(e, space, order) or _stack(e, space, order)


def _cond_vars(e) -> set:
    from tir.functor import pre_order_visit
    out = set()

    def visit(n):
        if isinstance(n, BufferLoad):
            return False
        if isinstance(n, Var):
            out.add(id(n))
        return True

    pre_order_visit(e, visit)
    return out


def _which(e, space, loads, axis):
    """Which load each output position along ``axis`` selects (the choice must depend on
    that axis only)."""
    av = space.indices[axis]
    n = const_of(space.extents[axis])
    if n is None or _cond_vars(e) - {id(av)}:
        return None, None
    env = {v: np.zeros(1) for v in space.indices}
    env[av] = np.arange(n, dtype=float)
    for k, l in enumerate(loads):
        env[l] = np.full(1, float(k))
    try:
        got = evaluate(e, env)
    except NotEvaluable:
        return None, None
    return env, np.broadcast_to(got, env[av].shape)


def _concat(e, space, loads):
    rank = space.rank
    if any(len(l.indices) != rank for l in loads):
        return None
    if any(None in _in_ext(l) for l in loads) or None in _ext(space):
        return None  # movement_dynamic.match_dynamic_movement
    axes = {d for l in loads for d, (j, a, b) in enumerate(_terms(l, space) or [(None, 0, 1)] * rank)
            if (j, a, b) != (d, 1, 0)}
    ext = [_in_ext(l) for l in loads]
    axis = next(iter(axes)) if len(axes) == 1 else (0 if not axes else None)
    if axis is None:
        return None
    offsets = np.cumsum([0] + [x[axis] for x in ext])
    for l, off in zip(loads, offsets):
        t = _terms(l, space)
        if t is None or any((j, a, b) != (d, 1, -off if d == axis else 0) for d, (j, a, b) in enumerate(t)):
            return None
    env, got = _which(e, space, loads, axis)
    if got is None:
        return None
    want = np.searchsorted(offsets[1:], env[space.indices[axis]], side="right")
    if not np.array_equal(got, want):
        return None
    return Match("concat", {"axis": axis}, tuple(("data", l, space) for l in loads))


def _stack(e, space, loads):
    rank = space.rank
    if any(len(l.indices) != rank - 1 for l in loads):
        return None
    for axis in range(rank):
        rest = [v for d, v in enumerate(space.indices) if d != axis]
        if all(all(i is v for i, v in zip(l.indices, rest)) for l in loads):
            env, got = _which(e, space, loads, axis)
            if got is not None and np.array_equal(got, env[space.indices[axis]]):
                return Match("stack", {"axis": axis}, tuple(("data", l, space) for l in loads))
    return None

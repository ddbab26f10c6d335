"""Scheduling of a loop nest around one block for the C emitter.

Without changing what is computed, a nest may be emitted:

* with ``#pragma omp parallel for`` on an outer spatial loop whose iterations provably write
  disjoint elements (affine store indices, mixed-radix argument) and only read what they write;
* for a reduction whose instances are independent, either with the reduction in a local
  accumulator (reduction loops innermost, the output element in a register), or with the
  innermost spatial loop moved inside the reduction loops so that it vectorises (each output
  element still sees its reduction steps in the original order).

Anything else is emitted as written.
"""
from __future__ import annotations

from . import expr as E
from . import stmt as S
from .functor import substitute
from .loop_nest import collect_nest, free_vars, predicate_reduces, reads_only_own_elements, reduce_vars, stores_and_loads
from .nest_instances import instances_distinct
from .loop_nest_affine import coeff_of, flat_offset, linear_coeffs

PARALLEL_MIN_WORK = 1 << 14
"""Smallest nest (iterations) worth an OpenMP region."""
GATHER_COST = 4


def emit_nest(em, loop: S.For) -> bool:
    """Emit the nest under ``loop`` with a schedule; False if it is not a schedulable nest."""
    if any(l.kind != S.ForKind.SERIAL for l in _loops(loop)):
        return False
    nest = collect_nest(loop)
    if nest is None:
        return False
    block = nest.realize.block
    regular = _regular(nest)
    spatial = [a for a in range(len(nest.loops)) if a not in nest.reduce_axes]
    has_reduce = any(iv.kind == S.IterKind.REDUCE for iv in block.iter_vars)
    if not has_reduce:
        order = list(range(len(nest.loops)))
        par = _parallel_axis(em, nest, order, spatial) if regular else None
        _emit_plain(em, nest, order, par)
        return True
    if not regular or (block.init is not None and not _reduction_in_nest(nest)) or not instances_distinct(nest):
        return False
    q = _vector_axis(nest, spatial)
    if q is not None:
        outer = [a for a in spatial if a != q]
        par = _parallel_axis(em, nest, outer + list(nest.reduce_axes) + [q], outer)
        _emit_spatial_inner(em, nest, outer, q, par)
    else:
        par = _parallel_axis(em, nest, spatial + list(nest.reduce_axes), spatial)
        _emit_accumulate(em, nest, spatial, par)
    return True


def _loops(loop):
    s = loop
    while isinstance(s, S.For):
        yield s
        s = s.body


def _bindings(nest) -> dict:
    return {iv.var: v for iv, v in zip(nest.realize.block.iter_vars, nest.realize.iter_values)}


def _all_stores(block):
    stores, _ = stores_and_loads(block.body)
    if block.init is not None:
        stores += stores_and_loads(block.init)[0]
    return stores


def _reduction_in_nest(nest) -> bool:
    """Every reduction variable is bound to the nest's reduction loops alone. The schedules
    run the init once per entry of the nest; a reduction variable bound (also) to a loop
    above the nest (a fused loop split between spatial and reduction variables) is at its
    minimum on one entry only, which the generic walk's per-instance test handles."""
    inner = {nest.loops[a].loop_var for a in nest.reduce_axes}
    return all(free_vars(v) <= inner for iv, v in zip(nest.realize.block.iter_vars, nest.realize.iter_values)
               if iv.kind == S.IterKind.REDUCE)


def _regular(nest) -> bool:
    """Instances only touch their own output elements, at one index tuple per buffer."""
    block = nest.realize.block
    if not reads_only_own_elements(block):
        return False
    if predicate_reduces(nest):
        return False
    reducing = reduce_vars(nest)
    seen = {}
    from .structural import same_ir

    for st in _all_stores(block):
        if any(free_vars(i) & reducing for i in st.indices):
            return False
        prev = seen.setdefault(st.buffer, st.indices)
        if not same_ir(prev, st.indices):
            return False
    return True


def _const_extent(loop) -> "int | None":
    return loop.extent.value if isinstance(loop.extent, E.IntImm) else None


def _distinct(nest, axis, varying) -> bool:
    """Different values of loop ``axis`` store to different elements while ``varying`` loops move."""
    var = nest.loops[axis].loop_var
    bind = _bindings(nest)
    for st in _all_stores(nest.realize.block):
        if not any(_separates(substitute(i, bind), var, nest, axis, varying) for i in st.indices):
            return False
    return True


def _separates(idx, var, nest, axis, varying) -> bool:
    lin = linear_coeffs(idx)
    if lin is None or not lin.get(var):
        return False
    rest = 0
    for j in varying:
        if j == axis:
            continue
        c = lin.get(nest.loops[j].loop_var, 0)
        if c:
            ext = _const_extent(nest.loops[j])
            if ext is None:
                return False
            rest += abs(c) * (ext - 1)
    return rest < abs(lin[var])


def _work(nest) -> float:
    total = 1.0
    for l in nest.loops:
        ext = _const_extent(l)
        total *= ext if ext is not None else PARALLEL_MIN_WORK
    return total


def _parallel_axis(em, nest, order, candidates) -> "int | None":
    """The first loop of ``candidates`` (in emitted ``order``) safe to run in parallel."""
    if em.in_parallel or _work(nest) < PARALLEL_MIN_WORK:
        return None
    for pos, axis in enumerate(order):
        if axis not in candidates:
            return None
        ext = _const_extent(nest.loops[axis])
        if ext is not None and ext < 2:
            continue
        return axis if _distinct(nest, axis, order[pos + 1:]) else None
    return None


def _cost(nest, loop_var, skip_buffers=()) -> int:
    bind = _bindings(nest)
    stores, loads = stores_and_loads(nest.realize.block.body)
    cost = 0
    for acc in (*stores, *loads):
        if acc.buffer in skip_buffers:
            continue
        c = coeff_of(flat_offset(acc, bind), loop_var)
        cost += 0 if c == 0 else 1 if c is not None and abs(c) == 1 else GATHER_COST
    return cost


def _vector_axis(nest, spatial) -> "int | None":
    """The innermost spatial loop to move inside the reductions, if that is cheaper."""
    if not spatial or not nest.reduce_axes:
        return None
    q = spatial[-1]
    ext = _const_extent(nest.loops[q])
    if (ext is not None and ext < 4) or not _distinct(nest, q, []):
        return None
    written = {st.buffer for st in _all_stores(nest.realize.block)}
    r = nest.loops[nest.reduce_axes[-1]].loop_var
    cost_b = _cost(nest, nest.loops[q].loop_var)
    cost_a = _cost(nest, r, written) + GATHER_COST
    return q if cost_b <= cost_a else None


def _emit_loops(em, nest, axes, par, inner) -> None:
    if not axes:
        inner()
        return
    first, rest = axes[0], axes[1:]
    em.loop(nest.loops[first], parallel=first == par, body=lambda: _emit_loops(em, nest, rest, par, inner))


def _emit_plain(em, nest, order, par) -> None:
    _emit_loops(em, nest, order, par, lambda: em._blockrealize(nest.realize))


def _declare_ivs(em, nest, kinds, reduce_at_min=False) -> None:
    for iv, value in zip(nest.realize.block.iter_vars, nest.realize.iter_values):
        if iv.kind not in kinds:
            continue
        text = em.expr(iv.dom.min) if reduce_at_min else em.expr(value)
        em.line(f"{_ctype(iv.var)} {em.var(iv.var)} = {text};")


def _ctype(v) -> str:
    from .codegen_c_expr import c_type

    return c_type(v.dtype)


def _guard(em, nest, body) -> None:
    pred = nest.realize.predicate
    if isinstance(pred, E.IntImm) and pred.value:
        body()
        return
    em.open(f"if ({em.expr(pred)})")
    body()
    em.close()


def _if_reducing(em, nest, body) -> None:
    """``body`` (a hoisted init) under the condition that every reduction loop runs: TVM runs
    a block's init at its first reduction iteration, so with a data-dependent extent of zero
    or below (roi_align's bins) no init runs and the output keeps its contents."""
    conds = []
    for axis in nest.reduce_axes:
        extent = nest.loops[axis].extent
        if not (isinstance(extent, E.IntImm) and extent.value > 0):
            conds.append(f"({em.expr(extent)}) > 0")
    if not conds:
        body()
        return
    em.open(f"if ({' && '.join(conds)})")
    body()
    em.close()


def _scope(em, body) -> None:
    em.open("")
    body()
    em.close()


def _emit_spatial_inner(em, nest, outer, q, par) -> None:
    block = nest.realize.block
    spatial_kind = (S.IterKind.SPATIAL,)
    reduce_kind = (S.IterKind.REDUCE,)

    def init_instance():
        _declare_ivs(em, nest, spatial_kind)
        _declare_ivs(em, nest, reduce_kind, reduce_at_min=True)
        _guard(em, nest, lambda: em.stmt(block.init))

    def step_instance():
        _declare_ivs(em, nest, spatial_kind + reduce_kind)
        _guard(em, nest, lambda: em.stmt(block.body))

    def inner():
        if block.init is not None:
            _if_reducing(em, nest, lambda: em.loop(nest.loops[q], body=lambda: _scope(em, init_instance)))
        _emit_loops(em, nest, list(nest.reduce_axes), None,
                    lambda: em.loop(nest.loops[q], body=lambda: _scope(em, step_instance)))

    _emit_loops(em, nest, outer, par, inner)


def _emit_accumulate(em, nest, spatial, par) -> None:
    block = nest.realize.block
    stores = _all_stores(block)
    targets = {}
    for st in stores:
        targets.setdefault(st.buffer, st.indices)

    def with_locals():
        names = {}
        for buf, idx in targets.items():
            name = em.names.fresh("acc_" + buf.name)
            names[buf] = (name, idx)
            load = em.load(E.BufferLoad(buf, idx))
            em.line(f"{_ctype(buf)} {name} = {load};" if block.init is None else f"{_ctype(buf)} {name};")
        saved = em.locals
        em.locals = {**saved, **names}
        if block.init is not None:
            _init_with_loads(em, block, targets, names)
        _emit_loops(em, nest, list(nest.reduce_axes), None,
                    lambda: _scope(em, lambda: (_declare_ivs(em, nest, (S.IterKind.REDUCE,)), em.stmt(block.body))))
        em.locals = saved
        for buf, (name, idx) in names.items():
            em.line(f"{em.buffer_name(buf)}[{em.offset(buf, idx)}] = {name};")

    def instance():
        _declare_ivs(em, nest, (S.IterKind.SPATIAL,))
        _declare_ivs(em, nest, (S.IterKind.REDUCE,), reduce_at_min=True)
        _guard(em, nest, with_locals if block.init is None else lambda: _if_reducing(em, nest, with_locals))

    _emit_loops(em, nest, spatial, par, lambda: _scope(em, instance))


def _init_with_loads(em, block, targets, names) -> None:
    """Run the init into the locals; buffers the init does not write start from memory."""
    init_written = {st.buffer for st in stores_and_loads(block.init)[0]}
    for buf, (name, idx) in names.items():
        if buf not in init_written:
            saved = em.locals
            em.locals = {}
            em.line(f"{name} = {em.load(E.BufferLoad(buf, idx))};")
            em.locals = saved
    em.stmt(block.init)

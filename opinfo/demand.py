"""Blocks cut to what the function's outputs need.

``pad_einsum`` applied to a block whose operand or result is an intermediate (a
``cache_read``/``cache_write`` copy, an ``rfactor`` buffer) rewrites the intermediate's
producer to store into the padded buffer directly and still emits the pad producer of the
old buffer, which nothing writes any more::

    P[w] = if_then_else(w0 < 7 and w1 < 3, B[w], 0)    # B: never written
    P[v] = f(X_pad[v])      over v0 < 7, v1 < 3          # the real producer overwrites P
    C_pad[w] = P[w]         over the padded rows          # rows past 7 reach ...
    C[w] = C_pad[w]         over C's extent               # ... no output

The garbage producer's values reach only rows and columns no output reads, but the blocks
as written read them, and nothing downstream names such a chain. :func:`restrict_to_demand`
runs the loops at the shape values (every store enumerated in program order, as
:mod:`.intermediate_check` does) and walks them backwards from the outputs: an iteration is
needed when the element it stores is read later by a needed iteration (or is an output's,
not overwritten later); the loads of needed iterations make their elements wanted. A block
none of whose iterations is needed goes. A block storing to ``pad_einsum``'s buffers
(:func:`_pad_artefacts`) is cut to the box of the spatial points some needed iteration runs
at, when its needed iterations are all of its iterations there: the box becomes its
predicate (``T.where`` on its bindings) and, for a leading part, its domain (fresh loops over
it when the block is alone in a nest of the root's); those buffers shrink to what the kept
iterations touch, and an ``if_then_else`` stored into one whose guard is the same on every
kept iteration is decided. Other blocks and buffers keep their extents: an op's own padded
buffer shows its padding even where no window reads it (a pool's ``ceil_mode``), evidence a
cut would remove.

Sound by construction at the shape values enumerated: no element an output holds at the end
changes (removed iterations store only elements overwritten or never read before the end).
Symbolic shapes: the decisions must agree at every value of :data:`.realize_check.SHAPE_VALUES`
and each bound must be one of the function's extents there (a constant, a buffer's
dimension, a loop's or block variable's extent). Only functions reading an intermediate that
no store writes are rewritten (the signature of the form above): every other function is
returned as it is, unwalked. :func:`restrict_pads` makes the same cut in a function that holds
pad_einsum's buffers and reads nothing unwritten: the analyses ask for it only when their first
reading of the function understood nothing (:func:`.api.recognize_ops`).
"""
from __future__ import annotations

import math

import attrs
import numpy as np

from tir.expr import GE, LT, BufferLoad, Call, IntImm
from tir.function import PrimFunc
from tir.functor import post_order_stmts, post_order_visit, transform
from tir.stmt import Block, BlockRealize, BufferStore, For, IterKind, SeqStmt

from .affine import const_of
from .intermediate_check import (_ERRORS, _Site, _Unjudged, _aliased, _let_loads, _loads_of, _sites, _weights)
from .predicates import conjunction
from .probe import scalar_int, shape_envs, shape_vars
from .pad_einsum import undup
from .realize_check import SHAPE_VALUES
from .rewrite import EMPTY, loaded, nest_of, own_nest, prune, stored, stores_in
from .tags import cache_names

MAX_INSTANCES = 1 << 17
"""Store iterations of one function (at one shape value) above which it is not restricted:
the backward walk visits them one by one."""


def _reads_unwritten(func: PrimFunc) -> bool:
    """Some intermediate is loaded and stored nowhere."""
    params = {id(b) for b in func.buffers}
    stores: set = set()
    loads: set = set()

    def visit(n):
        if isinstance(n, BufferStore):
            stores.add(id(n.buffer))
        elif isinstance(n, BufferLoad):
            loads.add(id(n.buffer))
    post_order_visit(func.body, visit)
    return bool(loads - stores - params)


def _pad_artefacts(func: PrimFunc) -> set:
    """Ids of the buffers ``pad_einsum`` added: ``B_pad`` (or a cache of it, ``B_pad_local``)
    beside a buffer ``B`` the function allocates, or beside a parameter ``B`` with a block
    moving data between the two (a pad producer loading ``B``, or a crop storing to it: an
    op's ``data_pad`` beside a parameter named ``data`` is no such buffer)."""
    buffers: dict = {}
    moves: set = set()
    allocated: set = set()
    root = [func.root_block] if func.root_block is not None else []
    for block in root + list(func.blocks()):
        for b in block.alloc_buffers:
            buffers.setdefault(id(b), b)
            allocated.add(id(b))
    for block in func.blocks():
        for store in stores_in(block.body):
            buffers.setdefault(id(store.buffer), store.buffer)
            found: list = []
            post_order_visit(store.value, lambda n: found.append(n.buffer) if isinstance(n, BufferLoad) else None)
            for b in found:
                buffers.setdefault(id(b), b)
                moves.add((id(store.buffer), id(b)))
                moves.add((id(b), id(store.buffer)))
    for b in func.buffers:
        buffers.setdefault(id(b), b)
    params = {id(b) for b in func.buffers}
    by_name: dict = {}
    for b in buffers.values():
        by_name.setdefault(undup(b.name), []).append(b)
    out = set()
    for b in buffers.values():
        # a cache of a padded buffer keeps the name with its scope appended (``C_pad_local``)
        name = cache_names(undup(b.name))[-1]
        if id(b) in params or not name.endswith("_pad"):
            continue
        if any(id(src) in allocated or (id(b), id(src)) in moves for src in by_name.get(name[:-len("_pad")], ())):
            out.add(id(b))
    return out


def restrict_to_demand(func: PrimFunc) -> PrimFunc:
    """``func`` with its blocks cut to the iterations its outputs need (see the module
    docstring), or ``func`` itself."""
    if not _reads_unwritten(func):
        return func
    return _restricted(func, _pad_artefacts(func))


def restrict_pads(func: PrimFunc) -> PrimFunc:
    """``func`` with its blocks cut as :func:`restrict_to_demand` cuts them, for a function
    holding ``pad_einsum``'s buffers that reads no unwritten intermediate (which
    :func:`restrict_to_demand` leaves as it is); ``func`` itself otherwise. A second reading,
    for when the first understood nothing: ``compute_at`` after ``pad_einsum`` can leave an
    op's consumer reading the padded result directly and its crop storing to a buffer no one
    reads, and an op's padded domain only partly run, so that no pad/op/crop triple is left
    to undo; cut to the elements the outputs need, the pads are read only where they copy."""
    artefacts = set() if _reads_unwritten(func) else _pad_artefacts(func)
    return _restricted(func, artefacts) if artefacts else func


def _restricted(func: PrimFunc, artefacts: set) -> PrimFunc:
    """``func`` cut to its outputs' demand, the blocks storing to ``artefacts`` (the ids of
    pad_einsum's buffers, :func:`_pad_artefacts`) to the box of their needed points."""
    if _aliased(func):
        return func
    try:
        sites: list = []
        _sites(func.body, (), sites)
    except (_Unjudged, RecursionError):
        return func
    sites = [(store, chain, _loads_of(store) + _let_loads(chain)) for store, chain in sites]
    if not sites or any(_realize_of(chain) is None for _, chain, _ in sites):
        return func
    plans = []
    try:
        for env in shape_envs(shape_vars(func), SHAPE_VALUES):
            plan = _plan(func, sites, env, artefacts)
            if plan is None:
                return func
            plans.append((env, plan))
    except (_Unjudged, MemoryError) + _ERRORS:
        return func
    edits = _agreed(func, plans)
    if edits is None:
        return func
    return _rewrite(func, *edits)


def _realize_of(chain) -> "BlockRealize | None":
    """The innermost block around a store (None: a store outside every block but the root)."""
    for entry in reversed(chain):
        if entry[0] == "bind" and entry[1].block.iter_vars:
            return entry[1]
    return None


def _plan(func: PrimFunc, sites: list, env: dict, artefacts: set) -> "dict | None":
    """What to change at ``env``: "blocks" (id(BlockRealize) -> (realize, decision), see
    :func:`_decision`), "buffers" (:func:`_used_boxes`) and "selects" (:func:`_selects`);
    None when some access cannot be enumerated exactly."""
    params = {id(b) for b in func.buffers}
    written = {id(store.buffer) for store, _, _ in sites}
    inputs = params - written
    dims: dict = {}

    def shape(buf):
        if id(buf) not in dims:
            got = [scalar_int(s, env) for s in buf.shape]
            if any(d is None or d < 0 for d in got):
                raise _Unjudged("shape")
            dims[id(buf)] = got
        return dims[id(buf)]

    built = []
    total = 0
    for store, chain, loads in sites:
        site = _Site(chain, env)
        if site.open:
            return None
        total += int(site.mask.sum())
        if total > MAX_INSTANCES:
            return None
        its = np.nonzero(site.mask)[0]
        got = site.access(store.indices, shape(store.buffer), site.mask)
        if got is None or not got[1].all():
            return None
        reads = []
        for load, guard in loads:
            if id(load.buffer) in inputs:
                continue
            mask = site.guarded(guard)
            at = site.access(load.indices, shape(load.buffer), mask)
            if at is None or not at[1].all():
                return None
            flat = np.full(site.mask.shape, -1, dtype=np.int64)
            flat[mask] = at[0]
            reads.append((id(load.buffer), flat))
        built.append((site, _realize_of(chain), its, got[0], reads))
    weights = _weights([b[0] for b in built])
    if weights is None:
        return None
    live = {}
    for store, _, loads in sites:
        for buf in [store.buffer] + [ld.buffer for ld, _ in loads]:
            if id(buf) not in inputs and id(buf) not in live:
                live[id(buf)] = np.full(max(math.prod(shape(buf)), 0), id(buf) in params, dtype=bool)
    keys = np.concatenate([site.keys(weights)[its] for site, _, its, _, _ in built])
    owner = np.concatenate([np.full(its.size, k, dtype=np.int64) for k, (_, _, its, _, _) in enumerate(built)])
    local = np.concatenate([np.arange(its.size, dtype=np.int64) for _, _, its, _, _ in built])
    needed = [np.zeros(its.size, dtype=bool) for _, _, its, _, _ in built]
    order = np.argsort(-keys, kind="stable")
    wbuf = [id(store.buffer) for store, _, _ in sites]
    for k, j in zip(owner[order].tolist(), local[order].tolist()):
        _, _, its, wpt, reads = built[k]
        held = live[wbuf[k]]
        p = wpt[j]
        if not held[p]:
            continue
        needed[k][j] = True
        held[p] = False
        it = its[j]
        for key, flat in reads:
            q = flat[it]
            if q >= 0:
                live[key][q] = True
    blocks, kept = _decisions(sites, built, needed, env, artefacts)
    return {"blocks": blocks, "buffers": _used_boxes(sites, built, kept, params | (set(dims) - artefacts), shape, blocks),
            "selects": _selects(sites, built, kept, artefacts)}


def _used_boxes(sites, built, kept, params, shape, blocks) -> dict:
    """id(intermediate) -> (buffer, per dimension 1 + the largest index the iterations that
    stay store or load); empty when some block is kept whole (it is not cut: dead
    iterations of its may access more)."""
    if any(d == "keep" for _, d in blocks.values()):
        return {}
    buffers = {}
    for store, _, loads in sites:
        for buf in [store.buffer] + [ld.buffer for ld, _ in loads]:
            buffers.setdefault(id(buf), buf)
    highs: dict = {}

    def extend(key, flat):
        if key in params or flat.size == 0:
            return
        dims = shape(buffers[key])
        top = [int(c.max()) + 1 for c in np.unravel_index(flat, dims)]
        old = highs.get(key)
        highs[key] = top if old is None else [max(a, b) for a, b in zip(old, top)]

    for (store, _, _), (_, _, its, wpt, reads), need in zip(sites, built, kept):
        extend(id(store.buffer), wpt[need])
        for key, flat in reads:
            q = flat[its[need]]
            extend(key, q[q >= 0])
    return {key: (buffers[key], top) for key, top in highs.items()}


def _selects(sites, built, kept, artefacts: set) -> dict:
    """id(store) -> (store, True/False) for a store of ``if_then_else(c, a, b)`` whose
    condition is the same at every iteration that stays."""
    out = {}
    for (store, _, _), (site, _, its, _, _), need in zip(sites, built, kept):
        value = store.value
        if not (isinstance(value, Call) and value.op == "if_then_else" and need.any()) or \
                id(store.buffer) not in artefacts:
            continue
        cond = site._points(value.args[0])
        if cond is None:
            continue
        cond = cond[its[need]] != 0
        if cond.all() or not cond.any():
            out[id(store)] = (store, bool(cond.all()))
    return out


def _decisions(sites, built, needed, env, artefacts: set) -> tuple:
    """Per block, the decision its sites' needed iterations make (:func:`_decision`); per
    site, which of its iterations the block keeps. Only a block storing to ``pad_einsum``'s
    buffers alone (:func:`_pad_artefacts`) is cut: an op's own buffers keep their extents
    (a pool's padded input shows its padding even where no window reads it)."""
    per: dict = {}
    padded: dict = {}
    for (store, _, _), (_, realize, _, _, _) in zip(sites, built):
        padded[id(realize)] = padded.get(id(realize), True) and id(store.buffer) in artefacts
    for k, ((site, realize, its, _, _), need) in enumerate(zip(built, needed)):
        ivs = realize.block.iter_vars
        values = np.stack([np.broadcast_to(site.leaves[iv.var], site.mask.shape)[its] for iv in ivs], axis=1) \
            if ivs else np.zeros((its.size, 0))
        entry = per.setdefault(id(realize), [realize, [], [], []])
        entry[1].append(values)
        entry[2].append(need)
        entry[3].append(k)
    out = {}
    kept: list = [None] * len(built)
    for key, (realize, values, need, ks) in per.items():
        decision, keep = _decision(realize, np.concatenate(values).astype(np.int64), np.concatenate(need), env)
        if isinstance(decision, tuple) and not padded[key] and \
                any(b[0] != b[2] or b[1] != b[3] for b in decision[1].values()):
            decision, keep = "keep", np.ones_like(keep)
        out[key] = (realize, decision)
        for k, part in zip(ks, np.split(keep, np.cumsum([n.size for n in need])[:-1])):
            kept[k] = part
    return out, kept


def _decision(realize: BlockRealize, values: np.ndarray, need: np.ndarray, env: dict) -> tuple:
    """(decision, which iterations stay): "dead" (none needed), "keep" (the points of the
    needed ones are no box: all stay) or ("box", {position: (low, high, domain low, domain
    high)}, once) over the spatial variables: the box of the points some needed iteration
    runs at (every iteration at such a point stays: a reduction's, a point computed again)
    and the block's declared domain (where a predicate already runs a leading part only, the
    domain is cut to it too); ``once``: a spatial block whose points in the box run once."""
    if not need.any():
        return "dead", need
    spatial = [k for k, iv in enumerate(realize.block.iter_vars) if iv.kind == IterKind.SPATIAL]
    everything = np.ones_like(need)
    if not spatial:
        return ("keep" if not need.all() else ("box", {}, False)), everything
    points = values[:, spatial]
    full_low, full_high = points.min(axis=0), points.max(axis=0) + 1
    for j, pos in enumerate(spatial):
        dom = realize.block.iter_vars[pos].dom
        lo, ext = scalar_int(dom.min, env), scalar_int(dom.extent, env)
        if lo is not None and ext is not None and lo <= full_low[j] and full_high[j] <= lo + ext:
            full_low[j], full_high[j] = lo, lo + ext
    _, inverse = np.unique(points, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    some = np.zeros(inverse.max() + 1, dtype=bool)
    np.logical_or.at(some, inverse, need)
    keep = some[inverse]
    kept = points[keep]
    low, high = kept.min(axis=0), kept.max(axis=0) + 1
    inside = np.all((points >= low) & (points < high), axis=1)
    if np.any(inside != keep):
        return "keep", everything  # the needed points are not a box
    once = len(spatial) == len(realize.block.iter_vars) and np.unique(kept, axis=0).shape[0] == kept.shape[0]
    return ("box", {pos: bounds for pos, *bounds in zip(spatial, low.tolist(), high.tolist(),
                                                      full_low.tolist(), full_high.tolist())}, once), keep


def _extents(func: PrimFunc) -> list:
    """Expressions a symbolic bound may be: buffers' dimensions, loops' and block variables'
    extents."""
    found: list = []
    for buf in func.buffers:
        found.extend(buf.shape)

    def visit(n):
        if isinstance(n, For):
            found.append(n.extent)
        elif isinstance(n, Block):
            found.extend(b for buf in n.alloc_buffers for b in buf.shape)
            found.extend(iv.dom.extent for iv in n.iter_vars)
    post_order_stmts(func.body, visit)
    return found


def _bound(values: list, envs: list, candidates: list, dtype: str):
    """One expression of ``dtype`` worth ``values[i]`` at ``envs[i]``, or None: a constant
    for a function without shape variables (one env) or a bound the same at every value,
    else one of ``candidates``."""
    if len(envs) > 1 and len(set(values)) > 1:
        for cand in candidates:
            if getattr(cand, "dtype", None) == dtype and \
                    all(scalar_int(cand, env) == v for env, v in zip(envs, values)):
                return cand
        return None
    return IntImm(dtype, values[0])


def _agreed(func: PrimFunc, plans: list) -> "tuple | None":
    """(blocks, buffers, stores) to change, where every shape value's plan agrees (None
    when the blocks' do not): id(BlockRealize) -> "dead" or (the realize cut, whether its
    nest may be rebuilt); id(buffer) -> the buffer cut to what is used; id(store) -> the
    store with its ``if_then_else`` decided."""
    blocks = _agreed_blocks(func, [(env, plan["blocks"]) for env, plan in plans])
    if blocks is None:
        return None
    candidates = _extents(func)
    envs = [env for env, _ in plans]
    buffers = {}
    for key, (buf, _) in plans[0][1]["buffers"].items():
        tops = [plan["buffers"].get(key) for _, plan in plans]
        if any(t is None for t in tops) or buf.strides or buf.elem_offset is not None:
            continue
        new = []
        for d, extent in enumerate(buf.shape):
            values = [t[1][d] for t in tops]
            if all(v == scalar_int(extent, env) for v, env in zip(values, envs)):
                new.append(extent)
                continue
            new.append(_bound(values, envs, candidates, getattr(extent, "dtype", None)))
        if all(n is not None for n in new) and any(n is not e for n, e in zip(new, buf.shape)):
            buffers[key] = attrs.evolve(buf, shape=tuple(new))
    stores = {}
    for key, (store, value) in plans[0][1]["selects"].items():
        if all(plan["selects"].get(key, (None, None))[1] is value for _, plan in plans):
            stores[key] = attrs.evolve(store, value=store.value.args[1 if value else 2])
    if not (blocks or buffers or stores):
        return None
    return blocks, buffers, stores


def _agreed_blocks(func: PrimFunc, plans: list) -> "dict | None":
    """The blocks' part of :func:`_agreed`."""
    envs = [env for env, _ in plans]
    first = plans[0][1]
    if any(set(plan) != set(first) for _, plan in plans):
        return None
    candidates = None
    edits = {}
    for key, (realize, _) in first.items():
        decisions = [plan[key][1] for _, plan in plans]
        if all(d == "dead" for d in decisions):
            edits[key] = "dead"
            continue
        if any(d == "dead" for d in decisions):
            return None
        boxes = [d[1] for d in decisions if isinstance(d, tuple)]
        cut = [(pos, side) for box in boxes for pos, b in box.items() for side in (0, 1) if b[side] != b[side + 2]]
        if not cut:
            continue  # every iteration needed (or no box: left as it is)
        if len(boxes) != len(decisions):
            return None
        if candidates is None:
            candidates = _extents(func)
        pred = realize.predicate
        ivs = list(realize.block.iter_vars)
        cut = sorted(set(cut))
        for pos, side in cut:
            value = realize.iter_values[pos]
            bound = _bound([box[pos][side] for box in boxes], envs, candidates, getattr(value, "dtype", None))
            if bound is None:
                return None
            pred = conjunction([pred, (GE, LT)[side](value, bound)])
            iv = ivs[pos]
            if side == 1 and (pos, 0) not in cut and const_of(iv.dom.min) == 0:
                # a leading part: the domain itself shrinks (what distribute rebuilds from)
                ivs[pos] = attrs.evolve(iv, dom=attrs.evolve(iv.dom, extent=bound))
        # fresh loops run the points in their own order: not for a block reading what it writes
        once = all(d[2] for d in decisions) and not _reads_own(realize.block)
        edits[key] = (attrs.evolve(realize, predicate=pred, block=attrs.evolve(realize.block, iter_vars=tuple(ivs))),
                      once and all(side == 1 for _, side in cut))
    return edits


def _reads_own(block: Block) -> bool:
    """The block loads a buffer it stores to."""
    return bool(set(stored(block)) & loaded(block))


def _rewrite(func: PrimFunc, edits: dict, buffers: dict, stores: dict) -> PrimFunc:
    """``func`` with the blocks of ``edits`` removed or cut. A spatial block alone in a nest
    of the root's, its needed points each run once and a leading part of its domain, gets
    fresh loops over its cut domain (:func:`.rewrite.own_nest`): the predicate restating
    the cut would be read as restating the domain, not as skipping the loops' iterations."""
    root = func.body.block if isinstance(func.body, BlockRealize) else None
    tops = root.body.seq if root is not None and isinstance(root.body, SeqStmt) else \
        (root.body,) if root is not None else ()
    nests = {}
    for stmt in tops:
        got = nest_of(stmt)
        if got is not None and isinstance(edits.get(id(got[1])), tuple) and edits[id(got[1])][1]:
            nests[id(stmt)] = edits[id(got[1])][0]

    def pre(n):
        if id(n) in nests:
            return own_nest(nests[id(n)])
        if isinstance(n, BlockRealize) and id(n) in edits:
            edit = edits[id(n)]
            return EMPTY if edit == "dead" else edit[0]
        return None
    func = prune(transform(func, lambda n: None, pre))
    if not (buffers or stores):
        return func

    def post(n):
        if id(n) in buffers and n is not buffers[id(n)]:
            return buffers[id(n)]
        return None

    def pre_store(n):
        return stores.get(id(n))
    if stores:
        func = transform(func, lambda n: None, pre_store)
    return transform(func, post) if buffers else func

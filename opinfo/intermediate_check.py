"""Is every element of an intermediate buffer written before it is read?

Recognizers read a function's dataflow from its expressions: ``y = exp(t)`` where ``t`` is an
intermediate written by ``t = x + c`` is ``add`` then ``exp``. That holds only when every
element of ``t`` a reader loads was stored before the load. A producer loop cut short
(``for i in range(1)`` filling one of two rows) leaves the other row uninitialised, and the
function computes nothing an op computes; :func:`uninitialised_reads` refutes such functions.

Schedules write intermediates piecewise legitimately: ``compute_at`` fills, per iteration of
an outer loop, only the region its consumer reads in that iteration; ``cache_read`` copies,
``rolling_buffer``, ``decompose_padding`` (a constant fill, then a copy of the interior),
``loop_partition`` and ``pad_einsum`` write an intermediate in several blocks or only where
it is read. So the check is by enumeration, in program order: every store and load of an
intermediate is enumerated at every iteration of the loops around it (block bindings,
predicates, ``if`` guards and a reduction's init applied), each with the time it runs (the
path of statement positions and loop iterations from the function's body, compared
lexicographically; within one store its loads come before its write, a block's init before
its body). A load of an element whose first store is not earlier refutes, and so does one
of a reduction's partial result: the block that wrote the element last goes on to accumulate
a new point into it later (TVM's ``merge`` of a reduction's loop with its consumer's makes a
running max of a max; see :func:`_live_garbage`).

An intermediate lives as the function declares it: a buffer the root block allocates holds
its values for the whole function, so a consumer may read what an earlier iteration of a
loop stored. TVM's lowering does not keep that: it allocates a buffer at the lowest common
ancestor of its accesses (``PlanAndUpdateBufferAllocationLocation``), fresh at each iteration
of the loops around all of them -- but for the loops a reduction writing it binds its
reduction variables to, across which an accumulator lives (:func:`_scopes`) -- and compacts
it to what one iteration touches. A consumer reading what an earlier iteration computed
(``reverse_compute_at`` under splits that do not divide) computes the op as written and
garbage once TVM builds it: :func:`stale_reads` asks that question (the answer then carries
a warning), :func:`uninitialised_reads` the one of the loops as written (the function is
refused).

Only what is certain counts. A buffer is judged only when every store to it can be
enumerated (constant loop ranges at the chosen shape-variable values, indices evaluable, none
past the buffer, no aliasing); an unevaluable guard on a store is dropped (it can only add
writes). A load is judged only when its indices can be evaluated (a load under
``if_then_else``/``Select`` counts where its branch is taken; under a guard that reads data,
``where(mask, t, x)``, wherever it may be: no op picks garbage by a data-dependent choice). Shape variables
take a few values as in :mod:`.realize_check`; a refutation at any of them refutes."""
from __future__ import annotations

import math

import numpy as np

from tir.expr import Add, BufferLoad, Call, IntImm, Max, Min, Mul, Select, Var
from tir.functor import children, post_order_visit
from tir.stmt import (AllocateBuffer, AttrStmt, Block, BlockRealize, BufferStore, For,
                      IfThenElse, IterKind, LetStmt, SeqStmt)

from tir.structural import same_ir

from .affine import const_of
from .predicates import is_true
from .probe import NotEvaluable, evaluate, loops_points, pruned_points, scalar_int, shape_envs, shape_vars

MAX_POINTS = 1 << 19
"""Iterations of the loops around one store above which the buffer is not judged."""

MAX_TOTAL = 1 << 21
MAX_ROUNDS = 64
"""Rounds of taint propagation (one per dataflow step between blocks) before giving up."""
"""Enumerated points of one function above which it is not judged."""

SHAPE_VALUES = (7, 12)
"""Values given to the function's shape variables in turn."""

SMALL_SHAPE_VALUES = (2, 1)
"""Values tried after :data:`SHAPE_VALUES` (a function must be right at every value): a nest
too large to enumerate at 7 (a scheduled ``conv3d_transpose`` over a batch ``n``: 1.4 million
iterations of its reduction) is judged at 2 and 1."""

_ERRORS = (NotEvaluable, TypeError, ValueError, ZeroDivisionError, OverflowError, KeyError,
           IndexError, AttributeError)


class _Unjudged(Exception):
    """The function holds something this check does not model: nothing is refuted."""



def guarded_loads(expr, guard, out: list) -> None:
    """(load, guard) for the loads of ``expr``; ``guard`` is a tuple of (condition, taken)
    under which a load inside a conditional branch is read."""
    if isinstance(expr, BufferLoad):
        out.append((expr, guard))
        for i in expr.indices:
            guarded_loads(i, guard, out)
        return
    if isinstance(expr, Call) and expr.op == "if_then_else" and len(expr.args) == 3:
        c, t, f = expr.args
        guarded_loads(c, guard, out)
        guarded_loads(t, guard + ((c, True),), out)
        guarded_loads(f, guard + ((c, False),), out)
        return
    if isinstance(expr, Select):
        guarded_loads(expr.condition, guard, out)
        guarded_loads(expr.true_value, guard + ((expr.condition, True),), out)
        guarded_loads(expr.false_value, guard + ((expr.condition, False),), out)
        return
    for child in children(expr):
        guarded_loads(child, guard, out)


def _sites(stmt, chain: tuple, out: list) -> None:
    """(store, chain) for every store below ``stmt``; ``chain`` lists what lies between the
    function's body and the store: ("loop", For), ("seq", position), ("bind", BlockRealize),
    ("init", Block), ("if", condition, taken), ("let", var, value)."""
    if isinstance(stmt, BufferStore):
        out.append((stmt, chain))
    elif isinstance(stmt, SeqStmt):
        for k, s in enumerate(stmt.seq):
            _sites(s, chain + (("seq", k),), out)
    elif isinstance(stmt, For):
        _sites(stmt.body, chain + (("loop", stmt),), out)
    elif isinstance(stmt, BlockRealize):
        block = stmt.block
        if block.match_buffers:
            raise _Unjudged("match_buffer")
        inner = chain + (("bind", stmt),)
        if block.init is not None:
            _sites(block.init, inner + (("seq", 0), ("init", block)), out)
            _sites(block.body, inner + (("seq", 1),), out)
        else:
            _sites(block.body, inner, out)
    elif isinstance(stmt, Block):
        if stmt.match_buffers or stmt.init is not None or stmt.iter_vars:
            raise _Unjudged("bare block")
        _sites(stmt.body, chain, out)
    elif isinstance(stmt, IfThenElse):
        _sites(stmt.then_case, chain + (("seq", 0), ("if", stmt.condition, True)), out)
        if stmt.else_case is not None:
            _sites(stmt.else_case, chain + (("seq", 1), ("if", stmt.condition, False)), out)
    elif isinstance(stmt, LetStmt):
        _sites(stmt.body, chain + (("let", stmt.var, stmt.value),), out)
    elif isinstance(stmt, (AttrStmt, AllocateBuffer)):
        _sites(stmt.body, chain, out)
    else:  # Evaluate (an opaque call may write anything), While, ...
        raise _Unjudged(type(stmt).__name__)


class _Site:
    """One store enumerated: the iterations of its loops, the leaves (loop and block
    variables) at each, the time columns, and the masks that hold for certain (``sure``) and
    the ones that could not be evaluated (``open``: a load under them is not judged)."""

    def __init__(self, chain, env: dict):
        loops = [e[1] for e in chain if e[0] == "loop"]
        # a range may use an outer loop (compute_at of a region TVM could not box): its
        # minimum is then one per iteration, its extent the largest
        got = loops_points(loops, env, MAX_POINTS)
        realizes = [e[1] for e in chain if e[0] == "bind" and not is_true(e[1].predicate)]
        if got is None and realizes:
            # loops running many more iterations than the block (a thread loop of 256 under
            # ``T.where(t < 8)``): the iterations its predicate keeps, pruned loop by loop
            got = pruned_points(loops, env, MAX_POINTS * 8, realizes[-1].predicate)
            got = got if got is not None and got[1] <= MAX_POINTS else None
        if got is None:
            raise _Unjudged("loop range, or too many points")
        leaves, n, ranges = got
        lows = {lp.loop_var: lo for lp, (lo, _) in zip(loops, ranges)}
        ext_of = {lp.loop_var: ext for lp, (_, ext) in zip(loops, ranges)}
        self.size = n
        self.leaves = leaves
        self.mask = np.ones(n, dtype=bool)
        self.open = False
        columns = []
        self.lows = lows
        self.extents = ext_of
        for entry in chain:
            kind = entry[0]
            if kind == "seq":
                columns.append((entry[1], entry[1] + 1))
            elif kind == "loop":
                var = entry[1].loop_var
                columns.append((var, max(ext_of[var], 1)))
            elif kind == "bind":
                realize = entry[1]
                for iv, value in zip(realize.block.iter_vars, realize.iter_values):
                    got = self._points(value)
                    if got is None:
                        raise _Unjudged("binding")
                    leaves[iv.var] = got
                if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
                    self._restrict(realize.predicate, True)
            elif kind == "init":
                for iv in entry[1].iter_vars:
                    if iv.kind == IterKind.REDUCE:
                        lo = self._points(iv.dom.min)
                        if lo is None:
                            self.open = True
                        else:
                            self.mask &= leaves[iv.var] == lo
            elif kind == "if":
                self._restrict(entry[1], entry[2])
            elif kind == "let":
                got = self._points(entry[2])
                if got is not None:
                    leaves[entry[1]] = got
                # else: a value loaded (argmax's Selects): what uses the variable is not
                # evaluable, so a store or guard indexed by it is not judged
        self.columns = columns

    def _points(self, expr) -> "np.ndarray | None":
        try:
            v = np.broadcast_to(np.asarray(evaluate(expr, self.leaves), dtype=float), self.mask.shape)
        except _ERRORS:
            return None
        return v if np.all(np.isfinite(v)) else None

    def _restrict(self, cond, taken: bool) -> None:
        got = self._points(cond)
        if got is None:
            self.open = True
            return
        self.mask &= (got != 0) if taken else (got == 0)

    def guarded(self, guard) -> np.ndarray:
        """The iterations where a load under ``guard`` (:func:`guarded_loads`) is read. A
        data-dependent condition (``where(mask, t, x)`` with the mask a buffer) restricts
        nothing: the load counts wherever it may hold -- garbage it may read is not provably
        unread, and no op reads garbage under a data-dependent choice."""
        mask = self.mask.copy()
        for cond, taken in guard:
            value = self._points(cond)
            if value is not None:
                mask &= (value != 0) if taken else (value == 0)
        return mask

    def access(self, indices, shape, mask) -> "tuple | None":
        """Flat element indices of ``buffer[indices]`` where ``mask`` holds, and which of
        them are inside the buffer (the others' flat indices mean nothing); None when not
        evaluable."""
        flat = np.zeros(int(mask.sum()), dtype=np.int64)
        inside = np.ones(flat.size, dtype=bool)
        for index, extent in zip(indices, shape):
            got = self._points(index)
            if got is None or np.any(got != np.floor(got)):
                return None
            got = got[mask]
            inside &= (got >= 0) & (got < extent)
            flat = flat * extent + np.clip(got, 0, extent - 1).astype(np.int64)
        return flat, inside

    def radices(self) -> list:
        return [r for _, r in self.columns]

    def keys(self, weights) -> np.ndarray:
        """Time of each iteration as one integer, ``weights`` giving each column's weight
        (the same for every site of the function: columns are compared position by
        position, a shorter path padded with zeros)."""
        key = np.zeros(self.mask.shape, dtype=np.int64)
        for (what, _), w in zip(self.columns, weights):
            if isinstance(what, int):
                key += what * w
            else:
                key += (self.leaves[what] - self.lows[what]).astype(np.int64) * w
        return key


def _weights(sites) -> "list | None":
    """Column weights making every site's time one int64, ordered lexicographically by
    path; a last column (weight 1, radix 2) tells a store's loads (0) from its write (1)."""
    width = max(len(s.columns) for s in sites)
    radix = [1] * width
    for site in sites:
        for k, r in enumerate(site.radices()):
            radix[k] = max(radix[k], r)
    weights, w = [], 2
    for r in reversed(radix):
        weights.append(w)
        w *= r
    if w >= (1 << 62):
        return None
    return weights[::-1]


def _same_entry(a, b) -> bool:
    """Two chain entries name the same place: the same kind, the same object (loop, block,
    variable) or position."""
    if a[0] != b[0] or len(a) != len(b):
        return False
    return all(x is y or (isinstance(x, (int, bool)) and x == y) for x, y in zip(a[1:], b[1:]))


def _common(a: tuple, b: tuple) -> tuple:
    """The longest common prefix of two chains: where the two places meet."""
    k = 0
    while k < min(len(a), len(b)) and _same_entry(a[k], b[k]):
        k += 1
    return a[:k]


def _scopes(sites, params: set) -> dict:
    """id(buffer) -> the loops around every store and load of an intermediate (the common
    prefix of those sites' chains). TVM's lowering allocates a buffer at the lowest common
    ancestor of its accesses (``PlanAndUpdateBufferAllocationLocation``): inside these loops,
    fresh at each of their iterations, so what one iteration stored is gone at the next
    (a schedule whose consumer reads, one iteration later, what a producer computed at its
    loop computes garbage once built, whatever running the loops as written gives). A buffer
    a reduction writes lives across the loops its reduction variables are bound to: the
    scope stops above the first of them."""
    chains: dict = {}
    reducing: dict = {}  # id(buffer) -> ids of the loops feeding a reduction that writes it
    for store, chain, loads in sites:
        reducing.setdefault(id(store.buffer), set()).update(_reduction_loops(chain))
        for key in {id(store.buffer)} | {id(load.buffer) for load, _ in loads}:
            if key in params:
                continue
            chains[key] = _common(chains[key], chain) if key in chains else chain
    scopes = {}
    for key, chain in chains.items():
        loops = []
        for entry in chain:
            if entry[0] != "loop":
                continue
            if id(entry[1].loop_var) in reducing.get(key, ()):
                break  # an accumulator lives across its reduction loops (and what they hold)
            loops.append(entry[1])
        scopes[key] = loops
    return scopes


def _reduction_loops(chain) -> set:
    """Ids of the loop variables the blocks along ``chain`` bind reduction variables to."""
    found: set = set()
    for entry in chain:
        if entry[0] == "bind":
            for iv, value in zip(entry[1].block.iter_vars, entry[1].iter_values):
                if iv.kind == IterKind.REDUCE:
                    post_order_visit(value, lambda n: found.add(id(n)) if isinstance(n, Var) else None)
    return found


def _in_scope(points, dims, site, loops, iterations) -> "np.ndarray | None":
    """Flat element ``points`` made distinct per iteration of the buffer's scope ``loops``
    (:func:`_scopes`) at ``iterations`` of ``site``; None when a loop is not the site's."""
    if not loops:
        return points
    scope = np.zeros(iterations.size, dtype=np.int64)
    for lp in loops:
        var = lp.loop_var
        if var not in site.lows:
            return None
        values = np.broadcast_to(site.leaves[var], site.mask.shape)[iterations]
        lows = np.broadcast_to(site.lows[var], site.mask.shape)[iterations]
        scope = scope * max(site.extents[var], 1) + (values - lows).astype(np.int64)
    return points + scope * max(math.prod(dims), 1)


def _inputs(func, sites) -> set:
    """Ids of the parameters no store writes: the function's inputs, defined on entry. A
    parameter it stores to is an output, undefined until written (destination-passing
    style), and judged as an intermediate is."""
    stored = {id(store.buffer) for store, *_ in sites}
    return {id(b) for b in func.buffers if id(b) not in stored}


def _refuted(func, sites, env: dict, scopes: dict) -> bool:
    """``sites``: (store, chain, loads) of the whole function, ``scopes`` its buffers' scope
    loops (:func:`_scopes`). True when some load of an element no store has written yet (of
    an intermediate or an output) provably feeds the final value of an output element (see
    :func:`uninitialised_reads`)."""
    params = {id(b) for b in func.buffers}
    inputs = _inputs(func, sites)
    shapes: dict = {}

    def shape(buf):
        if id(buf) not in shapes:
            dims = [scalar_int(s, env) for s in buf.shape]
            shapes[id(buf)] = None if any(d is None or d < 0 for d in dims) else dims
        return shapes[id(buf)]

    wanted = {id(load.buffer) for _, _, loads in sites for load, _ in loads} - inputs
    if not wanted:
        return False
    first = [id(store.buffer) in wanted or any(id(ld.buffer) in wanted for ld, _ in loads)
             for store, _, loads in sites]
    built: list = [(None, store, loads) for store, _, loads in sites]  # (site or None, store, loads)
    unjudged: set = set()  # buffers some store of which is not enumerated exactly
    writes: dict = {}  # buffer id -> [(points, site number, iterations)]
    reads: dict = {}
    total = 0
    for phase in (True, False):
        for k, (store, chain, loads) in enumerate(sites):
            if first[k] != phase:
                continue
            try:
                site = _Site(chain, env)
            except _Unjudged:
                unjudged.add(id(store.buffer))
                continue
            total += site.size
            if total > MAX_TOTAL:
                return False
            built[k] = (site, store, loads)
            _accesses(k, site, store, loads, shape, writes, reads, unjudged, scopes)
        if phase:
            never = _never_written(reads, writes, inputs, unjudged)
    accumulating = _accumulating(sites)
    return _live_garbage(built, writes, reads, never, unjudged, params, inputs, accumulating)


def _never_written(reads, writes, inputs, unjudged) -> dict:
    """(buffer id, number of the read) -> which of its elements no store writes at any time,
    for the loads of intermediates and outputs (stores are all enumerated: ``unjudged``
    buffers aside)."""
    never: dict = {}
    for key, rd in reads.items():
        if key in inputs or key in unjudged:
            continue
        written = np.concatenate([p for p, *_ in writes.get(key, [])] or [np.zeros(0, np.int64)])
        for n, (points, _, _) in enumerate(rd):
            miss = ~np.isin(points, written)
            if miss.any():
                never[(key, n)] = miss
    return never


def _accesses(k, site, store, loads, shape, writes, reads, unjudged, scopes) -> None:
    """The elements store ``k`` writes and its loads read (with the iterations doing so),
    an intermediate's element told apart per iteration of its scope (:func:`_scopes`)."""
    buf = store.buffer
    dims = shape(buf)
    got = None if dims is None or len(dims) != len(store.indices) else \
        site.access(store.indices, dims, site.mask)
    its = np.nonzero(site.mask)[0]
    points = None
    if got is not None:
        # a store past an end of the buffer (a copy :func:`.coverage.out_of_bounds_writes`
        # lets pass: what it does there changes no element the copy keeps) writes nothing here
        flat, inside = got
        its = its[inside]
        points = _in_scope(flat[inside], dims, site, scopes.get(id(buf), []), its)
    if points is None:
        unjudged.add(id(buf))
    else:
        writes.setdefault(id(buf), []).append((points, k, its))
    if site.open:
        return  # a guard not evaluated: the loads are not judged
    for load, guard in loads:
        dims = shape(load.buffer)
        if dims is None or len(dims) != len(load.indices):
            continue
        mask = site.guarded(guard)
        got = site.access(load.indices, dims, mask)
        if got is None or not got[1].all():
            continue  # past the buffer: another check's concern
        its = np.nonzero(mask)[0]
        points = _in_scope(got[0], dims, site, scopes.get(id(load.buffer), []), its)
        if points is not None:
            reads.setdefault(id(load.buffer), []).append((points, k, its))


def _partial_reads(accumulating, k, order, reads_at, pt, ok, src_idx, w_site, w_sig, inst, taint) -> None:
    """Taints the loads of store ``k`` (sorted by element and time in ``order``) that read a
    partial result (see :func:`_live_garbage`); ``w_sig``: whether each store sets the
    element anew or adds a contribution it has not had (:func:`_significant`)."""
    blocks, accum = accumulating[:2]
    size, n_writes = order.size, w_sig.size
    sig = np.concatenate([w_sig, np.zeros(size - n_writes, bool)])
    nxt = np.minimum.accumulate(np.where(sig[order], np.arange(size), size)[::-1])[::-1][reads_at]
    has = ok & (nxt < size)
    nidx = order[np.where(has, nxt, 0)]
    has &= pt[nidx] == pt[order][reads_at]
    if not has.any():
        return
    nsite = w_site[np.where(has, nidx, 0)]
    psite = w_site[np.where(has, src_idx, 0)]
    bad = has & accum[nsite] & (blocks[nsite] == blocks[psite]) & (blocks[nsite] != blocks[k])
    if bad.any():
        taint[inst[order[reads_at][bad] - n_writes]] = True


def _significant(accumulating, sites, wr, w_pt, w_t, w_site) -> np.ndarray:
    """Per store of one buffer (``wr``, flattened as ``w_pt``, ``w_t``, ``w_site``): whether
    it sets its element anew (it does not accumulate) or accumulates a reduction point (the
    values of its block's reduction variables) the element has not had since it was last
    set (a sum's repetition of a point always adds). A max ``compute_at`` under a loop of
    its consumer runs again over the same points: those repetitions change nothing."""
    _, accum, rvars, idem = accumulating
    n = w_pt.size
    width = max([len(rvars[k]) for _, k, _ in wr] or [0])
    rows = np.full((n, width), -1, dtype=np.int64)
    start = 0
    for _, k, it in wr:
        site = sites[k]
        for c, var in enumerate(rvars[k]):
            vals = np.broadcast_to(np.asarray(site.leaves.get(var, np.nan), dtype=float), site.mask.shape)[it]
            rows[start:start + it.size, c] = np.where(np.isfinite(vals), vals, -2).astype(np.int64)
        start += it.size
    acc = accum[w_site]
    order = np.lexsort((w_t, w_pt))
    pt_s, set_s = w_pt[order], (~acc[order]).astype(np.int64)
    first = np.ones(n, dtype=bool)
    first[1:] = pt_s[1:] != pt_s[:-1]
    base = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    c = np.cumsum(set_s)
    run = c - (c - set_s)[base]  # how many times the element was set anew, up to this store
    key = np.column_stack([pt_s, run, w_site[order], rows[order]])
    _, firsts = np.unique(key, axis=0, return_index=True)
    novel = np.zeros(n, dtype=bool)
    novel[order[firsts]] = True
    return ~acc | novel | ~idem[w_site]


def _empty_inits(built, accumulating, bufs) -> tuple:
    """(per store site: whether it is a reduction's decomposed init; {buffer id: the blocks
    accumulating into it over reduction variables}; {buffer id: their combiner's type};
    per site, what it accumulates straight in, :func:`_combined`). A decomposed init is a
    store of a value that loads nothing, by a block without reduction variables, into a
    buffer another block accumulates into over reduction variables (``decompose_reduction``'s
    ``x_red_init``). What such a store leaves is the reduction of no point: a reader that
    finds it there reads a reduction its update skipped (an update whose loops leave a row
    out), which no op computes -- unless the reader is that reduction, or a reduction
    combining it as it does (rfactor's partials, each the identity where no point reached
    it, summed across threads: neutral)."""
    blocks, accum, rvars, _ = accumulating
    reducing: dict = {}  # buffer id -> the blocks accumulating into it over reduction variables
    combiner: dict = {}  # buffer id -> their combiner's type, when they all combine so (else None)
    combines: list = []  # per site: what it accumulates straight in (:func:`_combined`)
    for j, key in enumerate(bufs):
        combines.append(_combined(built[j][1]) if accum[j] and rvars[j] else None)
        if accum[j] and rvars[j] and blocks[j] >= 0:
            reducing.setdefault(key, set()).add(int(blocks[j]))
            kind = type(built[j][1].value)
            combiner[key] = kind if combiner.get(key, kind) is kind else None
    empty = np.array([bool(not accum[j] and not rvars[j] and not built[j][2] and blocks[j] >= 0
                           and key in reducing and int(blocks[j]) not in reducing[key])
                      for j, key in enumerate(bufs)], dtype=bool)
    return empty, reducing, combiner, combines


def _combined(store) -> "tuple | None":
    """(id of the buffer, the combiner's type) when ``store`` accumulates one load of another
    buffer straight into its element: ``acc = acc + rf[t]``, ``acc = max(acc, rf[t])``."""
    value = store.value
    if not isinstance(value, (Add, Mul, Max, Min)):
        return None
    for own, other in ((value.a, value.b), (value.b, value.a)):
        if isinstance(own, BufferLoad) and _stored_element(own, store) and isinstance(other, BufferLoad) \
                and other.buffer is not store.buffer:
            return id(other.buffer), type(value)
    return None


def _accumulating(sites) -> tuple:
    """(the block of each store site, a number; -1 outside blocks), (whether the store
    accumulates: its value loads the element it stores, ``acc = max(acc, x)``), (the
    reduction variables of its block), (whether it is a max or min, which adding a point
    again leaves unchanged)."""
    blocks, accum, rvars, idem, ids = [], [], [], [], {}
    for store, chain, loads in sites:
        binds = [e[1].block for e in chain if e[0] == "bind"]
        blocks.append(ids.setdefault(id(binds[-1]), len(ids)) if binds else -1)
        rvars.append([iv.var for iv in binds[-1].iter_vars if iv.kind == IterKind.REDUCE] if binds else [])
        idem.append(isinstance(store.value, (Max, Min)))
        accum.append(_accumulates(store, loads))
    return np.array(blocks, dtype=np.int64), np.array(accum, dtype=bool), rvars, np.array(idem, dtype=bool)


def _live_garbage(built, writes, reads, never, unjudged, params, inputs, accumulating) -> bool:
    """Whether a value computed from a never-written element is the final value of some
    output element: iterations are tainted by the loads in ``never``, by a load of an
    intermediate or output element no store has written yet, and by loading an element
    whose reaching store (the last one before the load) is tainted; an output element's
    last store being tainted refutes. (Real TVM output does that too: ``cache_index``
    leaving an op to read its index buffer before the copy that fills it, ``compute_at``
    of a transposed producer computing a row the consumer reads one iteration late. Such
    functions compute from garbage: not named.) Stores whose guard was not evaluated are
    never tainted (they might not run).

    A load of a reduction's partial result taints too (``accumulating``, from
    :func:`_accumulating`): one whose reaching store is by the block that next stores the
    element, accumulating a reduction point the element has not had yet
    (:func:`_significant`; a max or min repeating points already in, as one ``compute_at``
    under a loop of its consumer does, is no news), the loading store being of another block.
    TVM's ``merge`` of a reduction's loop with its consumer's
    (``for i: m = max(m, x[i]); y[i] = x[i] - m``) makes a prefix computation of a
    reduction: the consumer reads the running max, not the max."""
    live = [(site, store) for site, store, _ in built if site is not None]
    sites = [site for site, _, _ in built]
    offset, total = {}, 0
    for k, site in enumerate(sites):
        if site is not None:
            offset[k] = total
            total += site.mask.shape[0]
    if not live:
        return False
    weights = _weights([s for s in sites if s is not None])
    if weights is None:
        return False
    keys = {k: site.keys(weights) for k, site in enumerate(sites) if site is not None}
    clean = np.zeros(total, dtype=bool)
    for k, site in enumerate(sites):
        if site is not None and site.open:
            clean[offset[k]:offset[k] + site.mask.shape[0]] = True
    bufs = np.array([id(store.buffer) for _, store, _ in built], dtype=object)
    empty, reducing, combiner, combines = _empty_inits(built, accumulating, bufs)
    taint = np.zeros(total, dtype=bool)
    cross_src, cross_dst = [], []
    parent = np.arange(total)
    for key, rd in reads.items():
        if key in unjudged:
            continue
        wr = writes.get(key, [])
        w_pt = np.concatenate([p for p, *_ in wr] or [np.zeros(0, np.int64)])
        w_t = np.concatenate([keys[k][it] + 1 for _, k, it in wr] or [np.zeros(0, np.int64)])
        w_inst = np.concatenate([offset[k] + it for _, k, it in wr] or [np.zeros(0, np.int64)])
        w_site = np.concatenate([np.full(it.size, k) for _, k, it in wr] or [np.zeros(0, np.int64)])
        partial = w_pt.size and accumulating[1][w_site].any()
        w_sig = _significant(accumulating, sites, wr, w_pt, w_t, w_site) if partial else None
        for n, (points, k, it) in enumerate(rd):
            inst = offset[k] + it
            miss = never.get((key, n))
            if miss is not None:
                taint[inst[miss]] = True
            if not w_pt.size:
                continue
            r_t = keys[k][it]
            pt = np.concatenate([w_pt, points])
            tt = np.concatenate([w_t, r_t])
            is_w = np.concatenate([np.ones(w_pt.size, bool), np.zeros(points.size, bool)])
            order = np.lexsort((tt, pt))
            pos = np.where(is_w[order], np.arange(order.size), -1)
            last = np.maximum.accumulate(pos)
            reads_at = ~is_w[order]
            prev = last[reads_at]
            ok = prev >= 0
            src_idx = order[np.where(ok, prev, 0)]
            ok &= pt[src_idx] == pt[order][reads_at]
            if key not in inputs:  # an intermediate or output element read before its first store
                taint[inst[order[reads_at][~ok] - w_pt.size]] = True
            if partial and accumulating[0][k] >= 0:
                _partial_reads(accumulating, k, order, reads_at, pt, ok, src_idx, w_site, w_sig, inst, taint)
            if empty[w_site].any() and int(accumulating[0][k]) not in reducing.get(key, ()) \
                    and (combines[k] is None or combines[k] != (key, combiner.get(key))):
                # a reduction read where its decomposed init is the last store: no point added
                # (but by the reduction itself -- a tuple reduction's update loads its other
                # accumulator too -- or by one combining it as it does: rfactor's partial sums
                # of threads no point reached, each its identity, summed across threads)
                fresh = ok & empty[w_site[np.where(ok, src_idx, 0)]]
                taint[inst[order[reads_at][fresh] - w_pt.size]] = True
            src = w_inst[src_idx[ok]]
            dst = inst[order[reads_at][ok] - w_pt.size]
            # an accumulator: a load of the element the same store wrote before
            chain = (w_site[src_idx[ok]] == k) & (id(built[k][1].buffer) == key)
            unset = chain & (parent[dst] == dst)
            parent[dst[unset]] = src[unset]
            cross_src.append(src[~unset])
            cross_dst.append(dst[~unset])
    cs = np.concatenate(cross_src) if cross_src else np.zeros(0, np.int64)
    cd = np.concatenate(cross_dst) if cross_dst else np.zeros(0, np.int64)
    steps = max(1, int(total).bit_length())
    for _ in range(MAX_ROUNDS):
        before = taint.copy()
        taint &= ~clean
        taint[cd[taint[cs]]] = True
        p = parent
        for _ in range(steps):
            taint |= taint[p]
            p = p[p]
        taint &= ~clean
        if np.array_equal(taint, before):
            break
    else:
        return False
    for key, wr in writes.items():
        if key not in params or key in unjudged:
            continue
        w_pt = np.concatenate([p for p, *_ in wr])
        w_t = np.concatenate([keys[k][it] for _, k, it in wr])
        w_inst = np.concatenate([offset[k] + it for _, k, it in wr])
        order = np.lexsort((-w_t, w_pt))
        first = np.ones(order.size, dtype=bool)
        first[1:] = w_pt[order][1:] != w_pt[order][:-1]
        if np.any(taint[w_inst[order][first]]):
            return True
    return False


def _loads_of(store) -> list:
    out: list = []
    guarded_loads(store.value, (), out)
    for i in store.indices:
        guarded_loads(i, (), out)
    return out


def _let_loads(chain) -> list:
    """The loads of the values of the ``let`` bindings around a store (argmax/argmin bind
    their Selects to variables the stores write): they feed the store as its own loads do."""
    out: list = []
    for entry in chain:
        if entry[0] == "let":
            guarded_loads(entry[2], (), out)
    return out


def _top(chain) -> "int | None":
    """Position of the statement holding the store in the function's top-level sequence
    (under the root block, outside every loop), or None."""
    k = 0
    if k < len(chain) and chain[k][0] == "bind" and not chain[k][1].block.iter_vars:
        k += 1
    if k < len(chain) and chain[k][0] == "seq":
        return chain[k][1]
    return None


def _whole(store, chain) -> bool:
    """The store writes every element of its buffer once its top-level statement has run:
    loops over one block, each block variable bound to a loop of its own whose range is the
    variable's domain, no predicate, and the store indexed by distinct block variables whose
    domains are the buffer's axes (TVM's unscheduled blocks)."""
    k = 0
    while k < len(chain) and chain[k][0] != "loop":
        k += 1
    loops = []
    while k < len(chain) and chain[k][0] == "loop":
        loops.append(chain[k][1])
        k += 1
    if k >= len(chain) or chain[k][0] != "bind":
        return False
    realize = chain[k][1]
    rest = chain[k + 1:]
    if rest not in ((), (("seq", 1),)) or (rest and realize.block.init is None):
        return False
    if not (isinstance(realize.predicate, IntImm) and realize.predicate.value == 1):
        return False
    by_var = {lp.loop_var: lp for lp in loops}
    doms = {}
    for iv, value in zip(realize.block.iter_vars, realize.iter_values):
        lp = by_var.get(value) if isinstance(value, Var) else None
        if lp is None or not _same(lp.min, iv.dom.min) or not _same(lp.extent, iv.dom.extent):
            return False
        doms[iv.var] = iv.dom
    if len({id(v) for v in realize.iter_values}) != len(loops):
        return False
    if len(store.indices) != len(store.buffer.shape) or len({id(i) for i in store.indices}) != len(store.indices):
        return False
    for index, axis in zip(store.indices, store.buffer.shape):
        dom = doms.get(index) if isinstance(index, Var) else None
        if dom is None or const_of(dom.min) != 0 or not _same(dom.extent, axis):
            return False
    return True


def _same(a, b) -> bool:
    ca, cb = const_of(a), const_of(b)
    if ca is not None or cb is not None:
        return ca == cb
    return a is b or same_ir(a, b)


def _pending(sites, params) -> bool:
    """Some load of an intermediate is not settled without enumeration: settled are loads
    in a later top-level statement than one writing the whole buffer (:func:`_whole`; not a
    reduction's decomposed init, whose values a reader may find where the update did not
    run), and a reduction's load of its own accumulator (indices those of its store, the
    block with an init writing it first)."""
    whole: dict = {}
    accumulates = [_accumulates(store, loads) for store, _, loads in sites]
    accumulated = {id(store.buffer) for (store, _, _), acc in zip(sites, accumulates) if acc}
    for (store, chain, _), acc in zip(sites, accumulates):
        top = _top(chain)
        if id(store.buffer) in accumulated and not acc:
            continue  # a reduction's decomposed init: what it wrote may still be all a reader finds
        if top is not None and id(store.buffer) not in params and _whole(store, chain):
            whole[id(store.buffer)] = min(top, whole.get(id(store.buffer), top))
    for store, chain, loads in sites:
        top = _top(chain)
        for load, _ in loads:
            key = id(load.buffer)
            if key in params:
                continue
            if top is not None and key in whole and whole[key] < top:
                continue
            if load.buffer is store.buffer and len(load.indices) == len(store.indices) and \
                    all(a is b for a, b in zip(load.indices, store.indices)) and \
                    any(e[0] == "bind" and e[1].block.init is not None for e in chain):
                continue
            return True
    return False


def _accumulates(store, loads) -> bool:
    """``store`` loads the very element it stores (``acc = acc + x``)."""
    return any(_stored_element(load, store) for load, _ in loads)


def _stored_element(load, store) -> bool:
    """``load`` reads the element ``store`` writes (the same buffer, the same indices)."""
    return load.buffer is store.buffer and len(load.indices) == len(store.indices) \
        and all(a is b or same_ir(a, b) for a, b in zip(load.indices, store.indices))


def _aliased(func) -> bool:
    """Two buffers over one data variable (a write through one is a write to the other)."""
    seen: dict = {}
    found: list = []

    def visit(n):
        if isinstance(n, (BufferStore, BufferLoad)):
            found.append(n.buffer)
    post_order_visit(func.body, visit)
    for buf in list(func.buffers) + found:
        if buf.data is not None:
            if seen.setdefault(id(buf.data), buf) is not buf:
                return True
    return False


def uninitialised_reads(func) -> bool:
    """True when some element of an intermediate buffer is provably loaded before (or
    without) being stored, the loops run as written (see the module docstring)."""
    sites = _prepared(func)
    return sites is not None and _judged(func, sites, {})


def stale_reads(func) -> tuple:
    """The intermediates TVM's build leaves stale: with the buffers allocated as TVM's
    lowering allocates them (fresh at each iteration of the loops around all their accesses,
    :func:`_scopes`), the function provably computes an output element from storage that
    iteration did not write -- a consumer reading what an earlier iteration stored. Asked of
    functions :func:`uninitialised_reads` lets pass, it tells where the loops as written and
    TVM's build of them part (TVM 0.27's llvm build returns ``nan`` there). One
    ``(buffer name, names of the loops TVM allocates it inside)`` per buffer that is stale
    on its own (the buffers of the scoped reading when none is alone); ``()`` when none."""
    sites = _prepared(func)
    if sites is None:
        return ()
    scopes = {key: loops for key, loops in _scopes(sites, {id(b) for b in func.buffers}).items() if loops}
    if not scopes or not _judged(func, sites, scopes):
        return ()  # every intermediate lives across the whole function, or nothing is stale
    blamed = [key for key in scopes if _judged(func, sites, {key: scopes[key]})] if len(scopes) > 1 else []
    names = {id(store.buffer): store.buffer.name for store, _, _ in sites}
    return tuple((names.get(key, "?"), tuple(lp.loop_var.name for lp in scopes[key]))
                 for key in (blamed or scopes))


def _prepared(func) -> "list | None":
    """(store, chain, loads) of every store of ``func``, or None when nothing needs judging
    (no load of an intermediate unsettled, aliased storage, a statement not enumerable)."""
    try:
        sites: list = []
        _sites(func.body, (), sites)
    except (_Unjudged, RecursionError):
        return None
    sites = [(store, chain, _loads_of(store) + _let_loads(chain)) for store, chain in sites]
    if not _pending(sites, _inputs(func, sites)) or _aliased(func):
        return None
    return sites


def _judged(func, sites: list, scopes: dict) -> bool:
    """Whether the function is refuted at some value of its shape variables, its
    intermediates living within ``scopes`` (:func:`_scopes`; a buffer not in it lives across
    the whole function)."""
    free = shape_vars(func)
    for values in (SHAPE_VALUES, SMALL_SHAPE_VALUES) if free else (SHAPE_VALUES,):
        try:
            for env in shape_envs(free, values):
                if _refuted(func, sites, env, scopes):
                    return True
        except (_Unjudged, MemoryError):
            continue
    return False

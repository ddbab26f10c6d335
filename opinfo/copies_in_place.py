"""Cache copies read through inside their readers' loops, confirmed by running.

TVM's ``read_at``/``write_at`` (and a cache chain under ``compute_at``) put a copy
``S[i...] = P[i...]`` of a tile inside the very loop that reads it, the tile being what
the loop's iteration needs. Bound to thread blocks whose rows overlap and whose last block
runs past the end (a fused loop split by a factor that does not divide it), the copy's
loops run a range that depends on the outer loop (TVM declares that range as the copy
block's domain) and store rows past the end of ``S``: nothing reads those, and every row
a reader does read was copied in the same iteration, before it. The function then computes
its op, yet its form is refused (a block domain that reads the loops, stores outside a
buffer) and :mod:`.partial_copy` cannot read through the copy (its copy must sit in a
statement of the top level before its readers, and nothing may write ``P`` after it).

:func:`read_through_in_place` reads such copies through all the same (every load of ``S``
loads ``P``'s element at the same place, the copy is removed; chains in turn) and keeps the
result only when running shows it changes nothing: the function as written (stores past
the end of its own storage dropped, its storage starting as junk, twice with two junk
values) and the rewritten one leave the same outputs on random inputs. A stale copy (``P``
changed between the copy and the read), a read of a row no copy stored, or a junk value
reaching an output all show as a difference. Functions too large to run cheaply
(:func:`.verify.cheap_binding`) keep their copies.
"""
from __future__ import annotations

import attrs
import numpy as np

from tir.expr import BufferLoad
from tir.function import PrimFunc
from tir.functor import transform
from tir.stmt import Block, BlockRealize, BufferStore

from .block_loops import move_block_loops
from .blockize import unblockize
from .coverage import same_index_copy
from .loop_partition import merge_partitions
from .normalize import cache_scope
from .partial_copy import copy_form, read_through
from .rewrite import EMPTY, loaded, prune, stored

MAX_ROUNDS = 8
"""Copies of a chain read through one link per round, at most this many rounds."""

STEPS = 100_000
"""Loop iterations each run may walk one at a time: a copy's loops whose range reads an
outer loop do not run as one numpy grid."""

JUNK = (float("nan"), -12345.0)
"""What the function's own storage holds before it writes it, one run per value (an
integer buffer holds the interpreter's integer junk for NaN)."""


def read_through_in_place(func: PrimFunc) -> "PrimFunc | None":
    """``func`` with its cache copies read through (module docstring), or None when it has
    none, or running does not confirm the rewrite."""
    moved = unblockize(move_block_loops(merge_partitions(func)))
    out = moved
    for _ in range(MAX_ROUNDS):
        chosen = _copies(out)
        if chosen:
            out = read_through(out, chosen)
            continue
        written = _write_through(out)
        if written is None:
            written = _round_trips(out)
        if written is None:
            break
        out = written
    if out is moved or not _same_outputs(func, out):
        return None
    return out


def _copies(func: PrimFunc) -> dict:
    """id(block) -> copy form for the copy blocks of ``func`` that are the only writers of
    an intermediate buffer, at most one per buffer involved (a transposing copy too: its
    readers load the source at the permuted indices)."""
    params = {id(b) for b in func.buffers}
    blocks = list(func.blocks())
    writers: dict = {}
    for block in blocks:
        for key in stored(block):
            writers[key] = writers.get(key, 0) + 1
    chosen, used = {}, set()
    for block in blocks:
        form = copy_form(block)
        if form is None or form[3] is not None or len(form[1]) != 1:
            continue  # pad producers and index blocks are partial_copy's
        dst, (src,) = form[0], form[1]
        if id(dst) in params or writers.get(id(dst)) != 1:
            continue
        touched = {id(dst), id(src)}
        if touched & used:
            continue
        chosen[id(block)] = form
        used |= touched
    return chosen


def _write_through(func: PrimFunc) -> "PrimFunc | None":
    """``func`` with one ``write_at``-style copy ``D[i...] = S[i...]`` undone: ``S`` an
    intermediate in a cache's scope (a global one may be an op's result copied by another
    op's block, a ``T_divide`` by 1) and of ``D``'s shape, which one other block writes (and
    may read, accumulating) and no other block reads; ``D`` written by the copy alone. That
    block then stores into ``D`` and the copy is removed. None when there is no such copy."""
    params = {id(b) for b in func.buffers}
    blocks = list(func.blocks())
    for copy in blocks:
        pair = _plain_copy(copy)
        if pair is None:
            continue
        dst, src = pair
        if id(src) in params or not cache_scope(src) or not _same_shape(dst, src):
            continue
        others = [b for b in blocks if b is not copy]
        writers = [b for b in others if id(src) in stored(b)]
        if len(writers) != 1 or any(id(dst) in stored(b) for b in others):
            continue
        if any(id(src) in loaded(b) for b in others if b is not writers[0]):
            continue
        return _retarget(func, [copy], src, dst)
    return None


def _plain_copy(block) -> "tuple | None":
    """(destination, source) of a block ``D[i...] = S[i...]``: one index tuple on both
    sides, buffers of one dtype, no init; else None."""
    store = block.body
    if block.init is not None or not isinstance(store, BufferStore) or not isinstance(store.value, BufferLoad):
        return None
    src = store.value.buffer
    if src is store.buffer or src.dtype != store.buffer.dtype or not same_index_copy(store):
        return None
    return store.buffer, src


def _round_trips(func: PrimFunc) -> "PrimFunc | None":
    """``func`` with one ``cache_inplace`` buffer undone: an intermediate ``S`` in a cache's
    scope and of the shape of ``D``, which copies ``S[i...] = D[i...]`` fill and copies
    ``D[i...] = S[i...]`` write back around the blocks updating it; those blocks then update
    ``D`` and the copies are removed. None when there is none."""
    params = {id(b) for b in func.buffers}
    blocks = list(func.blocks())
    forms = {id(b): _plain_copy(b) for b in blocks}
    for block in blocks:
        if forms[id(block)] is None:
            continue
        s_buf, d_buf = forms[id(block)]
        if id(s_buf) in params or not cache_scope(s_buf) or not _same_shape(s_buf, d_buf):
            continue
        trips = [b for b in blocks if forms.get(id(b)) in ((s_buf, d_buf), (d_buf, s_buf))]
        if any(forms[id(b)] == (d_buf, s_buf) for b in trips):
            return _retarget(func, trips, s_buf, d_buf)
    return None


def _retarget(func: PrimFunc, copies, src, dst) -> PrimFunc:
    """``func`` without the blocks ``copies``, every access of ``src`` made to ``dst``."""
    removed = {id(b) for b in copies}

    def pre(n):
        if isinstance(n, BlockRealize) and id(n.block) in removed:
            return EMPTY
        return None

    def region(r):
        return attrs.evolve(r, buffer=dst) if r.buffer is src else r

    def post(n):
        if isinstance(n, BufferLoad) and n.buffer is src:
            return BufferLoad(dst, n.indices)
        if isinstance(n, BufferStore) and n.buffer is src:
            return attrs.evolve(n, buffer=dst)
        if isinstance(n, Block):
            reads, writes = tuple(map(region, n.reads)), tuple(map(region, n.writes))
            allocs = tuple(b for b in n.alloc_buffers if b is not src)
            if reads != n.reads or writes != n.writes or allocs != n.alloc_buffers:
                return attrs.evolve(n, reads=reads, writes=writes, alloc_buffers=allocs)
        return None

    return prune(transform(func, post, pre))


def _same_shape(a, b) -> bool:
    from .probe import scalar_int

    if len(a.shape) != len(b.shape):
        return False
    for x, y in zip(a.shape, b.shape):
        if x is y:
            continue
        cx, cy = scalar_int(x, {}), scalar_int(y, {})
        if cx is None or cx != cy:
            return False
    return True


def _same_outputs(func: PrimFunc, rewritten: PrimFunc) -> bool:
    """Whether ``func`` (stores past its buffers placed by the layout) and ``rewritten`` leave
    the same arrays on random inputs, each function's storage starting as each of
    :data:`JUNK`; symbolic extents at :func:`.verify.cheap_binding`'s value and at 1, 2 and 3
    (where a tile's overrun falls changes with them)."""
    from .recognize.running import symbols
    from .verify import cheap_binding

    binding = cheap_binding(func)
    if binding is None:
        return False
    values = [binding] + ([v for v in SMALL_BINDINGS if v != binding] if symbols(func.buffers) else [])
    return all(_same_at(func, rewritten, value) for value in values)


SMALL_BINDINGS = (1, 2, 3)
"""Values of symbolic extents the rewrite is also checked at."""


def _same_at(func: PrimFunc, rewritten: PrimFunc, value: int) -> bool:
    from tir.interp import interpret
    from tir.interp_expr import nan_propagating_minmax

    from .verify import random_inputs

    try:
        arrays = random_inputs(func, np.random.default_rng(0), symbolic=value)
    except ValueError:
        return False
    for junk in JUNK:
        results = []
        for f in (func, rewritten):
            args = [a.copy() for a in arrays]
            try:
                with np.errstate(all="ignore"), nan_propagating_minmax():
                    interpret(f, *args, scratch_fill=junk, max_steps=STEPS, drop_strays=True)
            except Exception:  # noqa: BLE001 - a function the interpreter cannot run is not rewritten
                return False
            results.append(args)
        if not all(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc") for a, b in zip(*results)):
            return False
    return True


"""Stores past the end of a buffer's axis where TVM's code changes no element.

``blockize`` of a loop split by a factor that does not divide it gives the outer block the
split's whole last tile (``T.axis.spatial(6, ...)`` for an axis of 5) and keeps the tail's
``T.where`` on the outer loops only, so the inner block stores ``T_divide[5, j]`` of a
``(5, 9)`` output. Past the end of the outermost axis alone (every other index inside its
axis), such a store lies past all of the buffer's row-major storage: it changes no element
of it nor of any other buffer the function holds (buffers are disjoint), whatever value it
stores, and the iteration's loads change nothing either. The function then leaves every
element of every buffer as the same blocks restricted to the rows inside do, and that is
what :func:`clip_row_strays` makes: a predicate ``index < extent`` (and ``index >= 0`` where
the index can go below the start) on each such block, its declared domain narrowed to it.

Past an inner axis a store is no such thing: flattened, ``S[i, 9]`` of a row of 9 is
``S[i + 1, 0]``. It is restricted too only when every such store is dead, the next access
of the element it lands on (the loops run in order) being a store or none
(:func:`.coverage.strays_dead`, the rule TVM's tile copies pass by): ``blockize`` of a split
inner loop gives ``outer[i, 5]`` of rows of 5, which row ``i + 1`` then overwrites.

Only blocks whose body is the one store (no init, spatial variables) are restricted: the
store is the iteration's only effect. A store whose indices are not affine over known
ranges, or past an inner axis onto an element read later, leaves the function as it is,
and :func:`.coverage.partial_writes` refuses it.

:func:`.api.analyze` reads a function refused for writing outside a buffer once more
restricted so (after the block loops are moved out of their blocks, where the outer
block's variable meets the store), and says so in a warning when that reading names ops.
"""
from __future__ import annotations

import attrs

from tir.expr import GE, LT, IntImm
from tir.function import PrimFunc
from tir.functor import remembered, substitute, transform_stmts
from tir.stmt import BlockRealize, BufferStore, IterKind

from .affine import const_of, equal_extents
from .block_loops import _bounded
from .coverage import block_ranges, block_realizes, clippable, index_range, strays_dead
from .predicates import conjunction
from .probe import shape_vars


def _inside(index, axis, ranges: dict, realize: BlockRealize, loops) -> bool:
    """``index`` provably stays inside ``[0, axis)``: over the constant ranges, or, on an
    axis of a symbolic extent, as a block variable bound to a loop over that very extent."""
    size = const_of(axis)
    if size is not None:
        span = index_range(index, ranges)
        return span is not None and 0 <= span[0] and span[1] < size
    ivars = {iv.var: (iv, v) for iv, v in zip(realize.block.iter_vars, realize.iter_values)}
    if index not in ivars:
        return False
    iv, value = ivars[index]
    loop = next((lp for lp in loops if lp.loop_var is value), None)
    return loop is not None and const_of(loop.min) == 0 and equal_extents(loop.extent, axis) \
        and const_of(iv.dom.min) == 0 and equal_extents(iv.dom.extent, axis)


def _row_clip(realize: BlockRealize, loops, func: PrimFunc, symbols: frozenset):
    """The predicate restricting ``realize`` to the elements inside its store's buffer, or
    None when its store passes no end of an axis, or passes an inner axis where what it
    stores there may be seen (:func:`.coverage.strays_dead`)."""
    block = realize.block
    store = block.body
    if block.init is not None or not isinstance(store, BufferStore) or not block.iter_vars:
        return None
    if any(iv.kind != IterKind.SPATIAL for iv in block.iter_vars):
        return None
    buffer = store.buffer
    if buffer.strides or not store.indices or len(store.indices) != len(buffer.shape):
        return None
    ranges = block_ranges(realize, loops)
    if ranges is None:
        return None
    past = []
    for index, axis in zip(store.indices, buffer.shape):
        size = const_of(axis)
        if size is None:
            if not _inside(index, axis, ranges, realize, loops):
                return None
            continue
        span = index_range(index, ranges)
        if span is None:
            return None
        first, last = span
        if 0 <= first and last < size:
            continue
        if not clippable(index, ranges) or first > last or last < 0 or first >= size:
            return None  # no element inside on this axis: not a tile's tail
        past.append((index, first, last, size))
    if not past:
        return None
    if any(index is not store.indices[0] for index, _, _, _ in past) and not strays_dead(func, store, symbols):
        return None  # past an inner axis: flattened, it lands on an element something reads
    bind = {iv.var: v for iv, v in zip(block.iter_vars, realize.iter_values)}
    terms = []
    for index, first, last, size in past:
        index = substitute(index, bind)
        if first < 0:
            terms.append(GE(index, IntImm(index.dtype, 0)))
        if last >= size:
            terms.append(LT(index, IntImm(index.dtype, size)))
    return conjunction(terms)


@remembered(1)  # analyze's reading clips a function, then names the buffers it clipped
def _clips(func: PrimFunc) -> dict:
    """{id of a block realize: (its restricting predicate, its store)} (:func:`_row_clip`)."""
    clips = {}
    symbols = frozenset(shape_vars(func))
    for realize, loops in block_realizes(func.body):
        clip = _row_clip(realize, loops, func, symbols)
        if clip is not None:
            clips[id(realize)] = (clip, realize.block.body)
    return clips


def row_strays(func: PrimFunc) -> list:
    """The stores of ``func`` that :func:`clip_row_strays` restricts."""
    return [store for _, store in _clips(func).values()]


def clip_row_strays(func: PrimFunc) -> PrimFunc:
    """``func`` with every single-store block that stores past an end of an axis of its
    buffer, changing no element there, restricted to the elements inside (module
    docstring); ``func`` itself when there is none."""
    clips = _clips(func)
    if not clips:
        return func

    def post(n):
        if not isinstance(n, BlockRealize) or id(n) not in clips:
            return None
        predicate = conjunction([n.predicate, clips[id(n)][0]])
        ivars = _bounded(n.block.iter_vars, tuple(n.iter_values), predicate)
        return attrs.evolve(n, predicate=predicate, block=attrs.evolve(n.block, iter_vars=ivars))

    return transform_stmts(func, post)

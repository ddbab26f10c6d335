"""Vector code run lane by lane, and thread launches run as loops, for the engines.

TVM's ``VectorizeLoop`` turns a ``T.vectorized`` loop into vector expressions: ``T.Ramp(base,
stride, lanes)`` indices, ``T.Broadcast(value, lanes)`` operands and stores of ``lanes``
elements at once (``o[i:i + 4] = ...``). A vectorised loop means what the serial loop means,
so :func:`devectorize` gives the engines that loop back: each vector store becomes a loop over
its lanes storing lane ``l`` of every operand, and a let bound to a vector is substituted into
its uses first. A buffer of vector elements (``T.alloc_local((8,), "float32x4")``) becomes a
buffer of scalars with one more, innermost dimension of the lanes (the same bytes, so a scalar
view of its storage reads the same elements). The IR the parser and printer see keeps the
vectors.

A thread launch (``T.launch_thread("threadIdx.x", 32)``, TVM's form of a bound loop after its
lowering passes) runs as the loop it was bound from, one thread after the other: right when the
threads share nothing, which :func:`for_engines` checks (no shared-scope storage written and no
barrier under a launch; such cooperative code is refused, not run wrongly).
"""
from __future__ import annotations

import functools

import attrs

from . import dtype as dt
from . import expr as E
from . import stmt as S
from .buffer import Buffer
from .function import PrimFunc
from .functor import post_order_visit, substitute, transform
from .interp_data import InterpError


class EngineFormError(InterpError):
    """Lowered code the engines cannot run: a vector form not run lane by lane, or threads that
    cannot run as loops."""


def for_engines(func: PrimFunc) -> PrimFunc:
    """``func`` as the engines run it: thread launches as loops, vector stores lane by lane
    (an :class:`EngineFormError` naming the function when it cannot be)."""
    try:
        return devectorize(_launches_as_loops(func))
    except EngineFormError as err:
        raise EngineFormError(f"{func.name or 'prim_func'}: {err}") from None


@functools.lru_cache(maxsize=256)
def _launches_as_loops(func: PrimFunc) -> PrimFunc:
    launches = []
    post_order_visit(func.body, lambda n: launches.append(n) if isinstance(n, S.LaunchThread) else None)
    if not launches:
        return func
    for launch in launches:
        _check_threads_share_nothing(launch)

    def post(n):
        if isinstance(n, S.LaunchThread):
            return S.For(n.var, E.IntImm(n.extent.dtype, 0), n.extent, S.ForKind.THREAD_BINDING, n.body,
                         thread_binding=n.tag)
        return None

    return PrimFunc(func.params, func.buffer_map, transform(func.body, post), func.attrs)


def _check_threads_share_nothing(launch) -> None:
    def visit(n):
        if isinstance(n, S.BufferStore) and n.buffer.scope.startswith("shared"):
            raise EngineFormError(f"threads of {launch.tag} share buffer {n.buffer.name!r} (scope "
                              f"{n.buffer.scope}): cooperative thread code is not run as a loop")
        if isinstance(n, E.Call) and n.op in ("tvm_storage_sync", "tvm_thread_allreduce"):
            raise EngineFormError(f"threads of {launch.tag} synchronise ({n.op}): not run as a loop")

    post_order_visit(launch.body, visit)


def is_vector(n) -> bool:
    """Whether node ``n`` is vector code: a Ramp, a Broadcast or a buffer of vector elements."""
    return isinstance(n, (E.Ramp, E.Broadcast)) or isinstance(n, Buffer) and n.dtype.lanes > 1


def has_vectors(node) -> bool:
    """Whether ``node`` holds vector code (:func:`is_vector`)."""
    found = []
    post_order_visit(node, lambda n: found.append(n) if not found and is_vector(n) else None)
    return bool(found)


@functools.lru_cache(maxsize=256)
def devectorize(func: PrimFunc) -> PrimFunc:
    """``func`` with every vector store run as a loop over its lanes (``func`` itself when it
    holds no vectors)."""
    if not has_vectors(func.body):
        return func
    if any(b.dtype.lanes > 1 for b in func.buffer_map.values()):
        raise EngineFormError("a parameter buffer of vector elements is not supported")
    scalar: dict = {}  # id(buffer of vectors) -> its buffer of scalars

    def of_scalars(b: Buffer) -> Buffer:
        if id(b) not in scalar:
            if b.strides or b.elem_offset is not None:
                raise EngineFormError(f"buffer {b.name!r} of {b.dtype} elements is not compact")
            lanes = b.dtype.lanes
            scalar[id(b)] = attrs.evolve(b, dtype=E.with_lanes(b.dtype, 1),
                                         shape=tuple(b.shape) + (E.IntImm(dt.int64, lanes),))
        return scalar[id(b)]

    body = transform(func.body, _drop_vector_lets)
    body = transform(body, lambda n: _store_by_lane(n, of_scalars))
    body = transform(body, lambda n: scalar.get(id(n)) if isinstance(n, Buffer) else None)
    return PrimFunc(func.params, func.buffer_map, body, func.attrs)


def _drop_vector_lets(n):
    if isinstance(n, (S.LetStmt, E.Let)) and n.var.dtype.lanes > 1:
        return substitute(n.body, {n.var: n.value})
    return None


def _store_by_lane(n, of_scalars):
    if not isinstance(n, S.BufferStore):
        return None
    lanes = max([i.dtype.lanes for i in n.indices] + [n.value.dtype.lanes])
    if lanes == 1:
        return None
    lane = E.Var("lane", dt.int32)
    buf, indices = _access(n.buffer, n.indices, lane, lanes, of_scalars)
    store = S.BufferStore(buf, lane_of(n.value, lane, lanes, of_scalars), indices)
    return S.For(lane, E.IntImm(dt.int32, 0), E.IntImm(dt.int32, lanes), S.ForKind.SERIAL, store)


def _access(buf: Buffer, indices, lane, lanes, of_scalars) -> tuple:
    """(buffer, indices) of lane ``lane`` of an access: an element of a buffer of vectors is
    the row of its lanes in the buffer of scalars."""
    if buf.dtype.lanes > 1:
        if buf.dtype.lanes != lanes or any(i.dtype.lanes > 1 for i in indices):
            raise EngineFormError(f"buffer {buf.name!r} of {buf.dtype} elements accessed with {lanes} lanes")
        return of_scalars(buf), tuple(indices) + (lane,)
    return buf, tuple(lane_of(i, lane, lanes, of_scalars) for i in indices)


def lane_of(e, lane: E.Var, lanes: int, of_scalars=None):
    """Lane ``lane`` of the vector expression ``e`` (a scalar expression is every lane)."""
    d = e.dtype
    if d.lanes == 1:
        return e
    if d.lanes != lanes:
        raise EngineFormError(f"vectors of {d.lanes} and {lanes} lanes in one store")
    if isinstance(e, E.Ramp):
        at = lane if e.base.dtype == dt.int32 else E.Cast(e.base.dtype, lane)
        unit = isinstance(e.stride, E.IntImm) and e.stride.value == 1
        return E.Add(e.base, at if unit else E.Mul(e.stride, at))
    if isinstance(e, E.Broadcast):
        return e.value
    if isinstance(e, E.BufferLoad):
        if e.buffer.dtype.lanes > 1 and of_scalars is None:
            raise EngineFormError(f"buffer {e.buffer.name!r} of {e.buffer.dtype} elements")
        return E.BufferLoad(*_access(e.buffer, e.indices, lane, lanes, of_scalars))

    def each(x):
        return lane_of(x, lane, lanes, of_scalars)

    if isinstance(e, E.BinaryOp):
        return type(e)(each(e.a), each(e.b))
    if isinstance(e, E.Not):
        return E.Not(each(e.a))
    if isinstance(e, E.Select):
        return E.Select(each(e.condition), each(e.true_value), each(e.false_value))
    if isinstance(e, E.Cast):
        return E.Cast(E.with_lanes(d, 1), each(e.value))
    if isinstance(e, E.Call):
        return E.Call(E.with_lanes(d, 1), e.op, [each(a) for a in e.args])
    raise EngineFormError(f"the engines cannot run the vector expression {type(e).__name__} ({d}) lane by lane")

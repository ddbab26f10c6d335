"""Packed buffers read back as logical tensors (TVM's ``transform_layout`` form).

TVM's ``transform_layout`` (NCHW -> NCHW4c, OIHW -> OIHW4i4o) keeps the blocks iterating
the logical axes and rewrites every access ``x[n, c, h, w]`` to ``x[n, c // 4, h, w, c % 4]``.
Such a function is the original op on logical tensors, stored packed: :func:`unpack`
undoes the packing (one logical dimension ``c`` of extent ``blocks * 4`` per
``(e // k, e % k)`` pair), so every recognizer sees the op it knows, and
:func:`packed_layout` names the layout of a packed operand from its logical one.

A buffer is unpacked when some access shows the pair (a unit dimension read at 0 may
stand for a single block: ``c // 4`` folded to 0), its sub-axis dimensions are the
trailing ones and its logical rank is at least 4. Every access is then read as
``outer * k + inner``, which is exact for every in-bounds access whatever the index forms
(the sub-axis index lies in ``[0, k)``): the unpacked function computes exactly what the
packed one does, each packed buffer's elements renamed. Whether that reading is the op's
(and not a genuine 5-D tensor's) is decided by the caller (:mod:`.packed_ops`).
"""
from __future__ import annotations

import itertools

import attrs

from tir.buffer import Buffer, BufferRegion, Range
from tir.expr import Add, BufferLoad, FloorDiv, FloorMod, IntImm, Mul, Sub, as_int
from tir.function import PrimFunc
from tir.functor import post_order_stmts, post_order_visit, transform
from tir.stmt import BufferStore

MIN_LOGICAL_RANK = 4


@attrs.frozen
class Split:
    """A logical dimension held in two dimensions of a packed buffer."""

    outer: int
    """The dimension holding the blocks (the logical dimension's position)."""
    inner: int
    """The trailing dimension holding the sub-axis."""
    factor: int
    unit: bool = False
    """A single block, read at 0 (TVM folds ``c // 4`` to 0 and ``c % 4`` to ``c``)."""


def _terms(e, sign: int = 1) -> list:
    """``e`` as signed terms of its sums and differences: [(sign, term), ...]."""
    if isinstance(e, Add):
        return _terms(e.a, sign) + _terms(e.b, sign)
    if isinstance(e, Sub):
        return _terms(e.a, sign) + _terms(e.b, -sign)
    return [(sign, e)]


def _quotient(outer, inner, k: int) -> "tuple | None":
    """(x, other terms) when ``inner`` is ``x % k`` and ``outer`` is ``x // k`` plus other
    terms (``c // 4 - 2``; ``g * 2 + rc // 4`` in a grouped convolution), else None."""
    if not isinstance(inner, FloorMod) or as_int(inner.b) != k:
        return None
    terms = _terms(outer)
    for j, (sign, t) in enumerate(terms):
        if sign == 1 and isinstance(t, FloorDiv) and as_int(t.b) == k and t.a == inner.a:
            return inner.a, terms[:j] + terms[j + 1:]
    return None


def _sum(terms: list, like):
    """The signed ``terms`` added up again."""
    out = None
    for sign, t in terms:
        if out is None:
            out = t if sign == 1 else Sub(IntImm(like.dtype, 0), t)
        else:
            out = Add(out, t) if sign == 1 else Sub(out, t)
    return out


def _logical(indices, s: Split):
    """The logical index of ``indices`` along split ``s``: ``x + k * rest`` for
    ``[x // k + rest, ..., x % k]``, else ``outer * k + inner`` (exact for every in-bounds
    access: the sub-axis index lies in ``[0, k)``)."""
    outer, inner = indices[s.outer], indices[s.inner]
    if as_int(outer) == 0:
        return inner
    q = _quotient(outer, inner, s.factor)
    if q is None:
        return Add(Mul(outer, IntImm(outer.dtype, s.factor)), inner)
    x, rest = q
    if not rest:
        return x
    consts = [as_int(t) for _, t in rest]
    if None in consts:
        return Add(x, Mul(_sum(rest, x), IntImm(x.dtype, s.factor)))
    off = s.factor * sum(sign * c for (sign, _), c in zip(rest, consts))
    return x if off == 0 else Add(x, IntImm(x.dtype, off)) if off > 0 else Sub(x, IntImm(x.dtype, -off))


def _pair(indices, shape, a: int) -> "Split | None":
    """The split at dimension ``a`` (``x // k + rest`` there, ``x % k`` later), or None."""
    if as_int(shape[a]) is None:
        return None
    for b in range(a + 1, len(indices)):
        k = as_int(shape[b])
        if k and k > 1 and _quotient(indices[a], indices[b], k) is not None:
            return Split(a, b, k)
    return None


def _unit_splits(buf: Buffer, accesses: list, splits: tuple) -> list:
    """Every way unit dimensions read at 0 may hold the single blocks of the trailing
    dimensions no split holds (one or two of them: ``OIHW4i4o`` with 4 input and 4 output
    channels has no pair at all), a tuple of Splits each. Several when other unit
    dimensions are read at 0 too (a kernel width of 1 beside a single block of channels)."""
    rank, taken = len(buf.shape), {s.outer for s in splits} | {s.inner for s in splits}
    out = []
    for u in (1, 2):
        logical = rank - len(splits) - u
        free = [d for d in range(max(logical, 0), rank) if d not in taken]
        if logical < MIN_LOGICAL_RANK or len(free) != u:
            continue
        units = [d for d in range(logical) if d not in taken and as_int(buf.shape[d]) == 1
                 and all(as_int(idx[d]) == 0 for idx in accesses)]
        ks = [as_int(buf.shape[f]) for f in free]
        if any(not k or k == 1 for k in ks):
            continue
        for outers in itertools.permutations(units, u):
            out.append(tuple(Split(o, f, k, unit=True) for o, f, k in zip(outers, free, ks)))
    return out


def _split_options(buf: Buffer, accesses: list, units: bool) -> list:
    """The readings of ``buf`` as a packed buffer: one tuple of splits each (from any access
    showing a pair; with ``units``, also a unit split, one reading per unit dimension that
    may hold it); [] when none makes it a packed buffer."""
    rank = len(buf.shape)
    found = {s for idx in accesses for s in (_pair(idx, buf.shape, a) for a in range(rank)) if s is not None}
    splits = tuple(sorted(found, key=lambda s: s.outer))
    if len({s.outer for s in splits}) != len(splits) or len({s.inner for s in splits}) != len(splits):
        return []
    options = [splits]
    if units:
        extra = _unit_splits(buf, accesses, splits)
        options = [tuple(sorted(splits + e, key=lambda s: s.outer)) for e in extra] or options
    return [o for o in options if _packed(o, rank)]


def _packed(splits: tuple, rank: int) -> bool:
    inners = sorted(s.inner for s in splits)
    if not splits or inners != list(range(rank - len(splits), rank)) or rank - len(splits) < MIN_LOGICAL_RANK:
        return False
    return not any(s.outer >= rank - len(splits) for s in splits)


def _splits(buf: Buffer, accesses: list, units: bool) -> tuple:
    """The splits of ``buf`` when exactly one reading makes it a packed buffer; () otherwise."""
    options = _split_options(buf, accesses, units)
    return options[0] if len(options) == 1 else ()


def _accesses(func: PrimFunc) -> dict:
    """``{id(buffer): (buffer, [indices...])}`` over every load and store."""
    found: dict = {}

    def visit(n):
        if isinstance(n, (BufferLoad, BufferStore)):
            found.setdefault(id(n.buffer), (n.buffer, []))[1].append(tuple(n.indices))

    post_order_visit(func.body, visit)
    return found


def _stored(func: PrimFunc) -> set:
    found = set()
    post_order_stmts(func.body, lambda n: found.add(id(n.buffer)) if isinstance(n, BufferStore) else None)
    return found


MAX_READINGS = 24


def packed_readings(func: PrimFunc) -> "tuple[list, bool]":
    """(every reading of ``func``'s packed buffers as ``{buffer: splits}``, whether the
    packing is shown). A ``c // k``, ``c % k`` pair shows it, and so does a store at 0 in
    a unit dimension (TVM's lowering stores through its iteration variables; only the
    simplified ``c // 4`` of a single block of channels is 0; see :func:`paired` for
    functions a scheduler rebuilt). A unit dimension read at 0
    only may also be a broadcast tensor with a unit dimension. A buffer with several unit
    dimensions read at 0 has one reading per dimension that may hold the single block;
    beyond MAX_READINGS readings, none is returned (``[{}]``: nothing decided)."""
    found = _accesses(func).values()
    shown = _paired(found)
    per = [(buf, _split_options(buf, accesses, True)) for buf, accesses in found]
    per = [(buf, opts) for buf, opts in per if opts]
    readings = [{}]
    for buf, opts in per:
        readings = [{**r, buf: o} for r in readings for o in opts]
        if len(readings) > MAX_READINGS:
            return [None], shown
    stored = _stored(func)
    return readings, shown or any(id(b) in stored for b, _ in per)


def paired(func: PrimFunc) -> bool:
    """Whether a ``c // k``, ``c % k`` pair shows a packing in ``func``: the only evidence
    in a function whose blocks a scheduler rebuilt (dlight drops the variable of every unit
    axis, so a store at 0 may be a batch of 1 as well as a single block of channels)."""
    return _paired(_accesses(func).values())


def _paired(accesses) -> bool:
    return any(_splits(buf, acc, False) for buf, acc in accesses)


def packed_buffers(func: PrimFunc) -> "tuple[dict, bool]":
    """(``{buffer: splits}`` for every buffer of ``func`` stored packed, whether the
    packing is shown), when one reading exists (:func:`packed_readings`); ({}, ...) else."""
    readings, shown = packed_readings(func)
    return (readings[0] if len(readings) == 1 and readings[0] is not None else {}), shown


def _logical_shape(buf: Buffer, splits: tuple) -> tuple:
    shape = list(buf.shape)
    for s in splits:
        shape[s.outer] = IntImm(shape[s.outer].dtype, as_int(shape[s.outer]) * s.factor)
    return tuple(shape[:len(shape) - len(splits)])


def _logical_indices(indices, splits: tuple) -> tuple:
    out = list(indices)
    for s in splits:
        out[s.outer] = _logical(indices, s)
    return tuple(out[:len(out) - len(splits)])


def _logical_region(region: tuple, new: Buffer, splits: tuple) -> "tuple | None":
    """A point region stays a point; a region covering a whole split covers it logically."""
    out = list(region)
    for s in splits:
        ro, ri = region[s.outer], region[s.inner]
        if as_int(ro.min) == 0 and as_int(ro.extent) == 1:
            out[s.outer] = ri
        elif as_int(ro.extent) == 1 and as_int(ri.extent) == 1:
            out[s.outer] = Range(_logical((ro.min, ri.min), Split(0, 1, s.factor)), ro.extent)
        else:
            out[s.outer] = Range(IntImm(ro.min.dtype, 0), new.shape[s.outer])
    return tuple(out[:len(out) - len(splits)])


def unpack_all(func: PrimFunc) -> "list | None":
    """Every reading of ``func`` on logical buffers (:func:`unpack` for each of
    :func:`packed_readings`); None when no buffer is packed, [] when too many readings."""
    readings, shown = packed_readings(func)
    if readings == [{}]:
        return None
    if readings == [None]:
        return []
    return [_unpack(func, packed, shown) for packed in readings]


def unpack(func: PrimFunc) -> "tuple[PrimFunc, dict, bool] | None":
    """(the function on logical buffers, ``{buffer name: splits}``, whether a ``c // k``,
    ``c % k`` pair shows the packing), or None when no buffer is packed or the packing
    has several readings."""
    got = unpack_all(func)
    return got[0] if got and len(got) == 1 else None


def _unpack(func: PrimFunc, packed: dict, shown: bool) -> tuple:
    new = {id(b): attrs.evolve(b, shape=_logical_shape(b, s)) for b, s in packed.items()}
    splits = {id(b): s for b, s in packed.items()}

    def pre(n):
        if isinstance(n, Buffer) and id(n) in new:
            return new[id(n)]
        if isinstance(n, BufferLoad) and id(n.buffer) in new:
            idx = _logical_indices(n.indices, splits[id(n.buffer)])
            return BufferLoad(new[id(n.buffer)], tuple(rewrite(i) for i in idx))
        if isinstance(n, BufferStore) and id(n.buffer) in new:
            idx = _logical_indices(n.indices, splits[id(n.buffer)])
            return BufferStore(new[id(n.buffer)], rewrite(n.value), tuple(rewrite(i) for i in idx))
        if isinstance(n, BufferRegion) and id(n.buffer) in new:
            region = _logical_region(n.region, new[id(n.buffer)], splits[id(n.buffer)])
            return BufferRegion(new[id(n.buffer)], tuple(rewrite(r) for r in region))
        return None

    def rewrite(n):
        return transform(n, lambda m: None, pre)

    logical = rewrite(func)
    held = tuple((k, tuple(sp.outer for sp in packed[b])) for k, b in enumerate(func.buffers) if b in packed)
    logical = attrs.evolve(logical, attrs={**logical.attrs, SPLIT_DIMS: held})
    return logical, {b.name: s for b, s in packed.items()}, shown


SPLIT_DIMS = "opinfo.split_dims"
"""Attribute of an unpacked function: ``((parameter position, (logical dimensions held
split, ...)), ...)``. A recognizer may need it where the logical loops cannot say which axis
is the channel one (:mod:`.recognize.pool_window`)."""


def split_dims(func: PrimFunc, buffer) -> tuple:
    """The logical dimensions of parameter ``buffer`` of an unpacked ``func`` that its
    packed form held split (``c`` of ``NCHW4c``); () when none or not a parameter."""
    at = next((k for k, b in enumerate(func.buffers) if b is buffer), None)
    return next((tuple(dims) for k, dims in func.attrs.get(SPLIT_DIMS, ()) if k == at), ())


def packed_layout(logical: str, splits: tuple) -> "str | None":
    """``NCHW`` with the splits of ``x[n, c // 4, h, w, c % 4]`` -> ``NCHW4c``; None when
    ``logical`` is not one upper-case letter per logical dimension."""
    rank = len(logical) + len(splits)
    if not logical.isalpha() or not logical.isupper() or len(set(logical)) != len(logical):
        return None
    out = list(logical) + [None] * len(splits)
    for s in splits:
        if s.outer >= len(logical) or s.inner >= rank:
            return None
        out[s.inner] = f"{s.factor}{logical[s.outer].lower()}"
    return None if None in out else "".join(out)


LAYOUT_OF = {"data_layout": "data", "layout": "data", "kernel_layout": "weight", "out_layout": "output"}
"""Layout attribute -> the role of the operand it describes."""

COPIES = frozenset({"reshape", "flatten", "expand_dims", "squeeze", "nn.batch_flatten", "broadcast_to",
                    "permute_dims", "strided_slice", "layout_transform"})
"""Ops copying elements of one input: TVM's ``layout_transform`` from a packed layout
(``out[n, c, h, w] = x[n, c // 4, h, w, c % 4]``) reads as one of them once unpacked, so
they are claimed only when their result is packed too (a layout_transform's result is
indexed by its own iteration variables, never split)."""


def _operand(op, role: str):
    if role == "output":
        return op.output
    return next((o for o in op.operands if o.role == role), None)


def buffer_shapes(func: PrimFunc) -> dict:
    """``{buffer name: constant shape or None}`` of every buffer accessed in ``func``."""
    return {b.name: tuple(as_int(e) for e in b.shape) for b, _ in _accesses(func).values()}


def _left_unpacked(op, packed: dict, shapes: dict) -> bool:
    """Whether a non-weight operand of ``op`` was left logical although a packing of
    another operand fits it: a layout change next to the op (a fused
    ``layout_transform``), not a re-laid-out op, whose buffers are all packed alike."""
    ones = [(len(shapes.get(name) or ()), s[0]) for name, s in packed.items() if len(s) == 1]
    for o in [*op.operands, op.output]:
        shape = shapes.get(o.buffer) if o is not None and o.role != "weight" else None
        if o is None or o.buffer in packed or not shape:
            continue
        if any(rank == len(shape) and shape[s.outer] and shape[s.outer] % s.factor == 0 for rank, s in ones):
            return True
    return False


def repack(op, packed: dict, shapes: dict):
    """``op`` (recognized on the unpacked function, whose logical buffer shapes are
    ``shapes``) with the layouts of its packed operands named packed, or None when a layout
    cannot be named or the packing is not that of a re-laid-out op."""
    if op.name in COPIES and (op.output is None or op.output.buffer not in packed or op.name == "layout_transform"):
        return None
    if _left_unpacked(op, packed, shapes):
        return None
    new = dict(op.attrs.items())
    for key, role in LAYOUT_OF.items():
        if key not in new:
            continue
        operand = _operand(op, role)
        if operand is None:
            return None
        if operand.buffer in packed:
            new[key] = packed_layout(new[key], packed[operand.buffer])
            if new[key] is None:
                return None
    return attrs.evolve(op, attrs=new)

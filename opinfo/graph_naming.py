"""Naming ops whose legalization dropped an operand, from the graph around the call.

The PrimFunc alone cannot tell ``full`` from ``full_like``, ``eye`` from ``eye_like``, or
``collapse_sum_like`` from ``sum``: the dropped operand only lent its shape. With the
context of ``main`` (:mod:`.graph_context`) some of them can be named:

- the ``*_like`` form when exactly one tensor parameter of ``main`` is unused (by every
  binding and the return value) and its shape equals the call's output shape:
  ``full_like`` (fill value neither 0 nor 1), ``eye_like``, and ``collapse_sum_like`` for a
  function recognised as ``sum`` whose reduced axes are exactly those that collapse the
  data to that parameter's shape. ``dtype`` is None when the output has the parameter's
  dtype (what Relax records without an explicit ``dtype``), else the output dtype.
- the plain form (``full``, ``eye``) only when no tensor of ``main`` other than the call's
  own result (and values computed from it) can have the output's shape: otherwise it may
  be a ``*_like`` of that tensor.

- ``masked_fill``: a fill whose only use is the second operand of a graph-level ``where``
  (left in ``main`` when its shapes are symbolic), the other two a bool condition and a
  tensor of the fill's shape (Relax builds ``masked_fill`` as ``where(mask, full_like(x,
  v), x)``), with any fill value.

Never named, since the loops and the graph are the same for several ops: a fill with 0 or
1 (``zeros``/``ones``/``full(0|1)`` and their ``_like`` forms), a one-element fill (also an
``arange`` or a one-point window), integer fills (the Relax value may have been a float
truncated by the cast). A PrimFunc called several times is named only when every call
site gives the same answer. The operand standing for the dropped ``main`` parameter has
``param`` None and ``buffer`` the parameter's name (it is no buffer of the PrimFunc).
"""
from __future__ import annotations

import attrs

from tir.function import PrimFunc
from tir.relax import OpCall, RVar, TensorType

from .graph_context import FuncContext, dims_key
from .info import OpInfo, Operand
from .recognize.common import shape_of
from .recognize.fill import Filled, recognize_fill


def name_in_context(func: PrimFunc, ops: tuple, ctx: "FuncContext | None") -> tuple:
    """``ops`` (what the PrimFunc alone gave) renamed or completed with what ``main``
    shows; ``ops`` unchanged when the context decides nothing."""
    if ctx is None or not ctx.calls:
        return ops
    if len(ops) == 1 and ops[0].name == "sum":
        found = _agreed([_collapse_like(func, ops[0], site, ctx) for site in ctx.calls])
        return (found,) if found is not None else ops
    if ops:
        return ops
    made = recognize_fill(func)
    if made is None:
        return ops
    found = _agreed([_masked_fill(func, made, site) for site in ctx.calls])
    if found is None:
        found = _agreed([_creation(func, made, site, ctx) for site in ctx.calls])
    return (found,) if found is not None else ops


def sum_convention(func: PrimFunc, ops: tuple) -> tuple:
    """A lone ``sum`` that ``collapse_sum_to`` explains as well (keepdims, or only leading
    axes summed: the same loops, compute tag ``x_red`` included) marked as named by
    convention (``assumed`` holds ``"op"``): frameworks' importers write ``sum``
    (``collapse_sum_to`` is a gradient op), so it stands inside a network; a function
    lowered on its own abstains. The graph may still name it ``collapse_sum_like``."""
    if len(ops) != 1 or ops[0].name != "sum" or len(ops[0].operands) != 1 or ops[0].output is None:
        return ops
    op = ops[0]
    bufs = {b.name: b for b in func.buffers}
    data, out = bufs.get(op.operands[0].buffer), bufs.get(op.output.buffer)
    if data is None or out is None or not collapses_to(op, dims_key(data.shape), dims_key(out.shape)):
        return ops
    return (attrs.evolve(op, assumed=tuple(op.assumed) + ("op",)),)


def _agreed(answers: list) -> "OpInfo | None":
    if not answers or answers[0] is None or any(a != answers[0] for a in answers[1:]):
        return None
    return answers[0]


def _tensor(t) -> "TensorType | None":
    return t if isinstance(t, TensorType) and t.shape is not None else None


def _may_have_shape(t, shape: tuple) -> bool:
    """Whether a tensor of type ``t`` (None: unknown) can have the shape ``shape``."""
    if not isinstance(t, TensorType):
        return True
    if t.shape is None:
        return t.ndim in (-1, len(shape))
    key = dims_key(t.shape)
    if key is None or len(key) != len(shape):
        return key is None
    # a symbolic extent can equal anything: only two different constants tell shapes apart
    return all(not (isinstance(a, int) and isinstance(b, int) and a != b) for a, b in zip(key, shape))


def _like_param(shape: tuple, ctx: FuncContext) -> "tuple | None":
    """(name, TensorType) of the one unused parameter of ``main`` with exactly ``shape``;
    None when there is none, several, or one whose shape is not known."""
    hits = []
    for name, t in ctx.unused:
        t = _tensor(t)
        if t is None:
            return None  # an unused parameter of unknown shape could be the one
        if dims_key(t.shape) == shape:
            hits.append((name, t))
    return hits[0] if len(hits) == 1 else None


def _out_type(func: PrimFunc, site) -> "TensorType | None":
    """The call's output type, when it is one tensor agreeing with the PrimFunc's output."""
    t = _tensor(site.out_type)
    buf = func.buffers[-1] if func.buffers else None
    if t is None or buf is None or str(t.dtype) != str(buf.dtype) or len(t.shape) != len(buf.shape):
        return None
    key = dims_key(t.shape)
    mine = dims_key(buf.shape)
    if key is None or mine is None:
        return None
    if any(isinstance(a, int) != isinstance(b, int) or (isinstance(a, int) and a != b) for a, b in zip(key, mine)):
        return None
    return t


def _creation(func: PrimFunc, made, site, ctx: FuncContext) -> "OpInfo | None":
    out_t = _out_type(func, site)
    if out_t is None or site.args:
        return None
    shape = dims_key(out_t.shape)
    buf = func.buffers[0]
    output = Operand("output", buf.name, 0)
    dtype = str(buf.dtype)
    if isinstance(made, Filled) and (made.value in (0.0, 1.0) or _one_element(shape)):
        return None
    like = _like_param(shape, ctx)
    if like is not None:
        name, t = like
        dt = None if str(t.dtype) == dtype else dtype
        operand = Operand("data", name, None)
        if isinstance(made, Filled):
            return OpInfo("full_like", {"fill_value": made.value, "dtype": dt}, (operand,), output)
        return OpInfo("eye_like", {"k": made.k, "dtype": dt}, (operand,), output)
    if any(_may_have_shape(t, shape) for t in site.others):
        return None
    dims = shape_of(buf)
    if isinstance(made, Filled):
        return OpInfo("full", {"shape": dims, "fill_value": made.value, "dtype": dtype}, (), output)
    return OpInfo("eye", {"n": dims[0], "m": dims[1], "k": made.k, "dtype": dtype}, (), output)


def _masked_fill(func: PrimFunc, made, site) -> "OpInfo | None":
    """``masked_fill(x, mask, value)``, which Relax writes as ``where(mask, full_like(x,
    value), x)``: the fill's only use is as the second operand of a graph-level ``where``
    (left unlegalized: a symbolic broadcast) whose condition is a bool tensor and whose
    third operand has the fill's shape and dtype. The operands are ``main``'s variables
    (``param`` None)."""
    out_t = _out_type(func, site)
    if not isinstance(made, Filled) or site.args or out_t is None or len(site.consumers) != 1:
        return None
    where, types = site.consumers[0]
    if not isinstance(where, OpCall) or where.op != "where" or where.attrs or len(where.args) != 3:
        return None
    cond, fill, x = where.args
    if fill is not site.var or not isinstance(cond, RVar) or not isinstance(x, RVar) or x is fill or cond is fill:
        return None
    cond_t, x_t = _tensor(types[0]), _tensor(types[2])
    if cond_t is None or x_t is None or str(cond_t.dtype) != "bool" or str(x_t.dtype) != str(out_t.dtype):
        return None
    if dims_key(x_t.shape) != dims_key(out_t.shape):
        return None
    buf = func.buffers[0]
    return OpInfo("masked_fill", {"value": made.value, "dtype": str(buf.dtype)},
                  (Operand("data", x.name, None), Operand("mask", cond.name, None)), Operand("output", buf.name, 0))


def _one_element(shape: tuple) -> bool:
    return all(isinstance(d, int) and d == 1 for d in shape)


def _reduced(axis, rank: int) -> "set | None":
    if axis is None:
        return set(range(rank))
    axes = [axis] if isinstance(axis, int) else list(axis)
    if any(not isinstance(a, int) or isinstance(a, bool) or not -rank <= a < rank for a in axes):
        return None
    return {a % rank for a in axes}


def collapses_to(op: OpInfo, src: "tuple | None", target: "tuple | None") -> bool:
    """Whether ``op`` (a ``sum``) of data shaped ``src`` is ``collapse_sum_to(data, target)``:
    it sums exactly the leading axes ``target`` lacks and those ``target`` holds at 1 (axes of
    extent 1 either way), and keeps the others (shapes as :func:`.graph_context.dims_key`)."""
    keep = op.attrs.get("keepdims")
    if src is None or target is None or not isinstance(keep, bool):
        return False
    r, t = len(src), len(target)
    reduced = _reduced(op.attrs.get("axis"), r)
    if t > r or reduced is None:
        return False
    lead = r - t
    collapse = set(range(lead))
    for i in range(lead, r):
        tgt = target[i - lead]
        if tgt == src[i]:
            continue
        if tgt != 1:
            return False  # neither kept nor collapsed to 1: not a collapse to this shape
        collapse.add(i)
    ones = {i for i in range(r) if src[i] == 1}
    return reduced - ones == collapse - ones


def _collapse_like(func: PrimFunc, op: OpInfo, site, ctx: FuncContext) -> "OpInfo | None":
    """``sum`` renamed ``collapse_sum_like`` when its reduction collapses the data to the
    shape of ``main``'s one unused parameter of the output's shape."""
    out_t = _out_type(func, site)
    if out_t is None or len(op.operands) != 1 or op.output is None:
        return None
    data = op.operands[0]
    if data.param is None or data.param >= len(site.args):
        return None
    src = _tensor(site.arg_types[data.param])
    if src is None or str(src.dtype) != str(out_t.dtype):
        return None
    target = dims_key(out_t.shape)
    like = _like_param(target, ctx)
    if like is None:
        return None
    if not collapses_to(op, dims_key(src.shape), target):
        return None
    name, _ = like
    return OpInfo("collapse_sum_like", {}, (data, Operand("collapse_target", name, None)), op.output, op.blocks)

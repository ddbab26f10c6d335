"""Planning one PrimFunc call: which layout each of its buffers takes, and the converted
PrimFunc (buffers re-laid-out in place with :func:`transform_layout`)."""
from __future__ import annotations

import attrs

from opinfo.info import FuncInfo
from tir.function import PrimFunc

from .internal import internal_layouts
from .layout import LayoutError
from .rules import Decision, OpContext, Refusal, apply_rule
from .transform import find_buffer, transform_layout


@attrs.frozen
class FuncPlan:
    """The layouts of one call's buffer parameters and the PrimFunc that uses them."""

    params: tuple
    """TensorLayout (or None: original) per buffer parameter, inputs then outputs."""
    func: PrimFunc
    """The converted PrimFunc (the original one when nothing changes)."""
    decisions: tuple = ()
    """(OpInfo, Decision | Refusal) per recovered op."""

    @property
    def changed(self) -> bool:
        return any(p is not None for p in self.params)


class _Conflict(Exception):
    """One buffer would need two layouts inside the function."""


def _buffer(func: PrimFunc, operand):
    """The Buffer an operand names: by parameter index when it is a parameter."""
    if operand.param is not None and operand.param < len(func.params):
        var = func.params[operand.param]
        if var in func.buffer_map:
            return func.buffer_map[var]
    try:
        return find_buffer(func, operand.buffer)
    except LayoutError:
        return _Virtual(operand.buffer)


@attrs.frozen
class _Virtual:
    """An intermediate value of a fused kernel that is inlined, not stored in a buffer."""

    name: str
    shape: tuple = ()


def _decide(func: PrimFunc, info: FuncInfo, arg_layouts: dict, targets: dict):
    """(Buffer -> layout, decisions), running the rules in dataflow order."""
    current = dict(arg_layouts)
    required: dict = {}
    decisions = []
    params = set(func.buffers)
    for op in info.ops:
        bufs = [_buffer(func, o) for o in op.operands]
        out_buf = _buffer(func, op.output) if op.output else None
        ctx = OpContext(op, tuple(current.get(b) for b in bufs), tuple(tuple(b.shape) for b in bufs),
                        tuple(out_buf.shape) if out_buf is not None else (), targets.get(op.name))
        d = apply_rule(ctx)
        decisions.append((op, d))
        ins = d.inputs if isinstance(d, Decision) else (None,) * len(op.operands)
        out = d.output if isinstance(d, Decision) else None
        for buf, tl in zip(bufs + [out_buf], tuple(ins) + (out,)):
            if isinstance(buf, _Virtual) and tl is not None:
                raise _Conflict(f"inlined intermediate {buf.name} would need layout {tl.physical}")
        for buf, tl in zip(bufs, ins):
            if buf not in params and current.get(buf) != tl:
                raise _Conflict(f"intermediate {buf.name} is produced in one layout, needed in another")
            if required.setdefault(buf, tl) != tl:
                raise _Conflict(f"buffer {buf.name} is needed in two layouts")
        if out_buf is not None:
            current[out_buf] = out
            required[out_buf] = out
    return required, tuple(decisions)


def plan_function(func: PrimFunc, info: FuncInfo, arg_layouts: list, targets: dict) -> FuncPlan:
    """Plan a call of ``func`` whose input arguments arrive in ``arg_layouts``.

    Abstained recognition (``info.ops == ()``) or a conflict keeps every buffer in its
    original layout (the caller materialises the inputs back).
    """
    bufs = func.buffers
    keep = FuncPlan(tuple(None for _ in bufs), func)
    if not info.ops:
        return keep
    args = {b: tl for b, tl in zip(bufs, arg_layouts)}
    try:
        required, decisions = _decide(func, info, args, targets)
    except _Conflict as err:
        return attrs.evolve(keep, decisions=((None, Refusal(str(err))),))
    params = tuple(required.get(b) for b in bufs)
    known = {k: v for k, v in required.items() if v is not None}
    required.update(internal_layouts(func, known))
    try:
        new = _convert(func, required, bufs)
    except LayoutError as err:
        return attrs.evolve(keep, decisions=((None, Refusal(str(err))),))
    return FuncPlan(params, new, decisions)


def _convert(func: PrimFunc, required: dict, bufs: tuple) -> PrimFunc:
    out = func
    for buf, tl in required.items():
        if tl is not None:
            out = transform_layout(out, buf, tl.index_map())
    return out

"""Planning one PrimFunc call: which layout each of its buffers takes, and the converted
PrimFunc (buffers re-laid-out in place with :func:`transform_layout`)."""
from __future__ import annotations

import attrs

from opinfo.info import FuncInfo
from tir.function import PrimFunc

from .internal import internal_layouts
from .layout import LayoutError
from .rules import Decision, OpContext, Refusal, apply_rule
from .tensor_layout import TensorLayout
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


def _shape_of(func: PrimFunc, name: str) -> tuple:
    return tuple(find_buffer(func, name).shape)


def _decide(func: PrimFunc, info: FuncInfo, arg_layouts: dict, targets: dict):
    """(buffer name -> layout, decisions), running the rules in dataflow order."""
    current = dict(arg_layouts)
    required: dict = {}
    decisions = []
    params = {b.name for b in func.buffers}
    for op in info.ops:
        ctx = OpContext(op, tuple(current.get(o.buffer) for o in op.operands),
                        tuple(_shape_of(func, o.buffer) for o in op.operands),
                        _shape_of(func, op.output.buffer) if op.output else (), targets.get(op.name))
        d = apply_rule(ctx)
        decisions.append((op, d))
        ins = d.inputs if isinstance(d, Decision) else (None,) * len(op.operands)
        out = d.output if isinstance(d, Decision) else None
        for operand, tl in zip(op.operands, ins):
            if operand.buffer not in params and current.get(operand.buffer) != tl:
                raise _Conflict(f"intermediate {operand.buffer} is produced in one layout, needed in another")
            if required.setdefault(operand.buffer, tl) != tl:
                raise _Conflict(f"buffer {operand.buffer} is needed in two layouts")
        if op.output is not None:
            current[op.output.buffer] = out
            required[op.output.buffer] = out
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
    args = {b.name: tl for b, tl in zip(bufs, arg_layouts)}
    try:
        required, decisions = _decide(func, info, args, targets)
    except _Conflict as err:
        return attrs.evolve(keep, decisions=((None, Refusal(str(err))),))
    params = tuple(required.get(b.name) for b in bufs)
    known = {k: v for k, v in required.items() if v is not None}
    required.update(internal_layouts(func, known))
    try:
        new = _convert(func, required, bufs)
    except LayoutError as err:
        return attrs.evolve(keep, decisions=((None, Refusal(str(err))),))
    return FuncPlan(params, new, decisions)


def _convert(func: PrimFunc, required: dict, bufs: tuple) -> PrimFunc:
    names = {b.name: k for k, b in enumerate(bufs)}
    out = func
    for name, tl in required.items():
        if tl is None:
            continue
        target = names.get(name, name)
        out = transform_layout(out, target, tl.index_map())
    return out

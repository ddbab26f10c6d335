"""What opinfo reports: one OpInfo per recovered op, one FuncInfo per PrimFunc.

These are the contract between recovery (``opinfo.analyze``) and its users (``layout``,
``byoc``, the CLI). Op names and attribute names/values follow ../shared/DESIGN.md.
"""
from __future__ import annotations

from typing import Any

import attrs
from attrs import field as _field

from tir.node import EMPTY, Map

KINDS = ("elemwise", "broadcast", "injective", "comm_reduce", "out_ewise_fusable", "opaque")


def _jsonable(value: Any) -> Any:
    if isinstance(value, Map):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    return value


@attrs.frozen
class Operand:
    """One input or output of a recovered op."""

    role: str
    """What the operand is to the op: "data", "weight", "bias", "lhs", "rhs", "gamma",
    "beta", "mean", "var", "indices", "condition", "input", "output", ..."""
    buffer: str
    """Name of the buffer in the PrimFunc (a parameter or an intermediate)."""
    param: "int | None" = None
    """Index of the PrimFunc parameter holding it; None for an intermediate buffer."""

    def to_json(self) -> dict:
        return {"role": self.role, "buffer": self.buffer, "param": self.param}


@attrs.frozen
class OpInfo:
    """A recovered op: Relax op name, its attributes and its operands."""

    name: str
    """Relax op name without ``relax.``: "nn.conv2d", "add", "sum", ..."""
    attrs: Map = attrs.field(default=EMPTY, converter=Map)
    """Relax attribute names and value formats (lists become tuples here, lists in JSON)."""
    operands: tuple = _field(default=(), converter=tuple)
    """Inputs in Relax argument order."""
    output: "Operand | None" = None
    """Where the op writes its result."""
    blocks: tuple = _field(default=(), converter=tuple)
    """Names of the blocks that implement this op."""
    assumed: tuple = _field(default=(), converter=tuple)
    """Attributes the loops do not decide, filled in by the convention of framework
    importers (a pool's ceil_mode and after-padding when ``ceil_mode=True`` and a larger
    after-padding give the same loops); ``"op"`` when the op's name itself is the
    convention (a ``sum`` that ``collapse_sum_to`` explains as well). :func:`opinfo.analyze`
    reports such an op only where the convention holds (see its ``conventions`` argument)."""
    unconventional: tuple = _field(default=(), converter=tuple)
    """Attributes the loops do not decide, reported with the convention of ops lowered on
    their own (a stride-2 slice's end one past its last element) which an importer does not
    follow: it passes the value the network wrote. :func:`opinfo.analyze` does not report
    such an op inside a network (:mod:`opinfo.network_conventions`)."""
    constants: tuple = _field(default=(), converter=tuple)
    """``(role, value)`` of a scalar operand Relax's legalization folded into the loops: a
    binary op with one tensor operand (``power(x, R.const(0.75))`` is ``pow(x, 0.75)``;
    the tensor is ``lhs`` there, the constant ``rhs``). Empty for every other op."""

    def to_json(self) -> dict:
        out = {"op": self.name, "attrs": _jsonable(self.attrs),
               "operands": [o.to_json() for o in self.operands]}
        if self.output is not None:
            out["output"] = self.output.to_json()
        if self.blocks:
            out["blocks"] = list(self.blocks)
        if self.assumed:
            out["assumed"] = list(self.assumed)
        if self.constants:
            out["constants"] = [{"role": r, "value": v} for r, v in self.constants]
        return out


@attrs.frozen
class FuncInfo:
    """What was recovered from one PrimFunc: its TVM pattern kind and its ops in dataflow order.

    ``ops`` is empty when recognition abstained: never a guess.
    """

    name: "str | None"
    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    ops: tuple = attrs.field(default=(), converter=tuple)
    undecided: tuple = attrs.field(default=(), converter=tuple)
    """Not an answer: when ``ops`` is empty because an attribute (or the op's name) is one
    the loops leave open, the reading that was withheld, each op's :attr:`OpInfo.assumed`
    naming what is open and its attrs holding the importers' convention (what a network
    would report). Tells a user why the function abstained; empty otherwise."""

    refused: "str | None" = None
    """Why the function was not read at all, when a soundness gate refused it (an output
    written in part, storage read before it is written, loops that do not run a block's
    domain, a reading that computes something else when lowered again); None otherwise."""

    withheld: tuple = attrs.field(default=(), converter=tuple)
    """Not an answer: the ops of a kernel of a small graph (:func:`opinfo.analyze_module`)
    withheld because another kernel of the graph is not recognised, so the graph's op
    sequence would be incomplete. Empty otherwise."""

    part_of: "str | None" = None
    """The function whose op covers this one's work too, when this function has no op of
    its own for that reason (the shape kernel of Relax's ``size``, read with the product
    kernel that uses it: :func:`opinfo.analyze_module`); None otherwise."""

    warnings: tuple = attrs.field(default=(), converter=tuple)
    """What a user of the answer should know that the ops do not say: the function computes
    its ops as written, but TVM's build of it reads undefined storage (an intermediate read at
    a later iteration of a loop TVM allocates it inside, :func:`.intermediate_check.stale_reads`;
    TVM 0.27's llvm build then mostly returns other numbers, ``nan`` for an ``add``). Empty
    otherwise."""

    def to_json(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "ops": [o.to_json() for o in self.ops]}
        if self.undecided:
            out["undecided"] = [o.to_json() for o in self.undecided]
        if self.withheld:
            out["withheld"] = [o.to_json() for o in self.withheld]
        if self.refused:
            out["refused"] = self.refused
        if self.part_of:
            out["part_of"] = self.part_of
        if self.warnings:
            out["warnings"] = list(self.warnings)
        return out

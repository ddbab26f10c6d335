"""Graph-level (Relax) functions: dataflow blocks of ``call_tir`` bindings."""
from __future__ import annotations

from typing import Any

import attrs

from .dtype import DataType
from .node import EMPTY, Map, Node


class StructInfo(Node):
    """Base of graph-level types."""

    __slots__ = ()


@attrs.frozen(cache_hash=True)
class TensorType(StructInfo):
    """``R.Tensor(shape, dtype)``; ``shape`` None means unknown shape of ``ndim`` dims (-1: any)."""

    shape: "tuple | None"
    dtype: DataType
    ndim: int = -1

    def __attrs_post_init__(self):
        if self.shape is not None and self.ndim not in (-1, len(self.shape)):
            raise ValueError("TensorType: ndim does not match shape")

    @property
    def rank(self) -> int:
        return len(self.shape) if self.shape is not None else self.ndim


@attrs.frozen(cache_hash=True)
class TupleType(StructInfo):
    """``R.Tuple(...)`` or a list of tensor types (multi-output ``call_tir``)."""

    fields: tuple = attrs.field(converter=tuple)


@attrs.frozen(cache_hash=True)
class ShapeType(StructInfo):
    """``R.Shape([...])``"""

    values: "tuple | None"


@attrs.frozen(cache_hash=True)
class ObjectType(StructInfo):
    """``R.Object``: anything."""


class RExpr(Node):
    """Base of graph-level expressions."""

    __slots__ = ()


@attrs.frozen(eq=False, repr=False)
class RVar(RExpr):
    """A graph-level variable (parameter or binding). Compared by identity."""

    name: str
    type: "StructInfo | None" = None

    def __repr__(self) -> str:
        return f"RVar({self.name})"


@attrs.frozen(cache_hash=True)
class GlobalVar(RExpr):
    """Reference to a function of the module by name (``cls.f``)."""

    name: str


@attrs.frozen(cache_hash=True)
class CallTIR(RExpr):
    """``R.call_tir(func, args, out_ty)``: call a PrimFunc in destination-passing style."""

    func: GlobalVar
    args: tuple = attrs.field(converter=tuple)
    out_type: StructInfo = None
    tir_vars: "tuple | None" = None
    """Extra symbolic values passed to the PrimFunc's scalar parameters."""


@attrs.frozen(cache_hash=True)
class CallDPSPacked(RExpr):
    """``R.call_dps_packed("symbol", args, out_ty)``: call an external function."""

    func: str
    args: tuple = attrs.field(converter=tuple)
    out_type: StructInfo = None


@attrs.frozen(cache_hash=True)
class Call(RExpr):
    """A call of a graph-level function of the module (``cls.subgraph(x, w)``)."""

    func: GlobalVar
    args: tuple = attrs.field(converter=tuple)


@attrs.frozen(cache_hash=True)
class OpCall(RExpr):
    """``R.cumsum(x, axis=0, exclusive=False)``: a high-level Relax op that TVM left unlowered.

    Opaque here: it is read and printed back, but nothing looks inside it and the graph
    executor refuses to run it. An argument or attribute value is a graph-level value
    (RExpr) or plain data: int, float, bool, str, None, a PrimExpr, or a tuple of these
    (written as a list).
    """

    op: str
    """The op's name without ``R.``: ``cumsum``, ``nn.conv2d``."""
    args: tuple = attrs.field(converter=tuple)
    """Positional arguments."""
    attrs: Map = attrs.field(default=EMPTY, converter=Map)
    """Keyword arguments, in the order written."""


@attrs.frozen(cache_hash=True)
class PrimValue(RExpr):
    """A scalar PrimExpr used as a graph-level value: ``n`` or ``n * 18`` in
    ``R.call_tir(cls.f, (x, n), ...)``, passed to a scalar parameter of the PrimFunc.
    Its variables are the symbolic extents of the function's tensor types."""

    value: Any
    """An integer PrimExpr (a symbolic extent, an expression of them, or a constant)."""


@attrs.frozen(cache_hash=True)
class Tuple(RExpr):
    """``(a, b, ...)``"""

    fields: tuple = attrs.field(converter=tuple)


@attrs.frozen(cache_hash=True)
class TupleGetItem(RExpr):
    """``t[index]``"""

    tuple_value: RExpr
    index: int


@attrs.frozen(cache_hash=True)
class Constant(RExpr):
    """A constant tensor (held as raw bytes, with its type).

    A constant that TVM printed as ``metadata["..."][i]`` without its metadata section has
    ``data`` None and ``ref`` naming that reference; its type is the callee's buffer type.
    """

    data: Any
    type: "TensorType | None"
    ref: str = ""


@attrs.frozen(cache_hash=True)
class Binding(Node):
    """``var = value``"""

    var: RVar
    value: RExpr


@attrs.frozen(cache_hash=True)
class DataflowBlock(Node):
    """``with R.dataflow(): ...; R.output(*outputs)``"""

    bindings: tuple = attrs.field(converter=tuple)
    outputs: tuple = attrs.field(default=(), converter=tuple)


@attrs.frozen(cache_hash=True)
class BindingBlock(Node):
    """Bindings outside a dataflow block."""

    bindings: tuple = attrs.field(converter=tuple)


@attrs.frozen(cache_hash=True)
class Function(Node):
    """A graph-level function (``@R.function``)."""

    params: tuple = attrs.field(converter=tuple)
    blocks: tuple = attrs.field(converter=tuple)
    ret: RExpr
    ret_type: "StructInfo | None" = None
    attrs: Map = attrs.field(default=EMPTY, converter=Map)

    @property
    def bindings(self) -> tuple:
        """All bindings of all blocks, in order."""
        return tuple(b for blk in self.blocks for b in blk.bindings)


def type_metadata_constants(func: Function, prim_funcs: dict) -> Function:
    """``func`` with the type of every untyped constant argument of a ``call_tir`` taken from
    the callee's parameter buffer (the printed script does not carry it)."""
    def fix(v):
        if not isinstance(v, CallTIR) or not any(isinstance(a, Constant) and a.type is None for a in v.args):
            return v
        callee = prim_funcs.get(v.func.name)
        bufs = callee.buffers if callee is not None else ()
        args = []
        for i, a in enumerate(v.args):
            if isinstance(a, Constant) and a.type is None and i < len(bufs):
                a = attrs.evolve(a, type=TensorType(tuple(bufs[i].shape), bufs[i].dtype))
            args.append(a)
        return attrs.evolve(v, args=tuple(args))

    blocks = []
    for blk in func.blocks:
        bindings = []
        for b in blk.bindings:
            value = fix(b.value)
            bindings.append(b if value is b.value else attrs.evolve(b, value=value))
        blocks.append(attrs.evolve(blk, bindings=tuple(bindings)))
    return attrs.evolve(func, blocks=tuple(blocks))

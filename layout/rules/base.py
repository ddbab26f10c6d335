"""What a layout rule receives and answers."""
from __future__ import annotations

import attrs

from opinfo.info import OpInfo
from tir.node import EMPTY, Map

from ..layout import LayoutError
from ..tensor_layout import TensorLayout, normalized


@attrs.frozen
class OpContext:
    """One recovered op with the layouts its inputs arrive in."""

    op: OpInfo
    inputs: tuple
    """TensorLayout (or None: original) per operand, in ``op.operands`` order."""
    in_shapes: tuple
    """Original shape of each operand (ints or expressions)."""
    out_shape: tuple
    """Original shape of the op's output."""
    target: "tuple | None" = None
    """Desired layouts for this op when it is a target (``("NHWC", "OHWI")``), else None."""

    @property
    def attrs(self) -> Map:
        return self.op.attrs

    def first_converted(self) -> "int | None":
        """Index of the first operand that arrives in a non-original layout."""
        for k, tl in enumerate(self.inputs):
            if tl is not None:
                return k
        return None


@attrs.frozen
class Decision:
    """The op runs in new layouts: what each operand must be in, what the output is in,
    and the op's attributes under those layouts."""

    inputs: tuple
    """Required TensorLayout (or None) per operand."""
    output: "TensorLayout | None"
    attrs: Map = attrs.field(default=EMPTY, converter=Map)
    """The op's attributes after the conversion (what re-analysis should report)."""

    @property
    def changes(self) -> bool:
        return self.output is not None or any(t is not None for t in self.inputs)


@attrs.frozen
class Refusal:
    """The op cannot run in a new layout: it stays in its original one."""

    reason: str


def keep(ctx: OpContext) -> Decision:
    """Everything in the original layout (nothing arrives converted)."""
    return Decision(tuple(None for _ in ctx.inputs), None, ctx.attrs)


def checked(ctx: OpContext, inputs, output, new_attrs) -> "Decision | Refusal":
    """A Decision after checking every shape fits its layout (split factors divide)."""
    inputs = tuple(normalized(t) for t in inputs)
    output = normalized(output)
    try:
        for tl, shape in zip(inputs, ctx.in_shapes):
            if tl is not None:
                tl.shape(shape)
        if output is not None:
            output.shape(ctx.out_shape)
    except LayoutError as err:
        return Refusal(str(err))
    return Decision(inputs, output, new_attrs)


def with_attrs(ctx: OpContext, **changes) -> Map:
    out = ctx.attrs
    for k, v in changes.items():
        out = out.set(k, v)
    return out


def letters_of(tl: "TensorLayout | None", rank: int) -> str:
    """The logical letters of a tensor (default letters when it is in its original layout)."""
    from ..tensor_layout import default_letters

    return tl.logical.primal if tl is not None else default_letters(rank)


def as_axes(value, rank: int) -> "tuple | None":
    """Normalised non-negative axes from an int, a list or None (None: all axes)."""
    if value is None:
        return None
    vals = [value] if isinstance(value, int) else list(value)
    return tuple(sorted(v + rank if v < 0 else v for v in vals))


def physical_positions(tl: TensorLayout, letters: str) -> tuple:
    """Positions in the physical layout of every axis (primal and sub-axis) of ``letters``."""
    return tuple(i for i, a in enumerate(tl.physical.axes) if a.letter in letters)


def split_letters(tl: TensorLayout, letters: str) -> str:
    return "".join(x for x in letters if tl.physical.factor_of(x) is not None)


def renamed_input(ctx: OpContext, k: int, letters: str) -> "TensorLayout | None":
    """Operand ``k``'s layout with its logical letters renamed to the op's own ``letters``."""
    tl = ctx.inputs[k]
    if tl is None or len(letters) != tl.logical.ndim:
        return None
    return tl.renamed(letters)


def same_as(tl: "TensorLayout | None", rank: int) -> "TensorLayout | None":
    """``tl`` for another operand of the same rank."""
    return tl if tl is not None and tl.logical.ndim == rank else None


def derived(logical: str, physical) -> TensorLayout:
    return TensorLayout(logical, physical)

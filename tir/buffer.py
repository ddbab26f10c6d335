"""Buffers and ranges."""
from __future__ import annotations

from typing import Sequence

import attrs

from . import dtype as dt
from .dtype import DataType
from .expr import BufferLoad, PrimExpr, Var, convert
from .node import Node


def _exprs(values) -> tuple:
    return tuple(convert(v, dt.int64) for v in values)


@attrs.frozen(eq=False, repr=False)
class Buffer(Node):
    """A multi-dimensional array. A binder: compared by identity.

    ``buf[i, j]`` builds a :class:`BufferLoad`.
    """

    name: str
    """Name hint, used only for printing."""
    shape: tuple = attrs.field(converter=_exprs)
    """Extent of each dimension (int64 expressions, possibly symbolic)."""
    dtype: DataType = attrs.field(default=dt.float32, converter=dt.dtype)
    """Element type."""
    strides: tuple = attrs.field(default=(), converter=_exprs)
    """Element strides per dimension; empty means compact row-major."""
    elem_offset: "PrimExpr | None" = None
    """Offset of the first element, in elements; None means 0."""
    scope: str = "global"
    """Storage scope."""
    data: "Var | None" = None
    """The handle variable that holds the data, when the function was written with T.handle."""

    def __getitem__(self, indices) -> BufferLoad:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return BufferLoad(self, tuple(convert(i, dt.int64) for i in indices))

    def __repr__(self) -> str:
        return f"Buffer({self.name}, {len(self.shape)}-d, {self.dtype})"

    @property
    def ndim(self) -> int:
        return len(self.shape)


def decl_buffer(shape: Sequence, dtype: "str | DataType" = "float32", name: str = "buf", **kw) -> Buffer:
    """Declare a buffer: ``decl_buffer((4, n), "float32", "A")``."""
    return Buffer(name, tuple(shape), dt.dtype(dtype), **kw)


@attrs.frozen(cache_hash=True)
class Range(Node):
    """The half-open interval [min, min + extent)."""

    min: PrimExpr
    extent: PrimExpr

    @staticmethod
    def from_extent(extent, dtype: DataType = dt.int64) -> "Range":
        extent = convert(extent, dtype)
        return Range(convert(0, extent.dtype), extent)


@attrs.frozen(cache_hash=True)
class BufferRegion(Node):
    """A rectangular region of a buffer, as in ``T.reads(A[i, 0:4])``."""

    buffer: Buffer
    region: tuple = attrs.field(converter=tuple)
    """One Range per dimension."""

    @staticmethod
    def point(load_or_buffer, indices=None) -> "BufferRegion":
        """The one-element region of ``buffer[indices]`` (or of a BufferLoad)."""
        if isinstance(load_or_buffer, BufferLoad):
            buf, indices = load_or_buffer.buffer, load_or_buffer.indices
        else:
            buf = load_or_buffer
        return BufferRegion(buf, tuple(Range(i, convert(1, i.dtype)) for i in indices))

    @staticmethod
    def full(buffer: Buffer) -> "BufferRegion":
        return BufferRegion(buffer, tuple(Range(convert(0, s.dtype), s) for s in buffer.shape))

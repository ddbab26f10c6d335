"""How one tensor is laid out relative to its original (logical) form."""
from __future__ import annotations

import attrs

from .layout import Layout, LayoutError


@attrs.frozen
class TensorLayout:
    """A tensor whose original dimensions are named by ``logical`` (primal letters, in the
    original order) and which is stored in ``physical`` (the same letters, possibly
    reordered and packed). ``None`` is used for "the original layout" everywhere."""

    logical: Layout = attrs.field(converter=Layout.parse)
    """The original dimensions, one letter each (``NCHW``)."""
    physical: Layout = attrs.field(converter=Layout.parse)
    """How the tensor is stored (``NHWC``, ``NCHW4c``)."""

    def __attrs_post_init__(self):
        if self.logical.is_packed:
            raise LayoutError(f"logical layout {self.logical} must not be packed")
        if not self.logical.compatible(self.physical):
            raise LayoutError(f"layouts {self.logical} and {self.physical} do not have the same axes")

    @property
    def is_identity(self) -> bool:
        return self.logical == self.physical

    def index_map(self):
        """IndexMap from an original index to the stored index."""
        return self.logical.index_map_to(self.physical)

    def shape(self, logical_shape) -> tuple:
        """The stored shape of a tensor of ``logical_shape``; LayoutError when not divisible."""
        return self.physical.shape_of(tuple(logical_shape), self.logical)

    def renamed(self, letters: str) -> "TensorLayout":
        """The same layout with the logical dimensions renamed, by position, to ``letters``."""
        mapping = dict(zip(self.logical.primal, letters))
        return TensorLayout(Layout.parse(letters), self.physical.rename(mapping))

    def __str__(self) -> str:
        return f"{self.logical}->{self.physical}"


def normalized(tl: "TensorLayout | None") -> "TensorLayout | None":
    """None for an identity layout, else the layout."""
    return None if tl is None or tl.is_identity else tl


def describe(tl: "TensorLayout | None", rank: int) -> str:
    """Physical layout text, or ``original`` for None."""
    return "original" if tl is None else str(tl.physical)


def default_letters(rank: int) -> str:
    """Letters naming the dimensions of a tensor whose op gives no layout."""
    if rank > 23:
        raise LayoutError(f"cannot name {rank} dimensions with letters")
    return "ABDEFGIJKLMNOPQRSTUVXYZ"[:rank]


def pair(src: "TensorLayout | None", dst: "TensorLayout | None", rank: int):
    """(from physical, to physical) layouts in common letters for a transform src -> dst."""
    if src is None and dst is None:
        return None
    base = src.logical.primal if src is not None else dst.logical.primal
    s = src.physical if src is not None else Layout.parse(base)
    if dst is None:
        return s, Layout.parse(base)
    d = dst.renamed(base).physical
    return s, d

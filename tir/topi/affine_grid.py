"""``image.affine_grid`` as ``topi.image.affine_grid`` writes it: one ``compute`` block,
``x[n, dim, k] + sum_r x[n, dim, k-1-r] * (start_r + c_r * step_r)`` (a step of 1 folded)."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder
from ..expr import cast, const
from .common import OpError


def _axis_form(s: int, align_corners: bool) -> tuple:
    """(start, step) of the normalised coordinate of an axis of ``s`` points."""
    if align_corners:
        return -1.0, (2.0 - 1e-7) / (s - 1)
    return -1.0 + 1.0 / s, 2.0 / s


def affine_grid(b: Builder, data: Buffer, *, size, align_corners=True) -> Buffer:
    """The (N, k, *size) sampling grid of the affine matrices ``data`` (N, k, k + 1)."""
    size = [int(s) for s in size]
    k = len(size)
    if k not in (2, 3) or data.ndim != 3:
        raise OpError("image.affine_grid", "size", f"needs 2 or 3 spatial sizes and a 3-D matrix, got {size}")
    if align_corners and min(size) < 2:
        raise OpError("image.affine_grid", "size", "sizes must exceed 1 when align_corners is True")
    forms = [_axis_form(s, align_corners) for s in size]
    ty = data.dtype

    def coord(r, c):
        start, step = forms[r]
        scaled = cast(c, ty) if step == 1.0 else cast(c, ty) * const(step, ty)
        return const(start, ty) + scaled

    def body(n, dim, *coords):
        val = data[n, dim, k]
        for r in range(k):
            val = val + data[n, dim, k - 1 - r] * coord(r, coords[r])
        return val

    names = ["n", "dim"] + [f"i{r}" for r in range(k)]
    return b.compute("compute", [data.shape[0], k] + size, body, names=names)

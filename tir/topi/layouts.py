"""Layout strings as the lowering functions need them: ``"NCHW4c"`` -> axes and split factors."""
from __future__ import annotations

import re

from .common import OpError

_TOKEN = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(layout: str, op: str = "layout", arg: str = "layout") -> "list[tuple[str, int | None]]":
    """``"NCHW4c"`` -> ``[("N", None), ("C", None), ("H", None), ("W", None), ("c", 4)]``.

    A lower-case axis is a sub-axis of its upper-case primal axis, split by the given factor.
    """
    if not isinstance(layout, str) or not layout:
        raise OpError(op, arg, f"expected a layout string such as 'NCHW', got {layout!r}")
    pos, out = 0, []
    for m in _TOKEN.finditer(layout):
        if m.start() != pos:
            break
        pos = m.end()
        factor, axis = m.groups()
        if axis.islower() != bool(factor):
            raise OpError(op, arg, f"layout {layout!r}: sub-axis {axis!r} needs a factor (e.g. 4{axis.lower()})")
        out.append((axis, int(factor) if factor else None))
    names = [a for a, _ in out]
    if pos != len(layout) or len(set(names)) != len(names):
        raise OpError(op, arg, f"cannot read layout {layout!r}")
    for a, _ in out:
        if a.islower() and a.upper() not in names:
            raise OpError(op, arg, f"layout {layout!r}: sub-axis {a!r} without primal axis {a.upper()!r}")
    return out


def axis_names(layout: str, op: str = "layout", arg: str = "layout") -> str:
    """The axis letters of a layout: ``"NCHW4c"`` -> ``"NCHWc"``."""
    return "".join(a for a, _ in parse_layout(layout, op, arg))


def split_factor(layout: str, axis: str, op: str = "layout", arg: str = "layout") -> "int | None":
    """The factor of the sub-axis ``axis.lower()`` in ``layout``, or None."""
    for a, f in parse_layout(layout, op, arg):
        if a == axis.lower():
            return f
    return None

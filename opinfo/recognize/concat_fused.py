"""concat and stack inside a fused kernel: some of the joined tensors are intermediate buffers
(the results of earlier ops of the kernel), not parameters.

TVM writes concat as a chain of selects over the operands' loads (``if v >= offset_last:
last elif ...: ... else first``), whatever the operands are. The chain is read with each
intermediate seen as a load of its buffer at the indices it is read at, by the readers of
the parameter-only concat (:mod:`.movement_select` for constant extents,
:mod:`.movement_dynamic` for a symbolic one); the operand order is the chain's, not the
parameters' (``concat([y, exp(x)])``).
"""
from __future__ import annotations

import attrs

from tir.expr import BufferLoad, Call, Select

from ..semantic import Inlined
from .common import Match, Space, strip
from .movement_index import const_extents, pure_space
from . import movement_dynamic, movement_select


def _split(e) -> "tuple | None":
    """(condition, true value, false value) of a select, the values as written (an
    intermediate stays an :class:`Inlined`)."""
    if isinstance(e, Select):
        return e.condition, e.true_value, e.false_value
    if isinstance(e, Call) and e.op == "if_then_else":
        return e.args[0], e.args[1], e.args[2]
    return None


def _rebuild(e, values: list):
    """The select chain ``e`` with its values replaced by ``values`` (in chain order)."""
    br = _split(e)
    if br is None:
        return values[0]
    cond, _, rest = br
    tail = _rebuild(rest, values[1:])
    if isinstance(e, Select):
        return attrs.evolve(e, true_value=values[0], false_value=tail)
    return attrs.evolve(e, args=(cond, values[0], tail))


def match_intermediate_concat(expr, space: Space, ctx) -> "Match | None":
    e = strip(expr)
    if not pure_space(space):
        return None
    parts, node = [], e
    while _split(node) is not None:
        _, t, node = _split(node)
        parts.append(t)
    parts.append(node)
    if len(parts) < 2 or not any(isinstance(p, Inlined) for p in parts):
        return None  # parameters only: movement.match_movement
    if not all(isinstance(p, Inlined) or isinstance(p, BufferLoad) and ctx.is_param(p.buffer) for p in parts):
        return None
    loads = [p if isinstance(p, BufferLoad) else BufferLoad(p.buffer, tuple(p.indices)) for p in parts]
    chain = _rebuild(e, loads)
    order = loads[::-1]  # the chain tests the last operand first; the first is the final else
    if None in const_extents(space):
        m = movement_dynamic._concat(chain, space, order)
    else:
        m = movement_select._concat(chain, space, order) or movement_select._stack(chain, space, order)
    if m is None or m.name not in ("concat", "stack"):
        return None
    back = {id(l): p for l, p in zip(loads, parts)}
    return Match(m.name, m.attrs, tuple((role, back[id(l)], sp) for role, l, sp in m.inputs),
                 unconventional=m.unconventional)

"""Evaluating a repeated subexpression once per store.

TVM prints (and the parser builds) an expression as a tree: a value topi computed once and
used many times, such as a clipped coordinate of grid_sample's bicubic kernel, appears in
full at every use. The bicubic kernel's single store is a tree of 18,299 nodes with 421
distinct ones, and evaluating it node by node was most of the time spent running it.

:func:`shared_classes` numbers the structurally equal subtrees of a store's value (hash
consing), and :class:`Shared` remembers, during one evaluation of that value, the value of
each class per mask: a lane mask is narrowed only by ``if_then_else``, ``select`` and the
short-circuit ``and``/``or``, whose narrowed masks are remembered too, so equal subtrees met
under equal conditions see the very same mask object and share one value. A value is reused
only under its own mask or one narrowed from it (lanes outside the mask it was computed
under were not computed, and its loads were checked on those lanes only).

Values are equal only when the variables they read are bound the same way, so an expression
that binds variables (``Let``) or has effects (runtime calls) is evaluated as a tree.
"""
from __future__ import annotations

import attrs

from . import expr as E
from .functor import node_fields
from .intrinsics import CALL_STATEMENTS
from .node import Node

MIN_NODES = 64
"""Smaller trees are evaluated as they are: the bookkeeping would cost more than it saves."""
MISSING = object()
"""No value remembered (a value may be anything, None included)."""
_LEAVES = (E.Var, E.SizeVar, E.IntImm, E.FloatImm, E.StringImm)


@attrs.define
class Shared:
    """Values of the repeated subtrees of one expression during one evaluation of it."""

    classes: dict
    """id(node) -> its class, for the nodes whose subtree occurs more than once."""
    values: dict = attrs.field(factory=dict)
    """(class, id(mask)) -> value."""
    masks: dict = attrs.field(factory=dict)
    """(id(mask), id(condition value), negated) -> the narrowed mask."""
    parents: dict = attrs.field(factory=dict)
    """id(narrowed mask) -> the mask it narrowed."""
    alive: list = attrs.field(factory=list)
    """The masks and conditions whose ids are keys above (kept so no id is reused)."""

    def lookup(self, number: int, mask):
        """The value of class ``number`` computed under ``mask`` or under a mask it was
        narrowed from (a value is lane-wise, so one computed on more lanes serves), else
        :data:`MISSING`. A mask not narrowed here has no known parent, but every mask is
        within all lanes (None)."""
        while True:
            value = self.values.get((number, id(mask)), MISSING)
            if value is not MISSING or mask is None:
                return value
            mask = self.parents.get(id(mask))


def shared_classes(e: E.PrimExpr) -> "dict | None":
    """id(node) -> class number for the subtrees of ``e`` that occur at least twice
    (structurally equal, the same variables and buffers), or None when sharing does not pay
    or is not sound (see the module doc)."""
    keys: dict = {}  # id(node) -> structural key
    numbers: dict = {}  # structural key -> class number
    count: dict = {}  # class number -> occurrences
    nodes = 0
    stack = [(e, False)]
    while stack:
        node, done = stack.pop()
        if id(node) in keys:
            continue
        kids = _children(node)
        if not done:
            if isinstance(node, E.Let) or (isinstance(node, E.Call) and node.op in CALL_STATEMENTS):
                return None
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in keys)
            continue
        nodes += 1
        key = (type(node),) + tuple(_field_key(getattr(node, f), keys) for f in node_fields(type(node)))
        number = numbers.setdefault(key, len(numbers))
        keys[id(node)] = number
        count[number] = count.get(number, 0) + 1
    if nodes < MIN_NODES:
        return None
    repeated = {n for n, c in count.items() if c > 1}
    if not repeated:
        return None
    out: dict = {}
    _mark(e, keys, repeated, out)
    return out or None


def _mark(e, keys, repeated, out) -> None:
    """Record the class of every node of a repeated class (the tree walked once per node
    object: a node object used twice is one entry)."""
    stack = [e]
    seen = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        number = keys[id(node)]
        if number in repeated and not isinstance(node, _LEAVES):
            out[id(node)] = number
        stack.extend(_children(node))


def _children(node) -> list:
    out = []
    for f in node_fields(type(node)):
        v = getattr(node, f)
        if isinstance(v, E.PrimExpr):
            out.append(v)
        elif isinstance(v, tuple):
            out.extend(x for x in v if isinstance(x, E.PrimExpr))
    return out


def _field_key(v, keys):
    if isinstance(v, (E.Var, E.SizeVar)):
        return ("var", id(v))
    if isinstance(v, E.PrimExpr):
        return keys[id(v)]
    if isinstance(v, tuple):
        return tuple(_field_key(x, keys) for x in v)
    if isinstance(v, Node):  # a buffer, an op: the same object
        return ("node", id(v))
    try:
        hash(v)
    except TypeError:
        return ("object", id(v))
    return v

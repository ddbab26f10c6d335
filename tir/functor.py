"""One generic traversal for every IR node: children, post-order visit, transform, substitute.

Nodes are attrs classes; their fields holding nodes (directly, in tuples or in Maps) are
the children. Buffers are binders shared by many loads and stores: a traversal enters a
Buffer's own fields (shape, strides...) once, and a transform rewrites each Buffer once so
every use keeps pointing at the same (new) Buffer.
"""
from __future__ import annotations

from typing import Callable

import attrs

from .buffer import Buffer
from .function import PrimFunc
from .module import IRModule
from .node import Map, Node
from .stmt import Stmt

_FIELDS: dict = {}
_CHILD_FIELDS: dict = {}

# Field annotations that never hold a node, a tuple or a Map: names, element types, literal
# values and enumerations. Traversals skip such fields (``tests/test_functor_fields.py``
# checks the annotations against every node the parser and the lowering library build).
_LEAF_TYPES = frozenset({"str", "DataType", "int", "float", "bool", "ForKind", "IterKind", "str | None"})


def node_fields(cls) -> tuple:
    """Names of the attrs fields of a node class (cached)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in attrs.fields(cls)) if attrs.has(cls) else ()
        _FIELDS[cls] = names
    return names


def child_fields(cls) -> tuple:
    """Names of the fields of a node class that may hold nodes (cached): every field but
    those annotated as a name, an element type, a literal or an enumeration."""
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        if attrs.has(cls):
            names = tuple(f.name for f in attrs.fields(cls)
                          if str(f.type).strip("'\"") not in _LEAF_TYPES)
        else:
            names = ()
        _CHILD_FIELDS[cls] = names
    return names


def _gather(value, out: list) -> None:
    """Append the nodes directly inside a field value (a node, a tuple of them, or a Map)."""
    if isinstance(value, Node):
        out.append(value)
    elif isinstance(value, tuple):
        for v in value:
            if isinstance(v, Node):
                out.append(v)
            elif isinstance(v, tuple) or type(v) is Map:
                _gather(v, out)
    elif type(value) is Map:  # Map is a Mapping: isinstance would go through the ABC machinery
        for k, v in value.items_tuple():
            _gather(k, out)
            _gather(v, out)


def children(node: Node) -> list:
    """The nodes directly below ``node``, in field order."""
    out: list = []
    cls = type(node)
    names = _CHILD_FIELDS.get(cls)
    for name in names if names is not None else child_fields(cls):
        value = getattr(node, name)
        if isinstance(value, Node):  # the common case, without a call
            out.append(value)
        elif value is not None:
            _gather(value, out)
    return out


def post_order_visit(node: Node, fn: Callable[[Node], None]) -> None:
    """Call ``fn`` on every node below and including ``node``, children first.

    Each occurrence of a value node is visited; each Buffer is entered once.
    """
    seen_buffers: set = set()

    def visit(n):
        if isinstance(n, Buffer):
            if id(n) in seen_buffers:
                fn(n)
                return
            seen_buffers.add(id(n))
        for c in children(n):
            visit(c)
        fn(n)

    visit(node)


def post_order_stmts(node: Node, fn: Callable[[Node], None]) -> None:
    """Call ``fn`` on ``node`` and every statement below it, children first, in the order
    :func:`post_order_visit` meets them; expressions and buffers are not entered (no
    statement lives inside one), which makes walks for loops, blocks or stores cheap."""

    def visit(n):
        for c in children(n):
            if isinstance(c, Stmt):
                visit(c)
        fn(n)

    visit(node)


def pre_order_visit(node: Node, fn: Callable[[Node], bool]) -> None:
    """Call ``fn`` on every node, parents first; ``fn`` returning False skips the children."""
    seen_buffers: set = set()

    def visit(n):
        if isinstance(n, Buffer):
            if id(n) in seen_buffers:
                return
            seen_buffers.add(id(n))
        if fn(n) is False:
            return
        for c in children(n):
            visit(c)

    visit(node)


def transform(node, post: Callable[[Node], "Node | None"], pre: "Callable[[Node], Node | None] | None" = None):
    """Rebuild ``node`` bottom-up.

    ``pre(n)`` may return a replacement before children are visited (the replacement is
    not descended into); ``post(n)`` is called on the node rebuilt from its transformed
    children and may return a replacement. Returning None keeps the node. Unchanged
    subtrees are returned as the same objects. Results are memoised per object, so a
    shared node (a Buffer, a Var) is rewritten consistently everywhere.
    """
    memo: dict = {}

    def rewrite_value(value):
        if isinstance(value, Node):
            return rewrite(value)
        if isinstance(value, tuple):
            new = None
            for i, v in enumerate(value):
                w = rewrite_value(v) if isinstance(v, (Node, tuple)) or type(v) is Map else v
                if new is None and w is not v:
                    new = list(value[:i])
                if new is not None:
                    new.append(w)
            return value if new is None else tuple(new)
        if type(value) is Map:
            old = value.items_tuple()
            items = [(rewrite_value(k), rewrite_value(v)) for k, v in old]
            if all(k1 is k0 and v1 is v0 for (k1, v1), (k0, v0) in zip(items, old)):
                return value
            return Map(items)
        return value

    def rewrite(n):
        key = id(n)
        hit = memo.get(key)
        if hit is not None:
            return hit[1]
        out = pre(n) if pre is not None else None
        if out is None:
            changes = {}
            cls = type(n)
            names = _CHILD_FIELDS.get(cls)
            for name in names if names is not None else child_fields(cls):
                value = getattr(n, name)
                if value is None:
                    continue
                new = rewrite(value) if isinstance(value, Node) else rewrite_value(value)
                if new is not value:
                    changes[name] = new
            out = attrs.evolve(n, **changes) if changes else n
            replaced = post(out)
            if replaced is not None:
                out = replaced
        memo[key] = (n, out)
        return out

    return rewrite(node)


def transform_stmts(node, post: Callable[[Node], "Node | None"]):
    """:func:`transform` for rewrites of statements alone: every node that is neither a
    statement nor a function (expressions, buffers, iteration variables, ranges, regions)
    is kept as it is without being walked (no statement lives inside one), which makes a
    pass over a whole function cheap when ``post`` only rebuilds statements."""
    return transform(node, post, _keep_values)


def _keep_values(n):
    return None if isinstance(n, (Stmt, PrimFunc, IRModule)) else n


def substitute(node, mapping: dict):
    """Replace variables (or any nodes, matched by identity) according to ``mapping``."""
    if not mapping:
        return node
    by_id = {id(k): v for k, v in mapping.items()}

    def pre(n):
        return by_id.get(id(n))

    return transform(node, lambda n: None, pre)


def collect_distinct(node, is_leaf: Callable[[Node], bool]) -> list:
    """The distinct (by equality) nodes for which ``is_leaf`` holds, in pre-order, without
    looking inside them."""
    found: list = []

    def visit(n):
        if not is_leaf(n):
            return True
        if n not in found:
            found.append(n)
        return False

    pre_order_visit(node, visit)
    return found

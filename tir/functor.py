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
from .node import Map, Node

_FIELDS: dict = {}


def node_fields(cls) -> tuple:
    """Names of the attrs fields of a node class (cached)."""
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in attrs.fields(cls)) if attrs.has(cls) else ()
        _FIELDS[cls] = names
    return names


def _field_values(node):
    for name in node_fields(type(node)):
        yield name, getattr(node, name)


def _iter_nodes(value):
    """Nodes directly inside a field value (a node, a tuple of them, or a Map)."""
    if isinstance(value, Node):
        yield value
    elif isinstance(value, tuple):
        for v in value:
            yield from _iter_nodes(v)
    elif isinstance(value, Map):
        for k, v in value.items():
            yield from _iter_nodes(k)
            yield from _iter_nodes(v)


def children(node: Node):
    """The nodes directly below ``node``."""
    for _, value in _field_values(node):
        yield from _iter_nodes(value)


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
            new = tuple(rewrite_value(v) for v in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        if isinstance(value, Map):
            items = [(rewrite_value(k), rewrite_value(v)) for k, v in value.items()]
            if all(k1 is k0 and v1 is v0 for (k1, v1), (k0, v0) in zip(items, value.items())):
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
            for name, value in _field_values(n):
                new = rewrite_value(value)
                if new is not value:
                    changes[name] = new
            out = attrs.evolve(n, **changes) if changes else n
            replaced = post(out)
            if replaced is not None:
                out = replaced
        memo[key] = (n, out)
        return out

    return rewrite(node)


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

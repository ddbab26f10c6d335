"""One generic traversal for every IR node: children, post-order visit, transform, substitute.

Nodes are attrs classes; their fields holding nodes (directly, in tuples or in Maps) are
the children. Buffers are binders shared by many loads and stores: a traversal enters a
Buffer's own fields (shape, strides...) once, and a transform rewrites each Buffer once so
every use keeps pointing at the same (new) Buffer.
"""
from __future__ import annotations

import functools
from collections import OrderedDict
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
    for n in post_order_nodes(node):
        fn(n)


def remembered(size: int):
    """Decorator for a function of one node: its last ``size`` answers are kept by the
    node's identity and given again (nodes never change; analyses ask for one function's
    rewrite several times). The node is held, so its id is not reused while it is kept."""
    def wrap(fn):
        kept: dict = {}

        @functools.wraps(fn)
        def call(node):
            hit = kept.get(id(node))
            if hit is not None and hit[0] is node:
                return hit[1]
            out = fn(node)
            if len(kept) >= size:
                kept.pop(next(iter(kept)))
            kept[id(node)] = (node, out)
            return out
        return call
    return wrap


_WALKS: OrderedDict = OrderedDict()
_WALKS_KEPT = 256
"""The post-orders of the last :data:`_WALKS_KEPT` roots walked (``id -> (root, nodes)``):
nodes never change, and analyses walk the same block or function many times. The root is
held, so its id is not reused while it is kept."""


def post_order_nodes(node: Node) -> list:
    """The nodes :func:`post_order_visit` visits, in its order (cached per root: do not
    modify the list)."""
    key = id(node)
    hit = _WALKS.get(key)
    if hit is not None and hit[0] is node:
        _WALKS.move_to_end(key)
        return hit[1]
    out: list = []
    append = out.append
    seen_buffers: set = set()

    def visit(n):
        if isinstance(n, Buffer):
            if id(n) in seen_buffers:
                append(n)
                return
            seen_buffers.add(id(n))
        for c in children(n):
            visit(c)
        append(n)

    visit(node)
    _WALKS[key] = (node, out)
    if len(_WALKS) > _WALKS_KEPT:
        _WALKS.popitem(last=False)
    return out


def post_order_stmts(node: Node, fn: Callable[[Node], None]) -> None:
    """Call ``fn`` on ``node`` and every statement below it, children first, in the order
    :func:`post_order_visit` meets them; expressions and buffers are not entered (no
    statement lives inside one), which makes walks for loops, blocks or stores cheap."""

    def visit(n):
        for c in stmt_children(n):
            visit(c)
        fn(n)

    visit(node)


# Annotations of the statement fields that hold statements (``SeqStmt.seq`` holds a tuple of
# them); ``tests/test_functor_fields.py`` checks :func:`stmt_children` against
# :func:`children` on every statement the parser and the lowering library build.
_STMT_TYPES = frozenset({"Stmt", "Stmt | None", "Block", "tuple[Stmt, ...]"})
_STMT_FIELDS: dict = {}


def stmt_fields(cls) -> "tuple | None":
    """Names of the fields of a statement class that hold statements (cached); None for a
    class that is not a statement (a function or a module: their statements are found
    through :func:`children`)."""
    names = _STMT_FIELDS.get(cls)
    if names is None and cls not in _STMT_FIELDS:
        if isinstance(cls, type) and issubclass(cls, Stmt) and attrs.has(cls):
            names = tuple(f.name for f in attrs.fields(cls)
                          if str(f.type).strip("'\"") in _STMT_TYPES)
        _STMT_FIELDS[cls] = names
    return names


def stmt_children(node: Node) -> list:
    """The statements directly below ``node`` (a statement, a function or a module's
    functions), in field order."""
    names = stmt_fields(type(node))
    if names is None:
        return [c for c in children(node) if isinstance(c, (Stmt, PrimFunc))]
    out: list = []
    for name in names:
        value = getattr(node, name)
        if type(value) is tuple:
            out.extend(value)
        elif value is not None:
            out.append(value)
    return out


def pre_order_stmts(node: Node, fn: Callable[[Node], bool]) -> None:
    """Call ``fn`` on ``node`` and every statement below it, parents first, in the order
    :func:`pre_order_visit` meets them; ``fn`` returning False skips the statements below.
    Expressions and buffers are not entered (no statement lives inside one)."""

    def visit(n):
        if fn(n) is False:
            return
        for c in stmt_children(n):
            visit(c)

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
            out = _rebuilt(n, changes, post)
        memo[key] = (n, out)
        return out

    return rewrite(node)


def _rebuilt(n, changes: dict, post):
    """``n`` with its fields ``changes`` replaced, then through ``post``."""
    out = attrs.evolve(n, **changes) if changes else n
    replaced = post(out)
    return out if replaced is None else replaced


def transform_stmts(node, post: Callable[[Node], "Node | None"]):
    """:func:`transform` for rewrites of statements alone: ``post`` is called on every
    statement (children first) and on the functions and modules above them; expressions,
    buffers, iteration variables, ranges and regions are kept as they are without being
    walked (no statement lives inside one), which makes a pass over a whole function cheap."""
    memo: dict = {}

    def rewrite(n):
        key = id(n)
        hit = memo.get(key)
        if hit is not None:
            return hit[1]
        names = stmt_fields(type(n))
        changes = {}
        if names is not None:
            for name in names:
                value = getattr(n, name)
                if type(value) is tuple:
                    new = tuple(rewrite(v) for v in value)
                    if any(a is not b for a, b in zip(new, value)):
                        changes[name] = new
                elif value is not None:
                    new = rewrite(value)
                    if new is not value:
                        changes[name] = new
        elif isinstance(n, PrimFunc):
            body = rewrite(n.body)
            if body is not n.body:
                changes["body"] = body
        elif isinstance(n, IRModule):
            items = n.functions.items_tuple()
            new_items = [(k, rewrite(v) if isinstance(v, (Stmt, PrimFunc)) else v) for k, v in items]
            if any(a[1] is not b[1] for a, b in zip(new_items, items)):
                changes["functions"] = Map(new_items)
        else:
            memo[key] = (n, n)
            return n
        out = _rebuilt(n, changes, post)
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

"""Traversals skip node fields annotated as names, element types, literals or enumerations
(``tir.functor.child_fields``). Check that annotation against every node the parser and the
lowering library build: no skipped field may hold a node, a tuple or a Map, or a traversal
would miss what is inside it."""
from __future__ import annotations

from pathlib import Path

import pytest

import tir
from tir.functor import child_fields, children, node_fields, post_order_visit, stmt_children
from tir.function import PrimFunc
from tir.node import Map, Node
from tir.stmt import Stmt
from tir.topi.examples import resnet_block_example

from corpus_util import corpus_files

FIXTURES = sorted((Path(__file__).parent / "fixtures").glob("*.py"))


def _skipped_holding_nodes(root) -> list:
    """(class, field) pairs whose field is skipped by traversals yet holds a node, a tuple
    or a Map somewhere below ``root`` (walked through every field, not only child fields)."""
    bad: list = []
    seen: set = set()

    def walk(value):
        if isinstance(value, Node):
            if id(value) in seen:
                return
            seen.add(id(value))
            kept = set(child_fields(type(value)))
            for name in node_fields(type(value)):
                field = getattr(value, name)
                if name not in kept and isinstance(field, (Node, tuple, Map)):
                    bad.append((type(value).__name__, name))
                walk(field)
        elif isinstance(value, tuple):
            for v in value:
                walk(v)
        elif isinstance(value, Map):
            for k, v in value.items():
                walk(k)
                walk(v)

    walk(root)
    return bad


def _stmt_children_differ(root) -> list:
    """Statements (and functions) whose :func:`stmt_children` differ from the statements and
    functions among their :func:`children` -- the statement walks would miss or invent one."""
    bad: list = []

    def check(n):
        if isinstance(n, (Stmt, PrimFunc)):
            expected = [c for c in children(n) if isinstance(c, (Stmt, PrimFunc))]
            got = stmt_children(n)
            if len(got) != len(expected) or any(a is not b for a, b in zip(got, expected)):
                bad.append(type(n).__name__)

    post_order_visit(root, check)
    return bad


def test_leaf_fields_of_lowered_models():
    for batch in (1, tir.SizeVar("n", tir.dtype.int64)):
        mod = resnet_block_example(batch=batch)
        assert _skipped_holding_nodes(mod) == []
        assert _stmt_children_differ(mod) == []


def test_skipped_fields_are_the_leaf_ones():
    from tir.expr import IntImm, Var
    from tir.stmt import For

    assert child_fields(Var) == ()
    assert child_fields(IntImm) == ()
    assert "kind" not in child_fields(For) and "body" in child_fields(For)


@pytest.mark.parametrize("path", FIXTURES[::3] + corpus_files()[::2], ids=lambda p: p.name)
def test_leaf_fields_of_parsed_files(path):
    try:
        mod = tir.parse(path.read_text())
    except Exception:  # noqa: BLE001 - fixtures of malformed input are tested elsewhere
        pytest.skip("not parseable")
    assert _skipped_holding_nodes(mod) == []
    assert _stmt_children_differ(mod) == []

"""The IR core: expressions, buffers, structural equality and the generic traversal."""
import pytest

import tir
from tir import dtype as dt


def _copy_func():
    A = tir.decl_buffer((4, 8), "float32", "A")
    C = tir.decl_buffer((4, 8), "float32", "C")
    i, j = tir.Var("i", dt.int64), tir.Var("j", dt.int64)
    zero, four, eight = tir.const(0, "int64"), tir.const(4, "int64"), tir.const(8, "int64")
    store = tir.BufferStore(C, A[i, j] * 2.0, (i, j))
    body = tir.For(i, zero, four, tir.ForKind.SERIAL, tir.For(j, zero, eight, tir.ForKind.SERIAL, store))
    return tir.prim_func([A, C], body)


def test_operators_build_nodes_with_matching_dtypes():
    x = tir.Var("x", dt.int64)
    e = x * 4 + x // 2
    assert isinstance(e, tir.Add) and e.dtype == dt.int64
    assert e.b == tir.FloorDiv(x, tir.const(2, "int64"))
    assert (x < 3).dtype == dt.bool_
    with pytest.raises(TypeError):
        bool(x < 3)
    with pytest.raises(TypeError):
        tir.Add(x, tir.const(1.0, "float32"))


def test_vars_compare_by_identity_values_by_fields():
    a, b = tir.Var("a", dt.int64), tir.Var("a", dt.int64)
    assert a != b
    assert (a + 1) == (a + 1)
    assert (a + 1) != (b + 1)
    assert tir.Add(a, a) != tir.Sub(a, a)


def test_rank_mismatch_is_rejected():
    A = tir.decl_buffer((4, 8), "float32", "A")
    with pytest.raises(ValueError, match="rank 2"):
        A[tir.const(0, "int64")]


def test_structural_equal_ignores_binder_names():
    f, g = _copy_func(), _copy_func()
    assert f != g
    assert tir.structural_equal(f, g)
    assert tir.structural_hash(f) == tir.structural_hash(g)


def test_structural_equal_sees_differences():
    f = _copy_func()
    h = tir.transform(f, lambda n: tir.FloatImm(n.dtype, 3.0) if isinstance(n, tir.FloatImm) else None)
    assert not tir.structural_equal(f, h)
    with pytest.raises(AssertionError, match="value"):
        tir.assert_structural_equal(f, h)


def test_transform_keeps_unchanged_objects_and_buffers_consistent():
    f = _copy_func()
    assert tir.transform(f, lambda n: None) is f
    n = tir.SizeVar("n", dt.int64)
    A = f.buffers[0]
    g = tir.transform(f, lambda node: None, lambda node: n if node is A.shape[0] else None)
    assert g.buffers[0].shape[0] is n
    loads = []
    tir.post_order_visit(g.body, lambda node: loads.append(node) if isinstance(node, tir.BufferLoad) else None)
    assert loads and all(ld.buffer is g.buffers[0] for ld in loads)


def _fresh_post_order(root) -> list:
    """The post-order of :func:`tir.post_order_visit` computed without its cache."""
    from tir.functor import children

    out, seen = [], set()

    def visit(n):
        if isinstance(n, tir.Buffer):
            if id(n) in seen:
                out.append(n)
                return
            seen.add(id(n))
        for c in children(n):
            visit(c)
        out.append(n)

    visit(root)
    return out


def test_cached_post_order_is_the_walk_of_each_root():
    from tir.functor import post_order_nodes

    f, g = _copy_func(), _copy_func()  # structurally equal, distinct objects
    first = []
    tir.post_order_visit(f.body, first.append)
    again = []
    tir.post_order_visit(f.body, again.append)
    assert [id(n) for n in first] == [id(n) for n in again] == [id(n) for n in _fresh_post_order(f.body)]
    other = post_order_nodes(g.body)
    assert [id(n) for n in other] == [id(n) for n in _fresh_post_order(g.body)]
    assert not {id(n) for n in other if isinstance(n, tir.Var)} & {id(n) for n in first if isinstance(n, tir.Var)}


def test_statement_walks_and_transform_see_statements_only():
    from tir.functor import post_order_stmts, pre_order_stmts, transform_stmts

    f = _copy_func()
    seen = []
    post_order_stmts(f, seen.append)
    order = ["BufferStore", "For", "For", "Block", "BlockRealize", "PrimFunc"]  # under the root block
    assert [type(n).__name__ for n in seen] == order
    entered = []
    pre_order_stmts(f, lambda n: entered.append(n) or not isinstance(n, tir.For))
    assert entered == seen[:1:-1]  # False from the outer loop skips what it holds

    visited = []

    def post(n):
        visited.append(type(n).__name__)
        if isinstance(n, tir.BufferStore):
            return tir.BufferStore(n.buffer, n.value + 1.0, n.indices)
        return None

    g = transform_stmts(f, post)
    assert visited == order
    loops_f = [n for n in seen if isinstance(n, tir.For)]
    loops_g = []
    post_order_stmts(g, lambda n: loops_g.append(n) if isinstance(n, tir.For) else None)
    assert g is not f and g.buffers == f.buffers
    assert [lp.loop_var for lp in loops_g] == [lp.loop_var for lp in loops_f]
    assert loops_g[0].body.value.b.value == 1.0
    assert transform_stmts(f, lambda n: None) is f

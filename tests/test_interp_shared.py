"""Evaluating repeated subtrees once (tir.interp_shared): the same values and the same errors
as evaluating the tree node by node, under guards that narrow the lanes."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from tir import expr as E
import tir.interp_shared as shared
from tir.functor import post_order_visit
from tir.interp import interpret
from tir.interp_data import InterpError
from tir.stmt import BufferStore

N = 8
FUNC = """
@T.prim_func
def f(A: T.Buffer(({n},), "int32"), B: T.Buffer(({n},), "int32")):
    for i in range({n}):
        with T.block("B"):
            vi = T.axis.spatial({n}, i)
            B[vi] = {value}
"""


def _guarded_load(index: str) -> str:
    return f"T.if_then_else(0 <= {index} and {index} < {N}, A[{index}], -1)"


def _ints(leaves):
    def grow(children):
        pair = st.tuples(children, children)
        return st.one_of(
            pair.map(lambda p: f"({p[0]} + {p[1]})"),
            pair.map(lambda p: f"({p[0]} - {p[1]})"),
            pair.map(lambda p: f"T.min({p[0]}, {p[1]})"),
            pair.map(lambda p: f"T.max({p[0]}, {p[1]})"),
            st.tuples(children, st.integers(1, 3)).map(lambda p: f"({p[0]} // {p[1]})"),
            children.map(_guarded_load),
            st.tuples(children, children, children, children).map(
                lambda p: f"T.if_then_else({p[0]} < {p[1]} or {p[1]} == {p[0]}, {p[2]}, {p[3]})"),
            st.tuples(children, children, children).map(
                lambda p: f"T.if_then_else(vi < {p[0]} and {p[0]} < {N}, A[{p[0]}] + {p[1]}, {p[2]})"),
        )
    return st.recursive(leaves, grow, max_leaves=6)


LEAVES = st.one_of(st.just("vi"), st.integers(-3, 10).map(str), st.just("A[vi]"))


def _run(text: str, data) -> "np.ndarray | str":
    func = tir.parse(text)
    out = np.zeros(N, np.int32)
    try:
        interpret(func, data.copy(), out)
    except InterpError as e:
        return f"error: {e}"
    return out


def _both(value: str, data, monkeypatch):
    text = FUNC.format(n=N, value=value)
    got = _run(text, data)
    with monkeypatch.context() as m:
        m.setattr(shared, "MIN_NODES", 10 ** 9)
        want = _run(text, data)
    return got, want


@settings(max_examples=60, deadline=None)
@given(pool=st.lists(_ints(LEAVES), min_size=2, max_size=4),
       picks=st.lists(st.integers(0, 3), min_size=4, max_size=10),
       data=st.lists(st.integers(-4, 12), min_size=N, max_size=N))
def test_shared_evaluation_matches_tree_evaluation(pool, picks, data):
    value = " + ".join(f"({pool[p % len(pool)]})" for p in picks)
    value = f"T.if_then_else(A[vi] < 5, {value}, {_guarded_load(pool[0])})"
    arr = np.array(data, np.int32)
    with pytest.MonkeyPatch.context() as mp:
        got, want = _both(value, arr, mp)
    if isinstance(want, str):
        assert got == want and "expects" not in want
    else:
        assert isinstance(got, np.ndarray) and np.array_equal(got, want)


def test_repeated_guarded_subtrees_are_shared_and_agree(monkeypatch):
    """A tree whose copies of one clipped index sit under different guards (the shape of
    grid_sample's bicubic kernel): the classes are found, and the values agree."""
    clip = "T.min(T.max(A[vi] - 2, 0), 7)"
    terms = [f"T.if_then_else({clip} + {k} < {N} and 0 <= {clip} - {k}, A[{clip} + {k}] * A[{clip} - {k}], {k})"
             for k in range(4)]
    value = " + ".join(terms * 2)
    func = tir.parse(FUNC.format(n=N, value=value))
    stores = []
    post_order_visit(func.body, lambda s: stores.append(s) if isinstance(s, BufferStore) else None)
    classes = shared.shared_classes(stores[0].value)
    assert classes is not None and len(set(classes.values())) >= 4
    data = np.array([3, 9, -1, 0, 12, 5, 7, 2], np.int32)
    got, want = _both(value, data, monkeypatch)
    assert np.array_equal(got, want)


def test_let_bound_trees_are_not_shared():
    func = tir.parse(FUNC.format(n=N, value="A[vi]"))
    stores = []
    post_order_visit(func.body, lambda s: stores.append(s) if isinstance(s, BufferStore) else None)
    load = stores[0].value
    x = E.Var("x", load.dtype)
    value = load
    for _ in range(40):
        value = E.Add(value, E.Let(x, load, E.Mul(x, x)))
    assert shared.shared_classes(value) is None
    plain = load
    for _ in range(40):
        plain = E.Add(plain, E.Mul(load, load))
    assert shared.shared_classes(plain) is not None  # the same tree without the Let

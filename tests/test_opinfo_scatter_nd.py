"""scatter_nd (attribute ``reduction``) recognised from what its opaque function computes:
literal TVMScript as TVM 0.27 prints it (the transpose of ``indices`` and the
``scatter_nd_generic`` ir_builder block), checked against a numpy reference first, and
functions that must abstain (no reduction agrees, a plain copy, scatter_elements' reading
alike). No TVM needed."""
from __future__ import annotations

import numpy as np
import pytest

import tir
from opinfo.api import analyze
from opinfo.recognize.scatter_nd import recognize_scatter_nd, reference, update_any_order
from tir.interp import interpret

HEADER = "# from tvm.script import ir as I\n# from tvm.script import tir as T\n\n"
RNG = np.random.default_rng(5)


def _func(text: str):
    node = tir.parse(HEADER + text)
    funcs = [f for _, f in node.prim_funcs()] if hasattr(node, "prim_funcs") else [node]
    assert len(funcs) == 1
    return funcs[0]


def _answer(func) -> list:
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


# scatter_nd(x (6, 4), indices (2, 1), updates (2, 4)) from gen/ops41 (reduction "add"), its
# combining expression made a placeholder.
SCATTER_ND = '''@T.prim_func(private=True)
def scatter_nd(x: T.Buffer((T.int64(6), T.int64(4)), "float32"), y1: T.Buffer((T.int64(2), T.int64(1)), "int64"), y2: T.Buffer((T.int64(2), T.int64(4)), "float32"), out_buf: T.Buffer((T.int64(6), T.int64(4)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    T_transpose = T.alloc_buffer((T.int64(1), T.int64(2)), "int64")
    for ax0, ax1 in T.grid(T.int64(1), T.int64(2)):
        with T.block("T_transpose"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(y1[v_ax1, v_ax0])
            T.writes(T_transpose[v_ax0, v_ax1])
            T_transpose[v_ax0, v_ax1] = y1[v_ax1, v_ax0]
    with T.block("scatter_nd_generic"):
        T.reads()
        T.writes()
        T.attr({"pragma_scope": "seq"})
        for v in range(T.int64(24)):
            out_buf[v // T.int64(4), v % T.int64(4)] = x[v // T.int64(4), v % T.int64(4)]
        for v in range(T.int64(2)):
            for v_1 in T.parallel(T.int64(4)):
                out_buf[(v_1 + T.int64(4) * T_transpose[v // T.int64(2), v % T.int64(2)]) // T.int64(4), (v_1 + T.int64(4) * T_transpose[v // T.int64(2), v % T.int64(2)]) % T.int64(4)] = COMBINE
'''
TARGET = 'out_buf[(v_1 + T.int64(4) * T_transpose[v // T.int64(2), v % T.int64(2)]) // T.int64(4), (v_1 + T.int64(4) * T_transpose[v // T.int64(2), v % T.int64(2)]) % T.int64(4)]'
UPDATE = 'y2[(v * T.int64(4) + v_1) // T.int64(4), (v * T.int64(4) + v_1) % T.int64(4)]'
COMBINES = {
    "update": UPDATE, "add": f"{TARGET} + {UPDATE}", "mul": f"{TARGET} * {UPDATE}",
    "min": f"T.min({TARGET}, {UPDATE})", "max": f"T.max({TARGET}, {UPDATE})",
}

# depth-2 indices into rank-3 data: x (2, 6, 5), indices (3, 2), updates (3, 5), "add"
DEPTH2 = '''@T.prim_func(private=True)
def scatter_nd(x: T.Buffer((T.int64(2), T.int64(6), T.int64(5)), "int32"), y1: T.Buffer((T.int64(3), T.int64(2)), "int64"), y2: T.Buffer((T.int64(3), T.int64(5)), "int32"), out_buf: T.Buffer((T.int64(2), T.int64(6), T.int64(5)), "int32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    T_transpose = T.alloc_buffer((T.int64(2), T.int64(3)), "int64")
    for ax0, ax1 in T.grid(T.int64(2), T.int64(3)):
        with T.block("T_transpose"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(y1[v_ax1, v_ax0])
            T.writes(T_transpose[v_ax0, v_ax1])
            T_transpose[v_ax0, v_ax1] = y1[v_ax1, v_ax0]
    with T.block("scatter_nd_generic"):
        T.reads()
        T.writes()
        T.attr({"pragma_scope": "seq"})
        for v in range(T.int64(60)):
            out_buf[v // T.int64(5) // T.int64(6), v // T.int64(5) % T.int64(6), v % T.int64(5)] = x[v // T.int64(5) // T.int64(6), v // T.int64(5) % T.int64(6), v % T.int64(5)]
        for v in range(T.int64(3)):
            for v_1 in T.parallel(T.int64(5)):
                out_buf[(v_1 + T.int64(5) * T_transpose[(v + T.int64(3)) // T.int64(3), (v + T.int64(3)) % T.int64(3)] + T.int64(30) * T_transpose[v // T.int64(3), v % T.int64(3)]) // T.int64(5) // T.int64(6), (v_1 + T.int64(5) * T_transpose[(v + T.int64(3)) // T.int64(3), (v + T.int64(3)) % T.int64(3)] + T.int64(30) * T_transpose[v // T.int64(3), v % T.int64(3)]) // T.int64(5) % T.int64(6), (v_1 + T.int64(5) * T_transpose[(v + T.int64(3)) // T.int64(3), (v + T.int64(3)) % T.int64(3)] + T.int64(30) * T_transpose[v // T.int64(3), v % T.int64(3)]) % T.int64(5)] = out_buf[(v_1 + T.int64(5) * T_transpose[(v + T.int64(3)) // T.int64(3), (v + T.int64(3)) % T.int64(3)] + T.int64(30) * T_transpose[v // T.int64(3), v % T.int64(3)]) // T.int64(5) // T.int64(6), (v_1 + T.int64(5) * T_transpose[(v + T.int64(3)) // T.int64(3), (v + T.int64(3)) % T.int64(3)] + T.int64(30) * T_transpose[v // T.int64(3), v % T.int64(3)]) // T.int64(5) % T.int64(6), (v_1 + T.int64(5) * T_transpose[(v + T.int64(3)) // T.int64(3), (v + T.int64(3)) % T.int64(3)] + T.int64(30) * T_transpose[v // T.int64(3), v % T.int64(3)]) % T.int64(5)] + y2[(v * T.int64(5) + v_1) // T.int64(5), (v * T.int64(5) + v_1) % T.int64(5)]
'''

# data (4, 1), indices (4, 1), updates (4, 1): scatter_nd, "add" (TVM does not wrap a
# negative index here, scatter_elements' lowering does)
ND_COLUMN = '''@T.prim_func(private=True)
def scatter_nd(x: T.Buffer((T.int64(4), T.int64(1)), "float32"), y1: T.Buffer((T.int64(4), T.int64(1)), "int64"), y2: T.Buffer((T.int64(4), T.int64(1)), "float32"), out_buf: T.Buffer((T.int64(4), T.int64(1)), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.block("root"):
    T_transpose = T.alloc_buffer((T.int64(1), T.int64(4)), "int64")
    for ax0, ax1 in T.grid(T.int64(1), T.int64(4)):
        with T.block("T_transpose"):
            v_ax0, v_ax1 = T.axis.remap("SS", [ax0, ax1])
            T.reads(y1[v_ax1, v_ax0])
            T.writes(T_transpose[v_ax0, v_ax1])
            T_transpose[v_ax0, v_ax1] = y1[v_ax1, v_ax0]
    with T.block("scatter_nd_generic"):
        T.reads()
        T.writes()
        T.attr({"pragma_scope": "seq"})
        for v in range(T.int64(4)):
            out_buf[v, T.int64(0)] = x[v, T.int64(0)]
        for v in range(T.int64(4)):
            for v_1 in T.parallel(T.int64(1)):
                out_buf[v_1 + T_transpose[v // T.int64(4), v % T.int64(4)], T.int64(0)] = out_buf[v_1 + T_transpose[v // T.int64(4), v % T.int64(4)], T.int64(0)] + y2[v + v_1, T.int64(0)]
'''

# scatter_elements(x (5, 1), indices (3, 1), updates (3, 1), axis=0, "add"): on
# non-negative indices it is scatter_nd's reading too
ELEMENTS_COLUMN = '''@T.prim_func(private=True)
def scatter_elements(x: T.Buffer((T.int64(5), T.int64(1)), "float32"), y1: T.Buffer((T.int64(3), T.int64(1)), "int64"), y2: T.Buffer((T.int64(3), T.int64(1)), "float32"), out_buf: T.Buffer((T.int64(5), T.int64(1)), "float32")):
    T.func_attr({"tir.noalias": True})
    with T.block("scatter_elements_generic"):
        T.reads()
        T.writes()
        T.attr({"pragma_scope": "seq"})
        for v in T.parallel(T.int64(5)):
            out_buf[v, T.int64(0)] = x[v, T.int64(0)]
        for v in T.parallel(T.int64(1)):
            for v_1 in range(T.int64(3)):
                out_buf[v * T.int64(5) + (y1[v * T.int64(3) + v_1, T.int64(0)] + T.Cast("int64", y1[v * T.int64(3) + v_1, T.int64(0)] < T.int64(0)) * T.int64(5)), T.int64(0)] = out_buf[v * T.int64(5) + (y1[v * T.int64(3) + v_1, T.int64(0)] + T.Cast("int64", y1[v * T.int64(3) + v_1, T.int64(0)] < T.int64(0)) * T.int64(5)), T.int64(0)] + y2[v * T.int64(3) + v_1, T.int64(0)]
'''


def _run(func, data, ind, upd):
    out = np.zeros_like(data)
    interpret(func, data, ind, upd, out)
    return out


@pytest.mark.parametrize("reduction", sorted(COMBINES))
def test_scatter_nd_reductions(reduction):
    func = _func(SCATTER_ND.replace("COMBINE", COMBINES[reduction]))
    data = RNG.standard_normal((6, 4)).astype("float32")
    upd = RNG.standard_normal((2, 4)).astype("float32")
    ind = np.array([[4], [1]], "int64")
    assert np.allclose(_run(func, data, ind, upd), reference(data, ind, upd, reduction))
    assert _answer(func) == [("scatter_nd", {"reduction": reduction})]
    op, = analyze(func).ops
    assert [o.role for o in op.operands] == ["data", "indices", "updates"]


def test_scatter_nd_depth_two():
    func = _func(DEPTH2)
    data = RNG.integers(-5, 6, (2, 6, 5)).astype("int32")
    upd = RNG.integers(-5, 6, (3, 5)).astype("int32")
    ind = np.array([[1, 2], [0, 5], [1, 2]], "int64")  # a repeated index: added twice
    assert np.array_equal(_run(func, data, ind, upd), reference(data, ind, upd, "add"))
    assert _answer(func) == [("scatter_nd", {"reduction": "add"})]
    for reduction, combine in (("max", "T.max({}, {})"), ("mul", "{} * {}")):
        line, = [l for l in DEPTH2.splitlines() if "= out_buf[" in l and "y2[" in l]
        lhs, rhs = line.split(" = ", 1)
        target, update = rhs.split(" + y2[")
        assert target == lhs.strip()
        text = DEPTH2.replace(line, lhs + " = " + combine.format(target, "y2[" + update))
        assert _answer(_func(text)) == [("scatter_nd", {"reduction": reduction})]


def test_update_in_any_order():
    data = np.zeros((3, 2), "float32")
    ind = np.array([[1], [1]], "int64")
    upd = np.array([[1, 2], [3, 4]], "float32")
    first, last = data.copy(), data.copy()
    first[1], last[1] = upd[0], upd[1]
    mixed = last.copy()
    mixed[1, 0] = 1
    for got in (first, last, mixed):
        assert update_any_order(data, ind, upd, got)
    wrong = last.copy()
    wrong[1, 1] = 6  # the sum
    assert not update_any_order(data, ind, upd, wrong)
    wrong = last.copy()
    wrong[0, 0] = 9  # an element no index aims at
    assert not update_any_order(data, ind, upd, wrong)


@pytest.mark.parametrize("combine", [
    f"{TARGET} - {UPDATE}",            # not a Relax reduction
    f"({TARGET} + {UPDATE}) * T.float32(0.5)",  # mean: scatter_elements', not scatter_nd's
    TARGET.replace("out_buf", "x"),     # writes the data back: a copy
    f"{UPDATE} + T.float32(1)",
])
def test_no_reduction_agrees_abstains(combine):
    func = _func(SCATTER_ND.replace("COMBINE", combine))
    assert _answer(func) == []


def test_wrong_position_abstains():
    # the scatter lands one row off (mod 6): not data[indices]
    index = "T.int64(4) * T_transpose[v // T.int64(2), v % T.int64(2)]"
    text = SCATTER_ND.replace("COMBINE", COMBINES["add"])
    assert text.count(index) == 4
    func = _func(text.replace(
        index, "T.int64(4) * ((T_transpose[v // T.int64(2), v % T.int64(2)] + T.int64(1)) % T.int64(6))"))
    assert _answer(func) == []


def test_column_scatter_nd_is_not_scatter_elements():
    func = _func(ND_COLUMN)
    data = RNG.standard_normal((4, 1)).astype("float32")
    upd = RNG.standard_normal((4, 1)).astype("float32")
    ind = np.array([[3], [0], [3], [2]], "int64")
    assert np.allclose(_run(func, data, ind, upd), reference(data, ind, upd, "add"))
    assert _answer(func) == [("scatter_nd", {"reduction": "add"})]


def test_both_readings_alike_follow_the_compute_tag():
    func = _func(ELEMENTS_COLUMN)
    assert recognize_scatter_nd(func)  # read as scatter_nd on its own, and as scatter_elements:
    assert [name for name, _ in _answer(func)] == ["scatter_elements"]  # TVM's tag says which
    # index_put(accumulate=True) computes the same in a block of its own name: not named
    other = _func(ELEMENTS_COLUMN.replace("scatter_elements_generic", "index_put_generic"))
    assert _answer(other) == []


def test_scatter_elements_signature_is_not_scatter_nd():
    # a (5, 2) scatter_elements: updates (3, 2) are not indices' (3,) + data's (2,)
    wide = _func(ELEMENTS_COLUMN.replace("(T.int64(5), T.int64(1))", "(T.int64(5), T.int64(2))")
                 .replace("(T.int64(3), T.int64(1))", "(T.int64(3), T.int64(2))"))
    assert recognize_scatter_nd(wide) == ()

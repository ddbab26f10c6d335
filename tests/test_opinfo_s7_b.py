"""bucketize (TVM's searchsorted extern) and the forms of quantize / dequantize / argmax /
argmin whose attributes the loops cannot tell, so that opinfo abstains.

bucketize is written here the way TVM 0.27 legalizes it (one opaque block, a binary search
per element in two one-element local buffers), for random shapes, dtypes, sides, output
dtypes and either parameter order; variants that compute something else are not named.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
import tir.topi as topi
from opinfo.api import analyze

HEADER = "# from tvm.script import ir as I\n# from tvm.script import tirx as T\n\n"


def _i64(n) -> str:
    return f"T.int64({n})"


def _flat_indices(shape) -> str:
    """``v`` unravelled over ``shape`` the way TVM's extern writes it."""
    out = []
    for d, extent in enumerate(shape):
        inner = math.prod(shape[d + 1:])
        e = "v" if inner == 1 else f"v // {_i64(inner)}"
        if d > 0:
            e = f"{e} % {_i64(extent)}"
        out.append(e)
    return ", ".join(out)


def bucketize_text(shape, nb: int, dtype="float32", out="int64", right=False, boundaries_first=True,
                   cmp=None, step="+ 1", written="buffer") -> str:
    """TVMScript of ``bucketize`` (``cmp`` / ``step`` / ``written`` alter the search for the
    negative cases)."""
    cmp = cmp or ("<=" if right else "<")
    dims = ", ".join(_i64(s) for s in shape)
    y = f'y: T.Buffer(({_i64(nb)},), "{dtype}")'
    x = f'x: T.Buffer(({dims},), "{dtype}")'
    params = f"{y}, {x}" if boundaries_first else f"{x}, {y}"
    idx = _flat_indices(shape)
    if out == "int64":
        zero, n, one, sh = "T.int64(0)", _i64(nb), "T.int64(1)", "T.int64(1)"
        at = 'buffer[T.int64(0)] + (buffer_1[T.int64(0)] - buffer[T.int64(0)] >> T.int64(1))'
    else:
        zero, n, one, sh = "0", str(nb), "1", "1"
        at = ('T.Cast("int64", buffer[T.int64(0)]) + '
              '(T.Cast("int64", buffer_1[T.int64(0)] - buffer[T.int64(0)]) >> T.int64(1))')
    mid = f"buffer[T.int64(0)] + (buffer_1[T.int64(0)] - buffer[T.int64(0)] >> {sh})"
    step = step.replace("1", one)
    return HEADER + f'''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f({params}, searchsorted: T.Buffer(({dims},), "{out}")):
        with T.sblock("searchsorted"):
            T.reads()
            T.writes()
            for v in T.parallel({_i64(math.prod(shape))}):
                buffer = T.alloc_local((T.int64(1),), "{out}")
                buffer_1 = T.alloc_local((T.int64(1),), "{out}")
                buffer[T.int64(0)] = {zero}
                buffer_1[T.int64(0)] = {n}
                while buffer[T.int64(0)] < buffer_1[T.int64(0)]:
                    if y[{at}] {cmp} x[{idx}]:
                        buffer[T.int64(0)] = {mid} {step}
                    else:
                        buffer_1[T.int64(0)] = {mid}
                searchsorted[{idx}] = {written}[T.int64(0)]
'''


def _func(text: str):
    mod = tir.parse(text)
    (_, func), = mod.prim_funcs()
    return func


def _ops(func):
    return [(o.name, dict(o.attrs)) for o in analyze(func).ops]


@settings(max_examples=25, deadline=None)
@given(shape=st.lists(st.integers(1, 5), min_size=1, max_size=3), nb=st.integers(1, 7),
       dtype=st.sampled_from(["float32", "float16", "int32", "int64"]), out=st.sampled_from(["int32", "int64"]),
       right=st.booleans(), boundaries_first=st.booleans())
def test_bucketize_is_named_with_its_side_and_output_dtype(shape, nb, dtype, out, right, boundaries_first):
    func = _func(bucketize_text(tuple(shape), nb, dtype, out, right, boundaries_first))
    info = analyze(func)
    assert [(o.name, dict(o.attrs)) for o in info.ops] == [("bucketize", {"out_int32": out == "int32", "right": right})]
    op = info.ops[0]
    assert [o.role for o in op.operands] == ["input_tensor", "boundaries"]
    assert op.operands[1].param == (0 if boundaries_first else 1)
    assert op.output.param == 2
    # and it is what the interpreter computes: numpy's searchsorted on that side
    rng = np.random.default_rng(0)
    bounds = np.sort(rng.integers(-3, 4, nb)).astype(dtype)
    vals = rng.integers(-5, 6, shape).astype(dtype)
    args = [bounds, vals] if boundaries_first else [vals, bounds]
    got = tir.run(func, *args)
    np.testing.assert_array_equal(got, np.searchsorted(bounds, vals, side="right" if right else "left"))


def test_bucketize_with_equal_one_dimensional_shapes_finds_which_input_is_sorted():
    for first in (True, False):
        func = _func(bucketize_text((6,), 6, right=True, boundaries_first=first))
        (op,) = analyze(func).ops
        assert op.name == "bucketize" and op.operands[1].param == (0 if first else 1)


@pytest.mark.parametrize("change", [
    {"cmp": ">"},  # a search of a descending sequence
    {"cmp": ">="},
    {"cmp": "=="},
])
def test_other_searches_are_not_bucketize(change):
    func = _func(bucketize_text((3, 4), 5, **change))
    assert _ops(func) == []


@pytest.mark.parametrize("step", ["+ 2", "- 1", "+ 0"])
def test_a_loop_not_shown_to_end_is_never_run(step, monkeypatch):
    """Only TVM's step (``lo = mid + 1`` / ``hi = mid``) is known to end the loop; any other
    is refused before the interpreter runs it (``lo = mid - 1`` would loop forever)."""
    import opinfo.recognize.bucketize as bucketize

    def never(*args, **kwargs):
        raise AssertionError("ran a loop that may not end")

    monkeypatch.setattr(bucketize, "run", never)
    func = _func(bucketize_text((3, 4), 5, step=step))
    assert bucketize.recognize_bucketize(func) is None
    assert _ops(func) == []


def test_writing_the_upper_end_is_the_same_search():
    # the loop stops with lo == hi: storing hi is the same answer
    func = _func(bucketize_text((2, 3), 4, right=True, written="buffer_1"))
    assert _ops(func) == [("bucketize", {"out_int32": False, "right": True})]


def test_no_boundaries_is_not_named():
    # both sides give 0 everywhere: the side cannot be told
    func = _func(bucketize_text((3, 4), 0))
    assert _ops(func) == []


def test_float_output_is_not_named():
    text = bucketize_text((4,), 3)
    for old, new in (('searchsorted: T.Buffer((T.int64(4),), "int64")', 'searchsorted: T.Buffer((T.int64(4),), "float32")'),
                     ("searchsorted[v] = buffer[T.int64(0)]", 'searchsorted[v] = T.Cast("float32", buffer[T.int64(0)])')):
        assert old in text
        text = text.replace(old, new)
    assert _ops(_func(text)) == []


# ------------------------------------------------------------------ ambiguous attributes

@pytest.mark.parametrize("op", ["quantize", "dequantize"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_one_scale_value_names_no_axis_above_rank_one(op, axis):
    """One scale / zero point: the loops are the same for every axis -- not named."""
    xt, qt = ("float32", "int8") if op == "quantize" else ("int8", "float32")
    funcs = [topi.lower(op, [((3, 4), xt), ((1,), "float32"), ((1,), "int8")], axis=a) for a in (axis, 0)]
    assert tir.structural_equal(funcs[0], funcs[1])
    assert _ops(funcs[0]) == []


@pytest.mark.parametrize("op", ["quantize", "dequantize"])
def test_one_scale_value_of_a_vector_is_axis_zero(op):
    xt = "float32" if op == "quantize" else "int8"
    func = topi.lower(op, [((5,), xt), ((1,), "float32"), ((1,), "int8")], axis=-1)
    ((name, attrs),) = _ops(func)
    assert name == op and attrs["axis"] == 0


@pytest.mark.parametrize("op", ["argmax", "argmin"])
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_arg_reduction_over_axis_zero_or_all_is_not_named(op, keepdims):
    """For a vector, axis=0 and axis=None give the same function; the scorer and Relax
    record them differently, so neither is claimed."""
    a = topi.lower(op, [((5,), "float32")], axis=0, keepdims=keepdims)
    b = topi.lower(op, [((5,), "float32")], axis=None, keepdims=keepdims)
    assert tir.structural_equal(a, b)
    assert _ops(a) == []

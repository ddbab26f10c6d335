"""Ops the lowering library now builds (``repeat``, ``tril``/``triu``, ``outer``, ``std``,
``logical_xor``, ``log_add_exp``), so that answers naming them can be confirmed by
:func:`opinfo.verify_op`: round trips through ``opinfo.analyze`` with random attributes,
the answer confirmed by re-lowering. (Against TVM: ``tools/relower_audit.py`` over the
generated corpora confirms TVM's functions for these ops, 93 of them.)"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import opinfo
from tir import topi

SETTINGS = settings(max_examples=25, deadline=None)


def _round_trip(op, inputs, attrs):
    func = topi.lower(op, inputs, **attrs)
    (found,) = opinfo.analyze(func).ops
    assert opinfo.verify_op(func, found) is True
    return found.name, {k: (list(v) if isinstance(v, tuple) else v) for k, v in dict(found.attrs).items()}


@SETTINGS
@given(st.lists(st.integers(2, 5), min_size=1, max_size=3), st.integers(2, 3), st.data())
def test_repeat(shape, repeats, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    assert _round_trip("repeat", [(tuple(shape), "float32")], dict(repeats=repeats, axis=axis)) == \
        ("repeat", {"repeats": repeats, "axis": axis})


@SETTINGS
@given(st.sampled_from(["tril", "triu"]), st.lists(st.integers(2, 5), min_size=2, max_size=3), st.integers(-2, 2))
def test_trilu(op, shape, k):
    assert _round_trip(op, [(tuple(shape), "float32")], dict(k=k)) == (op, {"k": k})


@SETTINGS
@given(st.integers(2, 6), st.integers(2, 6))
def test_outer(m, n):
    assert _round_trip("outer", [((m,), "float32"), ((n,), "float32")], {}) == ("outer", {})


@SETTINGS
@given(st.lists(st.integers(2, 5), min_size=2, max_size=3), st.booleans(), st.data())
def test_std(shape, keepdims, data):
    axes = sorted(data.draw(st.sets(st.integers(0, len(shape) - 1), min_size=1, max_size=len(shape) - 1)))
    assert _round_trip("std", [(tuple(shape), "float32")], dict(axis=axes, keepdims=keepdims)) == \
        ("std", {"axis": axes, "keepdims": keepdims})


@SETTINGS
@given(st.sampled_from([("logical_xor", "bool"), ("log_add_exp", "float32")]),
       st.lists(st.integers(2, 5), min_size=1, max_size=3))
def test_binary(op_dtype, shape):
    op, dtype = op_dtype
    assert _round_trip(op, [(tuple(shape), dtype), ((shape[-1],), dtype)], {}) == (op, {})


def test_values():
    from tir import run

    x = np.arange(12, dtype="float32").reshape(3, 4)
    np.testing.assert_array_equal(run(topi.lower("repeat", [((3, 4), "float32")], repeats=2, axis=0), x),
                                  np.repeat(x, 2, axis=0))
    np.testing.assert_array_equal(run(topi.lower("tril", [((3, 4), "float32")], k=1), x), np.tril(x, 1))
    np.testing.assert_array_equal(run(topi.lower("triu", [((3, 4), "float32")], k=-1), x), np.triu(x, -1))
    np.testing.assert_allclose(run(topi.lower("std", [((3, 4), "float32")], axis=[1]), x), x.std(axis=1), rtol=1e-6)
    a, c = np.array([1.0, 2.0], "float32"), np.array([3.0, 4.0, 5.0], "float32")
    np.testing.assert_array_equal(run(topi.lower("outer", [((2,), "float32"), ((3,), "float32")]), a, c),
                                  np.outer(a, c))


@SETTINGS
@given(st.lists(st.sampled_from([1, 2]), min_size=3, max_size=3), st.lists(st.integers(0, 1), min_size=6, max_size=6),
       st.lists(st.sampled_from([1, 2]), min_size=3, max_size=3), st.sampled_from([1, 2]))
def test_conv3d_transpose(strides, padding, dilation, groups):
    inputs = [((1, 4, 3, 4, 3), "float32"), ((4, 2, 2, 2, 2), "float32")]
    attrs = dict(strides=strides, padding=padding, dilation=dilation, groups=groups)
    name, got = _round_trip("nn.conv3d_transpose", inputs, attrs)
    assert name == "nn.conv3d_transpose"
    assert {k: got[k] for k in attrs} == attrs and got["output_padding"] == [0, 0, 0]


@SETTINGS
@given(st.sampled_from([((2, 3, 4, 5), 1, [2, 3]), ((2, 4, 5, 3), 3, [1, 2]), ((1, 3, 6), 1, [2]),
                        ((2, 3, 4, 5, 2), 1, [2, 3, 4])]), st.sampled_from([1e-5, 1e-3]))
def test_instance_norm(case, epsilon):
    shape, ca, axes = case
    c = shape[ca]
    inputs = [(shape, "float32"), ((c,), "float32"), ((c,), "float32")]
    assert _round_trip("nn.instance_norm", inputs, dict(channel_axis=ca, axes=axes, epsilon=epsilon)) == \
        ("nn.instance_norm", {"channel_axis": ca, "axes": axes, "epsilon": epsilon, "center": True, "scale": True})

"""repeat, nn.pixel_shuffle, gather_elements, tril/triu, one_hot and nn.prelu in the forms
TVM 0.27's LegalizeOps writes them (topi's ``te.compute`` bodies): each built form is first
run on the interpreter against a numpy reference of the op (so it really is the op), then
must be recognised with its exact attributes, keep a sensible pattern kind, and after loops
are split and reordered be recognised the same or abstain (never another answer)."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings, strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedule_helpers import random_schedule  # noqa: E402

from opinfo.api import analyze  # noqa: E402
from tir import dtype as dt  # noqa: E402
from tir.builder import Builder  # noqa: E402
from tir.expr import EQ, Cast, FloorDiv, FloorMod, GE, LE, Select, const  # noqa: E402
from tir.interp import interpret  # noqa: E402
from tir.topi import lower_into  # noqa: E402
from tir.verifier import verify  # noqa: E402

F32, I32, I64 = "float32", "int32", "int64"
RNG = np.random.default_rng(0)


def _names(n):
    return [f"ax{d}" for d in range(n)]


def _answer(func) -> list:
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


def _run(func, inputs, out_shape, out_dtype="float32"):
    out = np.zeros(out_shape, dtype=out_dtype)
    interpret(func, *inputs, out)
    return out


def _check(func, inputs, want, op, attrs, kinds, out_dtype="float32"):
    """The form computes ``want``; it is ``op`` with ``attrs``; scheduled it stays so or abstains."""
    verify(func)
    np.testing.assert_allclose(_run(func, inputs, want.shape, out_dtype), want, rtol=1e-6)
    info = analyze(func)
    assert [(o.name, o.to_json()["attrs"]) for o in info.ops] == [(op, attrs)]
    assert info.kind in kinds, info.kind
    for seed in (1, 2):
        sched = random_schedule(func, seed)
        np.testing.assert_allclose(_run(sched, inputs, want.shape, out_dtype), want, rtol=1e-6)
        got = _answer(sched)
        assert got in ([], [(op, attrs)]), (seed, got)


def _x(shape):
    return RNG.standard_normal(shape).astype(np.float32)


shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3)


# ------------------------------------------------------------------ repeat
def repeat_form(shape, repeats, axis):
    """``topi.repeat``: ``x[..., v // repeats, ...]``."""
    b = Builder()
    x = b.placeholder(shape, F32, "x")
    out = list(shape)
    out[axis] *= repeats
    r = const(repeats, I64)
    y = b.compute("T_repeat", out, lambda *i: x[tuple(FloorDiv(v, r) if d == axis else v for d, v in enumerate(i))],
                  names=_names(len(out)))
    return b.build([x], [y])


@settings(max_examples=25)
@given(shapes, st.integers(2, 3), st.data())
def test_repeat(shape, repeats, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x = _x(shape)
    _check(repeat_form(shape, repeats, axis), [x], np.repeat(x, repeats, axis=axis),
           "repeat", {"repeats": repeats, "axis": axis}, {"injective"})


def test_repeat_after_flatten_is_axis_none():
    """``repeat(axis=None)`` flattens first: a reshape block feeds the repeat (Relax writes
    it even for 1-D data, never for a given axis); read as one repeat with axis None."""
    b = Builder()
    x = b.placeholder((2, 3), F32, "x")
    flat = lower_into(b, "reshape", [x], shape=[6])
    y = b.compute("T_repeat", (12,), lambda i: flat[FloorDiv(i, const(2, I64))], names=["ax0"])
    assert _answer(b.build([x], [y])) == [("repeat", {"repeats": 2, "axis": None})]


# ------------------------------------------------------------------ pixel_shuffle
def pixel_shuffle_form(shape, r):
    """``topi.nn.pixel_shuffle``: channel ``c*r*r + (h%r)*r + w%r`` at ``(h//r, w//r)``."""
    b = Builder()
    x = b.placeholder(shape, F32, "x")
    *lead, c, h, w = shape
    rr = const(r, I64)

    def body(*i):
        cc, hh, ww = i[-3:]
        cin = cc * rr * rr + FloorMod(hh, rr) * rr + FloorMod(ww, rr)
        return x[tuple(i[:-3]) + (cin, FloorDiv(hh, rr), FloorDiv(ww, rr))]

    out = list(lead) + [c // (r * r), h * r, w * r]
    return b.build([x], [b.compute("PixelShuffle", out, body, names=_names(len(out)))])


def _pixel_shuffle_ref(x, r):
    *lead, c, h, w = x.shape
    y = x.reshape(*lead, c // (r * r), r, r, h, w)
    n = len(lead)
    y = y.transpose(*range(n), n, n + 3, n + 1, n + 4, n + 2)
    return y.reshape(*lead, c // (r * r), h * r, w * r)


@settings(max_examples=20)
@given(st.lists(st.integers(1, 2), max_size=1), st.integers(1, 2), st.integers(2, 3),
       st.integers(1, 3), st.integers(1, 3))
def test_pixel_shuffle(lead, c, r, h, w):
    shape = list(lead) + [c * r * r, h, w]
    x = _x(shape)
    if h == w == 1:
        # one pixel: the shuffle is a reshape, and the reshape family names it
        got = _answer(pixel_shuffle_form(shape, r))
        assert got in ([], [("reshape", {"shape": list(_pixel_shuffle_ref(x, r).shape)})]), got
        return
    _check(pixel_shuffle_form(shape, r), [x], _pixel_shuffle_ref(x, r),
           "nn.pixel_shuffle", {"upscale_factor": r}, {"injective"})


# ------------------------------------------------------------------ gather_elements
def gather_form(dshape, ishape, axis, idx_dtype=I64):
    """``topi.gather``: ``data[..., indices[i...], ...]``, output shaped like the indices."""
    b = Builder()
    x = b.placeholder(dshape, F32, "x")
    ind = b.placeholder(ishape, idx_dtype, "x1")

    def body(*i):
        v = ind[i] if idx_dtype == I64 else Cast(dt.dtype(I64), ind[i])
        return x[tuple(v if d == axis else o for d, o in enumerate(i))]

    return b.build([x, ind], [b.compute("T_gather", ishape, body, names=_names(len(ishape)))])


@settings(max_examples=25)
@given(st.lists(st.integers(1, 4), min_size=2, max_size=3), st.data())
def test_gather_elements(dshape, data):
    axis = data.draw(st.integers(0, len(dshape) - 1))
    ishape = [data.draw(st.integers(1, n)) if d != axis else data.draw(st.integers(1, 4))
              for d, n in enumerate(dshape)]
    idx_dtype = data.draw(st.sampled_from([I64, I32]))
    x = _x(dshape)
    ind = RNG.integers(0, dshape[axis], size=ishape).astype(idx_dtype)
    sub = x[tuple(slice(0, n) if d != axis else slice(None) for d, n in enumerate(ishape))]
    want = np.take_along_axis(sub, ind.astype(np.int64), axis=axis)
    _check(gather_form(dshape, ishape, axis, idx_dtype), [x, ind], want,
           "gather_elements", {"axis": axis}, {"injective", "opaque"})


def test_take_is_not_gather_elements():
    b = Builder()
    x = b.placeholder((5, 4), F32, "x")
    idx = b.placeholder((3,), I64, "x1")
    assert _answer(b.build([x, idx], [lower_into(b, "take", [x, idx], axis=1)])) == [("take", {"axis": 1})]


# ------------------------------------------------------------------ tril / triu
def trilu_form(shape, k, upper, cast_k):
    """``topi.trilu``: ``Select(row <= col - k, x, 0)`` (upper) or ``row >= col - k``; ``k``
    passes through int32 when ``cast_k`` (topi casts it, then the subtraction promotes it)."""
    b = Builder()
    x = b.placeholder(shape, F32, "x")
    kk = const(k, I64)
    if cast_k:
        kk = Cast(dt.dtype(I64), Cast(dt.dtype(I32), kk))

    def body(*i):
        row, col = i[-2], i[-1]
        keep = (LE if upper else GE)(row, col - kk)
        return Select(keep, x[i], const(0.0, F32))

    return b.build([x], [b.compute("trilu", shape, body, names=[f"i{d}" for d in range(len(shape))])])


@settings(max_examples=40)
@given(st.lists(st.integers(1, 3), max_size=1), st.integers(1, 4), st.integers(1, 4),
       st.integers(-4, 4), st.booleans(), st.booleans())
def test_trilu(lead, rows, cols, k, upper, cast_k):
    shape = list(lead) + [rows, cols]
    x = _x(shape)
    want = np.triu(x, k) if upper else np.tril(x, k)
    func = trilu_form(shape, k, upper, cast_k)
    # k is read from the test itself, also where every position (or none) is kept
    _check(func, [x], want, "triu" if upper else "tril", {"k": k}, {"elemwise"})


# ------------------------------------------------------------------ one_hot
def one_hot_form(ishape, depth, axis, on, off):
    """``topi.one_hot``: ``Select(indices[i.. without axis] == v_axis, on, off)``."""
    b = Builder()
    ind = b.placeholder(ishape, I64, "x")
    out = list(ishape)
    out.insert(axis, depth)

    def body(*i):
        rest = tuple(v for d, v in enumerate(i) if d != axis)
        return Select(EQ(ind[rest], i[axis]), const(on, F32), const(off, F32))

    return b.build([ind], [b.compute("T_one_hot", out, body, dtype=F32, names=_names(len(out)))])


@settings(max_examples=25)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=2), st.integers(2, 5), st.data(),
       st.sampled_from([(1.0, 0.0), (5.0, -1.0), (0.5, 2.0)]))
def test_one_hot(ishape, depth, data, values):
    axis = data.draw(st.integers(0, len(ishape)))
    on, off = values
    ind = RNG.integers(0, depth, size=ishape).astype(np.int64)
    hot = np.expand_dims(ind, axis) == np.arange(depth).reshape([-1 if d == axis else 1 for d in range(len(ishape) + 1)])
    want = np.where(hot, on, off).astype(np.float32)
    # the last axis is reported as -1, Relax's default, whatever the rank
    _check(one_hot_form(ishape, depth, axis, on, off), [ind], want, "one_hot",
           {"depth": depth, "axis": -1 if axis == len(ishape) else axis, "on_value": on, "off_value": off},
           {"broadcast", "injective"})


# ------------------------------------------------------------------ prelu
def prelu_form(shape, axis):
    """``topi.nn.prelu``: ``Select(x > 0, x, x * slope[i_axis])``."""
    b = Builder()
    x = b.placeholder(shape, F32, "x")
    s = b.placeholder((shape[axis],), F32, "alpha")
    zero = const(0.0, F32)
    y = b.compute("T_prelu", shape, lambda *i: Select(x[i] > zero, x[i], x[i] * s[i[axis]]),
                  names=_names(len(shape)))
    return b.build([x, s], [y])


@settings(max_examples=25)
@given(shapes, st.data())
def test_prelu(shape, data):
    axis = data.draw(st.integers(0, len(shape) - 1))
    x, a = _x(shape), _x((shape[axis],))
    want = np.where(x > 0, x, x * a.reshape([-1 if d == axis else 1 for d in range(len(shape))]))
    _check(prelu_form(shape, axis), [x, a], want, "nn.prelu", {"axis": axis}, {"elemwise", "broadcast"})


def test_prelu_in_a_fused_kernel():
    """``add`` then ``prelu`` in one PrimFunc (FuseOps): the prelu reads the sum's buffer."""
    b = Builder()
    x, y = b.placeholder((2, 3, 4), F32, "x"), b.placeholder((2, 3, 4), F32, "y")
    s = b.placeholder((3,), F32, "alpha")
    t = b.compute("T_add", (2, 3, 4), lambda *i: x[i] + y[i], names=_names(3))
    zero = const(0.0, F32)
    out = b.compute("T_prelu", (2, 3, 4), lambda *i: Select(t[i] > zero, t[i], t[i] * s[i[1]]), names=_names(3))
    assert _answer(b.build([x, y, s], [out])) == [("add", {}), ("nn.prelu", {"axis": 1})]


def test_leaky_relu_is_not_prelu():
    """A constant slope (leaky_relu's form) is no prelu."""
    b = Builder()
    x = b.placeholder((2, 3), F32, "x")
    zero = const(0.0, F32)
    y = b.compute("compute", (2, 3), lambda *i: Select(x[i] > zero, x[i], x[i] * const(0.1, F32)), names=_names(2))
    assert all(n != "nn.prelu" for n, _ in _answer(b.build([x], [y])))


# ------------------------------------------------------------------ near misses
def test_depth_to_space_dcr_is_not_pixel_shuffle():
    """DCR order (channel ``((h%r)*r + w%r)*C + c``) moves other elements: not pixel_shuffle."""
    b = Builder()
    x = b.placeholder((1, 8, 2, 3), F32, "x")
    r, c2 = const(2, I64), const(2, I64)

    def body(n, c, h, w):
        return x[n, (FloorMod(h, r) * r + FloorMod(w, r)) * c2 + c, FloorDiv(h, r), FloorDiv(w, r)]

    y = b.compute("DepthToSpace", (1, 2, 4, 6), body, names=_names(4))
    assert all(n != "nn.pixel_shuffle" for n, _ in _answer(b.build([x], [y])))


def test_floordiv_not_covering_the_axis_is_not_repeat():
    """``x[v // 2]`` with an output longer than twice the input's axis is no repeat."""
    b = Builder()
    x = b.placeholder((3, 4), F32, "x")
    y = b.compute("T_up", (3, 6), lambda i, j: x[i, FloorDiv(j, const(2, I64))], names=_names(2))
    assert all(n != "repeat" for n, _ in _answer(b.build([x], [y])))


def test_mask_read_from_a_tensor_is_not_trilu():
    """``Select(m[i, j] >= 0, x, 0)``: the kept positions come from data, not from ``k``."""
    b = Builder()
    x, m = b.placeholder((3, 4), F32, "x"), b.placeholder((3, 4), I64, "m")
    y = b.compute("masked", (3, 4), lambda i, j: Select(GE(m[i, j], const(0, I64)), x[i, j], const(0.0, F32)),
                  names=_names(2))
    assert all(n not in ("tril", "triu") for n, _ in _answer(b.build([x, m], [y])))


def test_band_mask_is_not_trilu():
    """A two-sided band ``Select(i >= j - 1 and i <= j + 1, x, 0)`` is neither tril nor triu."""
    b = Builder()
    x = b.placeholder((4, 4), F32, "x")
    one = const(1, I64)
    y = b.compute("band", (4, 4), lambda i, j: Select(GE(i, j - one) & LE(i, j + one), x[i, j], const(0.0, F32)),
                  names=_names(2))
    assert all(n not in ("tril", "triu") for n, _ in _answer(b.build([x], [y])))

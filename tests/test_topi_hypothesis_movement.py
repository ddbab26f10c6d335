"""Hypothesis properties of the tir.topi data-movement ops: draw shapes and attributes,
lower, interpret, compare with the numpy function of the same meaning."""
import numpy as np
from hypothesis import given, strategies as st

from tests.topi_draw import SETTINGS, axes_of, close, data, dims, floats, run


# ---------------------------------------------------------------- data movement
@SETTINGS
@given(dims, st.data())
def test_permute_dims(shape, draw):
    perm = draw.draw(st.one_of(st.none(), st.permutations(range(len(shape)))))
    axes = None if perm is None else [a - len(shape) if draw.draw(st.booleans()) else a for a in perm]
    x = data(shape)
    close(run("permute_dims", [x], axes=axes), np.transpose(x, perm))


@st.composite
def reshape_target(draw, total):
    """A shape of ``total`` elements (one extent possibly written as -1)."""
    shape, left = [], total
    while left > 1 and len(shape) < 4:
        d = draw(st.sampled_from([f for f in range(1, left + 1) if left % f == 0]))
        shape.append(d)
        left //= d
    shape.append(left)
    shape = draw(st.permutations(shape + [1] * draw(st.integers(0, 1))))
    if draw(st.booleans()):
        shape[draw(st.integers(0, len(shape) - 1))] = -1
    return shape


@SETTINGS
@given(dims, st.data())
def test_reshape(shape, draw):
    x = data(shape)
    target = draw.draw(reshape_target(x.size))
    close(run("reshape", [x], shape=target), x.reshape(target))


@SETTINGS
@given(dims, st.data())
def test_expand_dims(shape, draw):
    n = draw.draw(st.integers(1, 2))
    axes = draw.draw(axes_of(len(shape) + n, min_size=n, max_size=n))
    axis = axes[0] if n == 1 and draw.draw(st.booleans()) else axes
    x = data(shape)
    close(run("expand_dims", [x], axis=axis), np.expand_dims(x, tuple(axes)))


@SETTINGS
@given(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=1, max_size=4), st.data())
def test_squeeze(shape, draw):
    units = [d for d, e in enumerate(shape) if e == 1]
    axes = draw.draw(st.one_of(st.none(), st.lists(st.sampled_from(units), unique=True) if units else st.none()))
    axes = None if axes is None else [a - len(shape) if draw.draw(st.booleans()) else a for a in axes]
    axis = axes[0] if axes and len(axes) == 1 and draw.draw(st.booleans()) else axes
    x = data(shape)
    close(run("squeeze", [x], axis=axis), np.squeeze(x, None if axes is None else tuple(axes)))


@SETTINGS
@given(dims, st.integers(1, 3), st.data())
def test_concat(shape, n, draw):
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    xs = []
    for k in range(n):
        s = list(shape)
        s[axis] = draw.draw(st.integers(1, 3))
        xs.append(data(s, k))
    close(run("concat", xs, axis=axis), np.concatenate(xs, axis=axis))


@SETTINGS
@given(dims, st.integers(1, 3), st.data())
def test_stack(shape, n, draw):
    axis = draw.draw(st.integers(-len(shape) - 1, len(shape)))
    xs = [data(shape, k) for k in range(n)]
    close(run("stack", xs, axis=axis), np.stack(xs, axis=axis))


@SETTINGS
@given(dims, st.data())
def test_strided_slice(shape, draw):
    axes = draw.draw(axes_of(len(shape)))
    ext = [shape[a] for a in axes]
    begin = [draw.draw(st.integers(-e - 2, e + 2)) for e in ext]
    end = [draw.draw(st.integers(-e - 2, e + 2)) for e in ext]
    strides = [draw.draw(st.sampled_from([-3, -2, -1, 1, 1, 2, 3])) for _ in ext]
    key = [slice(None)] * len(shape)
    for a, b, e, s in zip(axes, begin, end, strides):
        key[a] = slice(b, e, s)
    x = data(shape)
    strides = None if strides == [1] * len(axes) and draw.draw(st.booleans()) else strides
    close(run("strided_slice", [x], axes=axes, begin=begin, end=end, strides=strides), x[tuple(key)])


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=1, max_size=3), st.data(), floats)
def test_pad(shape, draw, value):
    pw = [draw.draw(st.integers(0, 2)) for _ in range(2 * len(shape))]
    x = data(shape)
    expected = np.pad(x, list(zip(pw[0::2], pw[1::2])), constant_values=np.float32(value))
    close(run("nn.pad", [x], pad_width=pw, pad_value=value), expected)


@SETTINGS
@given(dims, st.lists(st.integers(1, 3), max_size=2), st.sampled_from(["fast", "clip", "wrap"]),
       st.sampled_from(["int32", "int64"]), st.data())
def test_take(shape, ishape, mode, idtype, draw):
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    e = shape[axis]
    lo, hi = (0, e - 1) if mode == "fast" else (-2 * e, 2 * e)
    idx = np.array(draw.draw(st.lists(st.integers(lo, hi), min_size=int(np.prod(ishape)),
                                      max_size=int(np.prod(ishape)))), dtype=idtype).reshape(ishape)
    x = data(shape)
    expected = np.take(x, idx, axis=axis, mode="raise" if mode == "fast" else mode)
    close(run("take", [x, idx], axis=axis, mode=mode), expected)


@SETTINGS
@given(dims, st.data())
def test_broadcast_to(shape, draw):
    lead = draw.draw(st.lists(st.integers(1, 3), max_size=2))
    src = [draw.draw(st.sampled_from([e, 1])) for e in shape]
    x = data(src)
    close(run("broadcast_to", [x], shape=lead + shape), np.broadcast_to(x, lead + shape))


@SETTINGS
@given(dims, st.lists(st.integers(1, 3), min_size=1, max_size=4), st.booleans())
def test_tile(shape, reps, as_int):
    reps = reps[0] if as_int else reps
    x = data(shape)
    close(run("tile", [x], repeats=reps), np.tile(x, reps))


@SETTINGS
@given(dims, st.data())
def test_flip(shape, draw):
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    x = data(shape)
    close(run("flip", [x], axis=axis), np.flip(x, axis))

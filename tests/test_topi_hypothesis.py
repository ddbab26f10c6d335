"""Hypothesis properties of the tir.topi ops with attributes (normalisation, elementwise,
resize, layout_transform, adaptive pooling, transposed convolution): draw shapes and attributes,
lower, interpret, compare with numpy (tests/topi_reference.py and the expressions below)."""
import numpy as np
from hypothesis import assume, given, strategies as st

from tir import topi
from tir.execute import prim_runner
from opinfo.recognize import resize_ref
from tests import topi_reference as ref
from tests.topi_draw import SETTINGS, axes_of, close, data, dims, floats, run


# ---------------------------------------------------------------- normalisation
@SETTINGS
@given(dims, st.data(), st.sampled_from([1e-5, 1e-3, 0.1]), st.booleans(), st.booleans())
def test_layer_norm(shape, draw, eps, center, scale):
    axes = draw.draw(axes_of(len(shape)))
    pshape = [shape[d] for d in sorted(a % len(shape) for a in axes)]
    x, g, b = data(shape), data(pshape, 1), data(pshape, 2)
    out = run("nn.layer_norm", [x, g, b], axes=axes, epsilon=eps, center=center, scale=scale)
    close(out, ref.layer_norm(x, g, b, axes, eps, center, scale), 1e-4)


@SETTINGS
@given(dims, st.data(), st.sampled_from([1e-5, 1e-2]))
def test_rms_norm(shape, draw, eps):
    axes = draw.draw(axes_of(len(shape)))
    w = data([shape[d] for d in sorted(a % len(shape) for a in axes)], 1)
    x = data(shape)
    close(run("nn.rms_norm", [x, w], axes=axes, epsilon=eps), ref.rms_norm(x, w, axes, eps), 1e-4)


@st.composite
def group_norm_case(draw):
    rank = draw(st.integers(2, 4))
    ca = draw(st.integers(1, rank - 1))
    groups = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 3)) for _ in range(rank)]
    shape[ca] = groups * draw(st.integers(1, 3))
    spatial = [d for d in range(1, rank) if d != ca]
    axes = draw(st.one_of(st.none(), st.just(spatial), st.lists(st.sampled_from(spatial), unique=True)
                          if spatial else st.just([])))
    return shape, groups, ca - rank if draw(st.booleans()) else ca, axes


@SETTINGS
@given(group_norm_case(), st.booleans(), st.booleans())
def test_group_norm(case, center, scale):
    shape, groups, ca, axes = case
    c = shape[ca]
    x, g, b = data(shape), data((c,), 1), data((c,), 2)
    out = run("nn.group_norm", [x, g, b], num_groups=groups, channel_axis=ca, axes=axes, epsilon=1e-5,
              center=center, scale=scale)
    spatial = [d for d in range(1, len(shape)) if d != ca % len(shape)] if axes is None else axes
    close(out, ref.group_norm(x, g, b, groups, ca, spatial, 1e-5, center, scale), 1e-3)


@SETTINGS
@given(dims, st.data(), st.booleans(), st.booleans())
def test_batch_norm(shape, draw, center, scale):
    axis = draw.draw(st.integers(-len(shape), len(shape) - 1))
    c = shape[axis]
    x, g, b, mean = data(shape), data((c,), 1), data((c,), 2), data((c,), 3)
    var = np.abs(data((c,), 4)) + 0.1
    func = topi.lower("nn.batch_norm", [(a.shape, "float32") for a in (x, g, b, mean, var)], axis=axis,
                      epsilon=1e-3, center=center, scale=scale)
    outs = [np.zeros(shape, "float32"), np.zeros((c,), "float32"), np.zeros((c,), "float32")]
    prim_runner(func, "interp")(x, g, b, mean, var, *outs)
    p = [c if d == axis % len(shape) else 1 for d in range(len(shape))]
    expected = (x - mean.reshape(p)) / np.sqrt(var.reshape(p) + 1e-3)
    expected = expected * g.reshape(p) if scale else expected
    close(outs[0], expected + b.reshape(p) if center else expected, 1e-4)
    close(outs[1], mean)
    close(outs[2], var)


# ---------------------------------------------------------------- elementwise with attributes
@SETTINGS
@given(dims, floats, floats)
def test_clip(shape, lo, hi):
    lo, hi = min(lo, hi), max(lo, hi)
    x = data(shape) * 2
    close(run("clip", [x], min=lo, max=hi), np.clip(x, np.float32(lo), np.float32(hi)))


@SETTINGS
@given(dims, st.floats(-1.0, 1.0, width=32))
def test_leakyrelu(shape, alpha):
    x = data(shape)
    close(run("nn.leakyrelu", [x], alpha=alpha), np.where(x > 0, x, x * np.float32(alpha)))


@SETTINGS
@given(dims, st.sampled_from([0.5, 1.0, 2.0, 3.0]), st.sampled_from([0.5, 1.0, 20.0]))
def test_softplus(shape, beta, threshold):
    x = data(shape) * 3
    z = x.astype("float64") * beta
    expected = np.where(z > threshold, x, np.log1p(np.exp(z)) / beta)
    close(run("nn.softplus", [x], beta=beta, threshold=threshold), expected, 1e-4)


@SETTINGS
@given(dims, st.sampled_from(["float32", "float16", "int32", "int8", "bool"]),
       st.sampled_from(["float16", "float32", "float64", "int8", "int32", "int64", "uint8", "bool"]))
def test_astype(shape, src, dst):
    x = data(shape) * 5
    x = np.abs(x).astype(src) if dst == "uint8" else x.astype(src)
    close(run("astype", [x], dtype=dst), x.astype(dst), 1e-3)


@SETTINGS
@given(dims, st.data())
def test_where(shape, draw):
    def operand():  # a suffix of the shape with some extents broadcast
        tail = shape[draw.draw(st.integers(0, len(shape))):]
        return [draw.draw(st.sampled_from([e, 1])) for e in tail] or [1]

    c = np.random.default_rng(5).random(operand()) < 0.5
    x, y = data(operand(), 1), data(operand(), 2)
    close(run("where", [c, x, y]), np.where(c, x, y))


# ---------------------------------------------------------------- image, layout, adaptive pooling
@st.composite
def resize_case(draw):
    method = draw(st.sampled_from(["nearest_neighbor", "linear", "cubic"]))
    mode = draw(st.sampled_from(resize_ref.MODES))
    rounding = draw(st.sampled_from(resize_ref.ROUNDINGS)) if method == "nearest_neighbor" else ""
    in_hw = [draw(st.integers(1, 5)) for _ in range(2)]
    out_hw = [draw(st.integers(1, 8)) for _ in range(2)]
    assume(mode != "align_corners" or min(out_hw) > 1)  # TVM divides by out - 1
    cubic = (draw(st.sampled_from([-0.75, -0.5])), draw(st.sampled_from([0, 1])))
    return draw(st.sampled_from(["NCHW", "NHWC"])), method, mode, rounding, cubic, in_hw, out_hw


@SETTINGS
@given(resize_case())
def test_resize2d(case):
    layout, method, mode, rounding, (alpha, exclude), in_hw, out_hw = case
    x_nc = data((1, 2, *in_hw))
    x = ref.from_nc(x_nc, layout)

    def pixel(ys, xs):
        ys = np.clip(ys, 0, in_hw[0] - 1).astype(int)
        xs = np.clip(xs, 0, in_hw[1] - 1).astype(int)
        return x_nc.astype("float64")[:, :, ys, xs]

    oy, ox = np.arange(out_hw[0])[:, None].astype("float64"), np.arange(out_hw[1])[None, :].astype("float64")
    if method == "linear":
        expected = resize_ref.linear(pixel, oy, ox, in_hw, out_hw, mode)
    elif method == "cubic":
        expected = resize_ref.cubic(pixel, oy, ox, in_hw, out_hw, mode, alpha, exclude)
    else:
        expected = resize_ref.nearest(pixel, oy, ox, in_hw, out_hw, mode, rounding)
    out = run("image.resize2d", [x], size=out_hw, layout=layout, method=method,
              coordinate_transformation_mode=mode, rounding_method=rounding, cubic_alpha=alpha,
              cubic_exclude=exclude)
    close(out, ref.from_nc(expected, layout), 1e-4)


@st.composite
def layout_pair(draw):
    """A tensor shape and two layouts of it: primal axes in any order, at most one split each."""
    axes = draw(st.permutations("NCHW"[:draw(st.integers(2, 4))]))
    extents = {a: draw(st.integers(1, 6)) for a in axes}

    def layout():
        order = draw(st.permutations(axes))
        split = draw(st.sampled_from([None] + list(axes)))
        factor = draw(st.integers(2, 4))
        inner = f"{factor}{split.lower()}" if split else ""
        return "".join(order) + inner, split, factor

    src, s_axis, s_factor = layout()
    if s_axis:  # a packed source holds whole blocks only
        extents[s_axis] = s_factor * draw(st.integers(1, 2))
    dst = layout()[0]
    shape = [extents[a] // s_factor if a == s_axis else extents[a] for a in src if a.isupper()]
    return shape + ([s_factor] if s_axis else []), src, dst


@SETTINGS
@given(layout_pair(), floats)
def test_layout_transform(case, pad_value):
    shape, src, dst = case
    x = data(shape)
    expected = ref.layout_transform(x, src, dst, np.float32(pad_value))
    close(run("layout_transform", [x], src_layout=src, dst_layout=dst, pad_value=pad_value), expected)
    back = ref.layout_transform(expected, dst, src)
    close(run("layout_transform", [expected], src_layout=dst, dst_layout=src), back)


@SETTINGS
@given(st.lists(st.integers(1, 3), min_size=2, max_size=4), st.data())
def test_layout_transform_index_map(shape, draw):
    """A split of one axis by ``f`` (the inner part moved last) after a permutation, and its inverse."""
    rank = len(shape)
    perm = draw.draw(st.permutations(range(rank)))
    axis, f = draw.draw(st.integers(0, rank - 1)), draw.draw(st.integers(1, 3))
    shape[perm[axis]] *= f
    inv = [perm.index(d) for d in range(rank)]

    def index_map(*i):
        p = [i[d] for d in perm]
        return (*p[:axis], p[axis] // f, *p[axis + 1:], p[axis] % f)

    def inverse(*o):
        p = list(o[:-1])
        p[axis] = p[axis] * f + o[-1]
        return tuple(p[k] for k in inv)

    x = data(shape)
    expected = np.transpose(x, perm)
    split = list(expected.shape)
    split[axis:axis + 1] = [split[axis] // f, f]
    expected = np.moveaxis(expected.reshape(split), axis + 1, -1)
    close(run("layout_transform", [x], index_map=index_map, inverse=inverse), expected)


@SETTINGS
@given(st.integers(1, 7), st.integers(1, 7), st.data(), st.sampled_from(["NCHW", "NHWC"]))
def test_adaptive_avg_pool2d(h, w, draw, layout):
    out_hw = draw.draw(st.one_of(st.none(), st.tuples(st.integers(1, h + 1), st.integers(1, w + 1))))
    x_nc = data((2, 3, h, w))
    out = run("nn.adaptive_avg_pool2d", [ref.from_nc(x_nc, layout)], layout=layout,
              output_size=None if out_hw is None else list(out_hw))
    close(out, ref.from_nc(ref.adaptive_avg_pool2d(x_nc, out_hw or (h, w)), layout))


# ---------------------------------------------------------------- transposed convolution
@st.composite
def conv_transpose_case(draw):
    nd = draw(st.sampled_from([1, 2]))
    groups = draw(st.sampled_from([1, 2]))
    cin, cout_g = groups * draw(st.integers(1, 2)), draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [draw(st.integers(1, 3)) for _ in range(nd)]
    dilation = [draw(st.integers(1, 2)) for _ in range(nd)]
    opad = [draw(st.integers(0, max(s, d) - 1)) for s, d in zip(strides, dilation)]
    dk = [(k - 1) * d + 1 for k, d in zip(ks, dilation)]
    padding = [draw(st.integers(0, dk[i % nd] - 1)) for i in range(2 * nd)]
    size = [draw(st.integers(1, 4)) for _ in range(nd)]
    for i in range(nd):
        assume((size[i] - 1) * strides[i] + dk[i] + opad[i] - padding[i] - padding[nd + i] > 0)
    return nd, groups, cin, cout_g, ks, strides, dilation, opad, padding, size


@SETTINGS
@given(conv_transpose_case())
def test_conv_transpose(case):
    nd, groups, cin, cout_g, ks, strides, dilation, opad, padding, size = case
    x = data((2, cin, *size))
    w = data((cin, cout_g, *ks), 1)  # IOW / IOHW
    out = run(f"nn.conv{nd}d_transpose", [x, w], strides=strides, padding=padding, output_padding=opad,
              dilation=dilation, groups=groups)
    expected = ref.conv_transpose_nc(x, w, strides, padding[:nd], padding[nd:], opad, dilation, groups)
    close(out, expected, 1e-4)

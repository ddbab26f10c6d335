"""tir.topi convolutions and pooling: lowered, interpreted, compared with numpy references."""
import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

import tir
from tir import topi
from tests import topi_reference as ref

LAYOUTS = {1: [("NCW", "OIW"), ("NWC", "WIO")],
           2: [("NCHW", "OIHW"), ("NHWC", "HWIO"), ("NHWC", "OHWI")],
           3: [("NCDHW", "OIDHW"), ("NDHWC", "DHWIO")]}
SETTINGS = settings(max_examples=12, deadline=None)


@st.composite
def conv_case(draw):
    nd = draw(st.sampled_from([1, 2, 3]))
    data_layout, kernel_layout = draw(st.sampled_from(LAYOUTS[nd]))
    groups = draw(st.sampled_from([1, 2]))
    cin = groups * draw(st.integers(1, 2))
    cout = groups * draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [draw(st.integers(1, 2)) for _ in range(nd)]
    dilation = [draw(st.integers(1, 2)) for _ in range(nd)]
    padding = [draw(st.integers(0, 2)) for _ in range(2 * nd)]
    size = 5 if nd < 3 else 4
    for i in range(nd):  # the dilated window must fit the padded input
        assume(size + padding[i] + padding[nd + i] >= (ks[i] - 1) * dilation[i] + 1)
    return nd, data_layout, kernel_layout, groups, cin, cout, ks, strides, dilation, padding, size


@SETTINGS
@given(conv_case())
def test_conv_matches_numpy(case):
    nd, dl, kl, groups, cin, cout, ks, strides, dilation, padding, size = case
    rng = np.random.default_rng(0)
    x_nc = rng.standard_normal((2, cin) + (size,) * nd).astype("float32")
    w_oi = rng.standard_normal((cout, cin // groups) + tuple(ks)).astype("float32")
    spatial = "".join(c for c in dl if c not in "NC")
    x = ref.from_nc(x_nc, dl)
    w = np.transpose(w_oi, ["OI".__add__(spatial).index(c) for c in kl])
    func = topi.lower(f"nn.conv{nd}d", [(x.shape, "float32"), (w.shape, "float32")], strides=strides,
                      padding=padding, dilation=dilation, groups=groups, data_layout=dl, kernel_layout=kl)
    expected = ref.from_nc(ref.conv_nc(x_nc, w_oi, strides, padding[:nd], padding[nd:], dilation, groups), dl)
    np.testing.assert_allclose(tir.run(func, x, w), expected, rtol=1e-4, atol=1e-4)


def test_conv2d_packed_nchwc_matches_unpacked():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 8, 6, 6)).astype("float32")
    w = rng.standard_normal((8, 8, 3, 3)).astype("float32")
    xp = x.reshape(1, 2, 4, 6, 6).transpose(0, 1, 3, 4, 2)
    wp = w.reshape(2, 4, 2, 4, 3, 3).transpose(0, 2, 4, 5, 3, 1)  # OIHW4i4o
    func = topi.lower("nn.conv2d", [(xp.shape, "float32"), (wp.shape, "float32")], padding=[1, 1, 1, 1],
                      data_layout="NCHW4c", kernel_layout="OIHW4i4o", strides=[1, 1])
    out = tir.run(func, xp, wp)
    expected = ref.conv_nc(x, w, [1, 1], [1, 1], [1, 1], [1, 1], 1)
    np.testing.assert_allclose(out.transpose(0, 1, 4, 2, 3).reshape(expected.shape), expected, rtol=1e-4, atol=1e-4)


@SETTINGS
@given(st.sampled_from([1, 2]), st.integers(1, 3), st.integers(1, 3), st.integers(0, 1), st.integers(0, 1),
       st.integers(0, 1), st.integers(1, 2))
def test_conv_transpose_matches_numpy(nd, k, s, p0, p1, opad, d):
    opad = min(opad, max(s, d) - 1)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2) + (4,) * nd).astype("float32")
    w = rng.standard_normal((2, 3) + (k,) * nd).astype("float32")  # IOW
    func = topi.lower(f"nn.conv{nd}d_transpose", [(x.shape, "float32"), (w.shape, "float32")], strides=[s] * nd,
                      padding=[p0] * nd + [p1] * nd, output_padding=[opad] * nd, dilation=[d] * nd)
    # transposed conv = scatter of each input pixel times the kernel
    dk = (k - 1) * d + 1
    full = [(4 - 1) * s + dk + opad for _ in range(nd)]
    out = np.zeros((1, 3, *full))
    for pos in np.ndindex(*(4,) * nd):
        for koff in np.ndindex(*(k,) * nd):
            tgt = tuple(p * s + q * d for p, q in zip(pos, koff))
            out[(0, slice(None)) + tgt] += np.einsum("i,io->o", x[(0, slice(None)) + pos], w[(slice(None), slice(None)) + koff])
    sl = tuple(slice(p0, f - p1) for f in full)
    np.testing.assert_allclose(tir.run(func, x, w), out[(slice(None), slice(None)) + sl], rtol=1e-4, atol=1e-4)


@st.composite
def pool_case(draw):
    nd = draw(st.sampled_from([1, 2, 3]))
    layout = draw(st.sampled_from(["NC" + "DHW"[3 - nd:], "N" + "DHW"[3 - nd:] + "C"]))
    ks = [draw(st.integers(1, 3)) for _ in range(nd)]
    strides = [draw(st.integers(1, 2)) for _ in range(nd)]
    dilation = [draw(st.integers(1, 2)) for _ in range(nd)]
    padding = [draw(st.integers(0, 1)) for _ in range(2 * nd)]
    ceil_mode = draw(st.booleans())
    for i in range(nd):
        # every window must start inside the padded input (ceil_mode can add one that does not,
        # whose average divides by a non-positive count in TVM's formula)
        span = 5 + padding[i] + padding[nd + i] - (ks[i] - 1) * dilation[i] - 1
        assume(span >= 0)
        out = (span + (strides[i] - 1 if ceil_mode else 0)) // strides[i] + 1
        assume((out - 1) * strides[i] < 5 + padding[i])
    return nd, layout, ks, strides, dilation, padding, ceil_mode, draw(st.booleans()), draw(st.sampled_from(["max", "avg"]))


@SETTINGS
@given(pool_case())
def test_pool_matches_numpy(case):
    nd, layout, ks, strides, dilation, padding, ceil_mode, include_pad, kind = case
    x_nc = np.random.default_rng(3).standard_normal((1, 2) + (5,) * nd).astype("float32")
    x = ref.from_nc(x_nc, layout)
    func = topi.lower(f"nn.{kind}_pool{nd}d", [(x.shape, "float32")], pool_size=ks, strides=strides,
                      dilation=dilation, padding=padding, ceil_mode=ceil_mode, count_include_pad=include_pad,
                      layout=layout)
    expected = ref.pool_nc(x_nc, kind, ks, strides, dilation, padding[:nd], padding[nd:], ceil_mode, include_pad)
    np.testing.assert_allclose(tir.run(func, x), ref.from_nc(expected, layout), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("size,out", [(8, 4), (8, 1), (7, 3)])
def test_adaptive_avg_pool2d(size, out):
    x = np.random.default_rng(4).standard_normal((1, 2, size, size)).astype("float32")
    func = topi.lower("nn.adaptive_avg_pool2d", [(x.shape, "float32")], output_size=[out, out])
    expected = np.zeros((1, 2, out, out))
    for i in range(out):
        for j in range(out):
            h0, h1 = i * size // out, -(-(i + 1) * size // out)
            w0, w1 = j * size // out, -(-(j + 1) * size // out)
            expected[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    np.testing.assert_allclose(tir.run(func, x), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs,arg", [
    (dict(groups=3), "groups"),
    (dict(data_layout="NCHW", kernel_layout="OIHW", padding=[1, 2, 3]), "padding"),
    (dict(kernel_layout="OIXY"), "kernel_layout"),
])
def test_conv_errors_name_the_argument(attrs, arg):
    with pytest.raises(ValueError, match=arg):
        topi.lower("nn.conv2d", [((1, 4, 5, 5), "float32"), ((4, 4, 3, 3), "float32")], **attrs)


def test_conv_channel_mismatch():
    with pytest.raises(ValueError, match="nn.conv2d: kernel"):
        topi.lower("nn.conv2d", [((1, 4, 5, 5), "float32"), ((4, 3, 3, 3), "float32")])

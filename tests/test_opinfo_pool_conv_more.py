"""Resize readings that only the writing tells apart, adaptive pools with uneven windows
(TVM's nested blocks: their kind, their op, and their layout when both layouts fit the
numbers), conv3d_transpose, group_norm with one channel, and identity adaptive pools -- in
the forms TVM 0.27 prints."""
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import tir
from tir.parser import parse
from opinfo.api import analyze
from opinfo.recognize import pool_adaptive
from opinfo.recognize.resize_form import _plain, fingerprint
from opinfo.semantic import Semantics


def _info(text):
    return analyze(parse(text))


def _ops(text_or_func):
    info = _info(text_or_func) if isinstance(text_or_func, str) else analyze(text_or_func)
    return [(o.name, o.to_json()["attrs"]) for o in info.ops]


# ------------------------------------------------------------------ resize2d
_RESIZE = """
@T.prim_func(private=True, s_tir=True)
def resize2d(x: T.Buffer((T.int64(1), T.int64(3), T.int64({ih}), T.int64({iw})), "float32"), resize: T.Buffer((T.int64(1), T.int64(3), T.int64({oh}), T.int64({ow})), "float32")):
    T.func_attr({{"tirx.noalias": True}})
    for i0, i1, i2, i3 in T.grid(T.int64(1), T.int64(3), T.int64({oh}), T.int64({ow})):
        with T.sblock("resize"):
            v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
            resize[v_i0, v_i1, v_i2, v_i3] = x[v_i0, v_i1, T.max(T.min({y}, T.int64({ih1})), T.int64(0)), T.max(T.min({x}, T.int64({iw1})), T.int64(0))]
"""


def _resize(ih, iw, oh, ow, y, x):
    return _RESIZE.format(ih=ih, iw=iw, oh=oh, ow=ow, y=y, x=x, ih1=ih - 1, iw1=iw - 1)


def test_resize_round_at_half_is_round_not_round_prefer_ceil():
    # TVM's float32 scale puts (1 + 0.5) * 0.6666667 - 0.5 just above .5: round and
    # round_prefer_ceil read the same pixels; T.round says which it was
    y = 'T.Cast("int64", T.round((T.Cast("float32", v_i2) + T.float32(0.5)) * T.float32(0.66666668653488159) - T.float32(0.5)))'
    x = 'T.Cast("int64", T.round((T.Cast("float32", v_i3) + T.float32(0.5)) * T.float32(2.3333332538604736) - T.float32(0.5)))'
    (name, attrs), = _ops(_resize(4, 7, 6, 3, y, x))
    assert name == "image.resize2d"
    assert (attrs["coordinate_transformation_mode"], attrs["rounding_method"]) == ("half_pixel", "round")


def test_resize_align_corners_floor_read_from_its_float32_scale():
    # 0.4 = (5 - 1) / (11 - 1) as float32: half_pixel with floor reads the same pixels
    y = 'T.Cast("int64", T.floor(T.float32(0.40000000596046448) * T.Cast("float32", v_i2) + T.float32(1.0000000000000001e-05)))'
    x = 'T.Cast("int64", T.floor(T.float32(0.5) * T.Cast("float32", v_i3) + T.float32(1.0000000000000001e-05)))'
    (name, attrs), = _ops(_resize(5, 3, 11, 5, y, x))
    assert (attrs["coordinate_transformation_mode"], attrs["rounding_method"]) == ("align_corners", "floor")


def test_resize_asymmetric_integer_upscale_with_truncating_div():
    # TVM 0.27 prints the asymmetric floor upscaling by 3 as T.Div
    y = 'T.Div(v_i2, T.int64(3))'
    x = 'T.Cast("int64", T.floor(T.float32(1.3999999761581421) * T.Cast("float32", v_i3) + T.float32(1.0000000000000001e-05)))'
    (name, attrs), = _ops(_resize(3, 7, 9, 5, y, x))
    assert (attrs["coordinate_transformation_mode"], attrs["rounding_method"]) == ("asymmetric", "floor")


def test_resize_written_unlike_every_candidate_abstains():
    # numbers fit several readings, but no candidate is written with a 0.3 constant
    y = 'T.Cast("int64", T.floor(T.float32(0.40000000596046448) * T.Cast("float32", v_i2) + T.float32(0.3)))'
    x = 'T.Cast("int64", T.floor(T.float32(0.5) * T.Cast("float32", v_i3) + T.float32(0.3)))'
    assert _ops(_resize(5, 3, 11, 5, y, x)) == []


def test_resize_unchanged_sizes_abstain():
    # every mode folds a scale of one away: an unchanged image reads alike in all
    y = 'T.Cast("int64", T.floor(T.Cast("float32", v_i2) + T.float32(1.0000000000000001e-05)))'
    x = 'T.Cast("int64", T.floor(T.Cast("float32", v_i3) + T.float32(1.0000000000000001e-05)))'
    assert _ops(_resize(5, 4, 5, 4, y, x)) == []


_MODES = ["half_pixel", "align_corners", "asymmetric"]
_ROUNDINGS = ["round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["nearest_neighbor", "linear", "cubic"]), st.sampled_from(_MODES),
       st.sampled_from(_ROUNDINGS), st.integers(2, 6), st.integers(2, 6), st.integers(2, 9), st.integers(2, 9),
       st.sampled_from(["NCHW", "NHWC"]))
def test_resize_claims_only_what_lowers_alike(method, mode, rounding, ih, iw, oh, ow, layout):
    """A claimed reading is the given one up to aliases, or lowers to the same expression."""
    rounding = rounding if method == "nearest_neighbor" else "round"
    shape = (1, 2, ih, iw) if layout == "NCHW" else (1, ih, iw, 2)
    given_attrs = dict(size=[oh, ow], layout=layout, method=method, coordinate_transformation_mode=mode,
                       rounding_method=rounding)
    func = tir.topi.lower("image.resize2d", [(shape, "float32")], **given_attrs)
    ops = analyze(func).ops
    if not ops:
        return
    (op,) = ops
    got = {k: v for k, v in op.to_json()["attrs"].items() if k in given_attrs}
    got["size"] = list(got["size"])
    if _plain({**got, "cubic_exclude": 0}) == _plain({**given_attrs, "cubic_exclude": 0}):
        return
    again = tir.topi.lower("image.resize2d", [(shape, "float32")], **got)
    meaning = lambda f: fingerprint(Semantics(f).meaning(Semantics(f).outputs()[0]))
    assert meaning(again) == meaning(func)


# ------------------------------------------------------------------ adaptive pools
_UNEVEN_1D = """
@T.prim_func(private=True, s_tir=True)
def adaptive_avg_pool1d(x: T.Buffer((T.int64(1), T.int64(5), T.int64(5)), "float32"), adaptive_pool_avg: T.Buffer((T.int64(1), T.int64(5), T.int64(2)), "float32")):
    T.func_attr({"tirx.noalias": True})
    adaptive_pool_sum = T.sblock_alloc_buffer((T.int64(1), T.int64(5), T.int64(2)))
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(5), T.int64(2)):
        with T.sblock("adaptive_pool_sum_l1"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            for rv0 in range(T.Select((v_ax2 * T.int64(5) + T.int64(1)) % T.int64(2) == T.int64(0), (v_ax2 * T.int64(5) + T.int64(5)) // T.int64(2), (v_ax2 * T.int64(5) + T.int64(5)) // T.int64(2) + T.int64(1)) - v_ax2 * T.int64(5) // T.int64(2)):
                with T.sblock("adaptive_pool_sum"):
                    v_ax0_1 = T.axis.spatial((v_ax0, v_ax0 + T.int64(1)), v_ax0)
                    v_ax1_1 = T.axis.spatial((v_ax1, v_ax1 + T.int64(1)), v_ax1)
                    v_ax2_1 = T.axis.spatial((v_ax2, v_ax2 + (T.int64(1) - v_ax2)), v_ax2)
                    v_rv0 = T.axis.reduce(T.Select((v_ax2 * T.int64(5) + T.int64(1)) % T.int64(2) == T.int64(0), (v_ax2 * T.int64(5) + T.int64(5)) // T.int64(2), (v_ax2 * T.int64(5) + T.int64(5)) // T.int64(2) + T.int64(1)) - v_ax2 * T.int64(5) // T.int64(2), rv0)
                    with T.init():
                        adaptive_pool_sum[v_ax0_1, v_ax1_1, v_ax2_1] = T.float32(0.0)
                    adaptive_pool_sum[v_ax0_1, v_ax1_1, v_ax2_1] = adaptive_pool_sum[v_ax0_1, v_ax1_1, v_ax2_1] + x[v_ax0_1, v_ax1_1, v_ax2_1 * T.int64(5) // T.int64(2) + v_rv0]
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(5), T.int64(2)):
        with T.sblock("adaptive_pool_avg"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            adaptive_pool_avg[v_ax0, v_ax1, v_ax2] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2] / T.Cast("float32", T.Cast("int32", T.Select((v_ax2 * T.int64(5) + T.int64(1)) % T.int64(2) == T.int64(0), (T.Cast("int64", v_ax2) * T.int64(5) + T.int64(5)) // T.int64(2), (T.Cast("int64", v_ax2) * T.int64(5) + T.int64(5)) // T.int64(2) + T.int64(1)) - T.Cast("int64", v_ax2) * T.int64(5) // T.int64(2)))
"""

_UNEVEN_2D = """
@T.prim_func(private=True, s_tir=True)
def adaptive_avg_pool2d(x: T.Buffer((T.int64(2), T.int64(3), T.int64(6), T.int64(7)), "float32"), adaptive_pool_avg: T.Buffer((T.int64(2), T.int64(3), T.int64(2), T.int64(2)), "float32")):
    T.func_attr({"tirx.noalias": True})
    adaptive_pool_sum = T.sblock_alloc_buffer((T.int64(2), T.int64(3), T.int64(2), T.int64(2)))
    for ax0, ax1, ax2, ax3, rv0 in T.grid(T.int64(2), T.int64(3), T.int64(2), T.int64(2), T.int64(3)):
        with T.sblock("adaptive_pool_sum_l1"):
            v_ax0, v_ax1, v_ax2, v_ax3, v_rv0 = T.axis.remap("SSSSR", [ax0, ax1, ax2, ax3, rv0])
            with T.init():
                adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] = T.float32(0.0)
            for rv1 in range(T.Select((v_ax3 * T.int64(7) + T.int64(1)) % T.int64(2) == T.int64(0), (v_ax3 * T.int64(7) + T.int64(7)) // T.int64(2), (v_ax3 * T.int64(7) + T.int64(7)) // T.int64(2) + T.int64(1)) - v_ax3 * T.int64(7) // T.int64(2)):
                with T.sblock("adaptive_pool_sum"):
                    v_ax0_1 = T.axis.spatial((v_ax0, v_ax0 + T.int64(1)), v_ax0)
                    v_ax1_1 = T.axis.spatial((v_ax1, v_ax1 + T.int64(1)), v_ax1)
                    v_ax2_1 = T.axis.spatial((v_ax2, v_ax2 + (T.int64(1) - v_ax2)), v_ax2)
                    v_ax3_1 = T.axis.spatial((v_ax3, v_ax3 + (T.int64(1) - v_ax3)), v_ax3)
                    v_rv0_1 = T.axis.reduce((v_rv0, v_rv0 + T.int64(1)), v_rv0)
                    v_rv1 = T.axis.reduce(T.Select((v_ax3 * T.int64(7) + T.int64(1)) % T.int64(2) == T.int64(0), (v_ax3 * T.int64(7) + T.int64(7)) // T.int64(2), (v_ax3 * T.int64(7) + T.int64(7)) // T.int64(2) + T.int64(1)) - v_ax3 * T.int64(7) // T.int64(2), rv1)
                    adaptive_pool_sum[v_ax0_1, v_ax1_1, v_ax2_1, v_ax3_1] = adaptive_pool_sum[v_ax0_1, v_ax1_1, v_ax2_1, v_ax3_1] + x[v_ax0_1, v_ax1_1, v_ax2_1 * T.int64(3) + v_rv0_1, v_ax3_1 * T.int64(7) // T.int64(2) + v_rv1]
    for ax0, ax1, ax2, ax3 in T.grid(T.int64(2), T.int64(3), T.int64(2), T.int64(2)):
        with T.sblock("adaptive_pool_avg"):
            v_ax0, v_ax1, v_ax2, v_ax3 = T.axis.remap("SSSS", [ax0, ax1, ax2, ax3])
            adaptive_pool_avg[v_ax0, v_ax1, v_ax2, v_ax3] = adaptive_pool_sum[v_ax0, v_ax1, v_ax2, v_ax3] / (T.float32(3.0) * T.Cast("float32", T.Cast("int32", T.Select((v_ax3 * T.int64(7) + T.int64(1)) % T.int64(2) == T.int64(0), (T.Cast("int64", v_ax3) * T.int64(7) + T.int64(7)) // T.int64(2), (T.Cast("int64", v_ax3) * T.int64(7) + T.int64(7)) // T.int64(2) + T.int64(1)) - T.Cast("int64", v_ax3) * T.int64(7) // T.int64(2))))
"""


def test_uneven_adaptive_pool_1d_is_named_and_opaque_like_tvm():
    # the outer block has no reduction iterator of its own: TVM calls the function opaque
    info = _info(_UNEVEN_1D)
    assert info.kind == "opaque"
    assert _ops(_UNEVEN_1D) == [("nn.adaptive_avg_pool1d",
                                 {"output_size": [2], "layout": "NCW", "out_layout": "NCW"})]


def test_uneven_adaptive_pool_2d_kind_follows_tvm_nested_blocks():
    # the outer _l1 block reduces over the even axis and is judged on the inner block's
    # accesses (a pure reduction of them): out_ewise_fusable, as TVM says
    info = _info(_UNEVEN_2D)
    assert info.kind == "out_ewise_fusable"
    assert _ops(_UNEVEN_2D) == [("nn.adaptive_avg_pool2d",
                                 {"output_size": [2, 2], "layout": "NCHW", "out_layout": "NCHW"})]


def test_windows_like_adaptive_ones_without_its_tag_abstain():
    # avg_pool with window 3 and stride 2 over 9 elements averages the adaptive windows of
    # 9 -> 4 ([0, 3), [2, 5), ...): only TVM's adaptive compute tag may name the numbers
    renamed = _UNEVEN_1D.replace("adaptive_pool_", "pool_")
    assert "adaptive" not in renamed.replace("adaptive_avg_pool1d", "")
    assert _ops(renamed) == []


def test_uneven_pool_with_a_block_of_another_op_abstains():
    # a fused clip after the pool changes nothing on random data: every block must be the pool's
    other = _UNEVEN_1D.replace('sblock("adaptive_pool_avg")', 'sblock("T_clip")')
    assert other != _UNEVEN_1D
    assert _ops(other) == []


@pytest.mark.parametrize("shape,axes,sizes", [((1, 2, 7), [2], [3]), ((1, 5, 4, 2), [1, 2], [2, 3])])
def test_adaptive_reference_windows(shape, axes, sizes):
    x = np.arange(np.prod(shape), dtype=float).reshape(shape)
    got = pool_adaptive.reference(x, axes, sizes)
    n = x.shape[axes[0]]
    for o in range(sizes[0]):
        lo, hi = (o * n) // sizes[0], -(-((o + 1) * n) // sizes[0])
        want = np.take(x, range(lo, hi), axis=axes[0]).mean(axis=axes[0])
        if len(axes) == 1:
            assert np.allclose(np.take(got, o, axis=axes[0]), want)


def test_layouts_need_an_uneven_axis_and_unchanged_others():
    assert pool_adaptive._layouts((1, 4, 6), (1, 4, 3)) == []  # even: avg_pool's too
    assert pool_adaptive._layouts((1, 4, 7), (1, 4, 3)) == [("NCW", [2])]
    # NCDHW and NDHWC both fit when the changed axes are shared: numbers cannot choose
    assert len(pool_adaptive._layouts((1, 11, 5, 7, 3), (1, 11, 2, 2, 3))) == 2



POOL_LAYOUTS = Path(__file__).parent / "fixtures" / "adaptive_pool_layouts.py"
LAID_OUT = {  # PrimFunc of the fixture -> (op, output_size, layout)
    "ndhwc_3d": ("nn.adaptive_avg_pool3d", [3, 2, 2], "NDHWC"),
    "ncdhw_3d": ("nn.adaptive_avg_pool3d", [2, 2, 2], "NCDHW"),
    "nhwc_2d": ("nn.adaptive_avg_pool2d", [5, 3], "NHWC"),
    "nchw_2d": ("nn.adaptive_avg_pool2d", [3, 3], "NCHW"),
    "nwc_1d": ("nn.adaptive_avg_pool1d", [3], "NWC"),
}


def _pool_funcs(text=None) -> dict:
    return dict(parse(POOL_LAYOUTS.read_text() if text is None else text).prim_funcs())


def test_adaptive_layout_both_numbers_explain_is_read_from_the_reduction_variables():
    for name, func in _pool_funcs().items():
        op, size, layout = LAID_OUT[name]
        shapes = [tuple(int(d.value) for d in b.shape) for b in func.buffers]
        if len(size) > 1:  # the pairs: the other layout fits the shapes and the numbers too
            assert len(pool_adaptive._layouts(*shapes)) == 2
        assert _ops(func) == [(op, {"output_size": size, "layout": layout, "out_layout": layout})], name


def test_adaptive_layout_abstains_when_the_reduction_variables_do_not_say():
    text = POOL_LAYOUTS.read_text()
    # NHWC's one-row window on H read without its reduction variable (of extent 1): the
    # numbers are unchanged, the loops now point at neither layout
    loads = "x[v_ax0_1, v_ax1_1 + v_rv0_1, v_ax2_1 * T.int64(7) // T.int64(3) + v_rv1, v_ax3_1]"
    assert text.count(loads) == 2
    plain = text.replace(loads, loads.replace("v_ax1_1 + v_rv0_1", "v_ax1_1"))
    assert _ops(_pool_funcs(plain)["nhwc_2d"]) == []


_ONE_WINDOW = """
@T.prim_func(private=True, s_tir=True)
def {name}(x: T.Buffer((T.int64(1), T.int64(4), T.int64(10)), "float32"), {avg}: T.Buffer((T.int64(1), T.int64(4), T.int64(10)), "float32")):
    T.func_attr({{"tirx.noalias": True}})
    {sum} = T.sblock_alloc_buffer((T.int64(1), T.int64(4), T.int64(10)))
    for ax0, ax1, ax2, rv0 in T.grid(T.int64(1), T.int64(4), T.int64(10), T.int64(1)):
        with T.sblock("{sum}"):
            v_ax0, v_ax1, v_ax2, v_rv0 = T.axis.remap("SSSR", [ax0, ax1, ax2, rv0])
            with T.init():
                {sum}[v_ax0, v_ax1, v_ax2] = T.float32(0.0)
            {sum}[v_ax0, v_ax1, v_ax2] = {sum}[v_ax0, v_ax1, v_ax2] + x[v_ax0, v_ax1, v_ax2 + v_rv0]
    for ax0, ax1, ax2 in T.grid(T.int64(1), T.int64(4), T.int64(10)):
        with T.sblock("{avg}"):
            v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])
            {avg}[v_ax0, v_ax1, v_ax2] = {sum}[v_ax0, v_ax1, v_ax2]
"""


def test_identity_adaptive_pool_named_by_its_tag():
    """Named by its tag; its output size (the input's) is also Relax's output_size=None, so
    it is assumed: the function alone abstains, with conventions it is reported."""
    text = _ONE_WINDOW.format(name="adaptive_avg_pool1d", sum="adaptive_pool_sum", avg="adaptive_pool_avg")
    assert _ops(text) == []
    (got,) = analyze(parse(text), conventions=True).ops
    assert (got.name, got.to_json()["attrs"], got.assumed) == \
        ("nn.adaptive_avg_pool1d", {"output_size": [10], "layout": "NCW", "out_layout": "NCW"}, ("output_size",))


def test_one_element_avg_pool_with_identical_loops_abstains():
    # avg_pool1d(pool_size=1, ceil_mode=True): TVM folds the divisor to one, the loops are
    # the identity adaptive pool's; its tag is pool_sum, and its attributes are not unique
    text = _ONE_WINDOW.format(name="avg_pool1d", sum="pool_sum", avg="pool_avg")
    assert _ops(text) == []


# ------------------------------------------------------------------ conv3d_transpose, group_norm
_CONV3D_T = """
@T.prim_func(private=True, s_tir=True)
def conv3d_transpose(x: T.Buffer((T.int64(1), T.int64(1), T.int64(5), T.int64(6), T.int64(7)), "float32"), y: T.Buffer((T.int64(1), T.int64(2), T.int64(3), T.int64(2), T.int64(2)), "float32"), compute: T.Buffer((T.int64(1), T.int64(2), T.int64(9), T.int64(11), T.int64(7)), "float32")):
    T.func_attr({"tirx.noalias": True})
    data_dilate = T.sblock_alloc_buffer((T.int64(1), T.int64(1), T.int64(9), T.int64(11), T.int64(7)))
    data_pad = T.sblock_alloc_buffer((T.int64(1), T.int64(1), T.int64(11), T.int64(12), T.int64(8)))
    kernel_transform = T.sblock_alloc_buffer((T.int64(2), T.int64(1), T.int64(3), T.int64(2), T.int64(2)))
    for i0, i1, i2, i3, i4 in T.grid(T.int64(1), T.int64(1), T.int64(9), T.int64(11), T.int64(7)):
        with T.sblock("data_dilate"):
            v_i0, v_i1, v_i2, v_i3, v_i4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
            data_dilate[v_i0, v_i1, v_i2, v_i3, v_i4] = T.if_then_else(v_i2 % T.int64(2) == T.int64(0) and v_i3 % T.int64(2) == T.int64(0), x[v_i0, v_i1, v_i2 // T.int64(2), v_i3 // T.int64(2), v_i4], T.float32(0.0))
    for i0, i1, i2, i3, i4 in T.grid(T.int64(1), T.int64(1), T.int64(11), T.int64(12), T.int64(8)):
        with T.sblock("data_pad"):
            v_i0, v_i1, v_i2, v_i3, v_i4 = T.axis.remap("SSSSS", [i0, i1, i2, i3, i4])
            data_pad[v_i0, v_i1, v_i2, v_i3, v_i4] = T.if_then_else(T.int64(1) <= v_i2 and v_i2 < T.int64(10) and T.int64(0) <= v_i3 and v_i3 < T.int64(11) and T.int64(1) <= v_i4 and v_i4 < T.int64(8), data_dilate[v_i0, v_i1, v_i2 - T.int64(1), v_i3, v_i4 - T.int64(1)], T.float32(0.0))
    for o, i, d, h, w in T.grid(T.int64(2), T.int64(1), T.int64(3), T.int64(2), T.int64(2)):
        with T.sblock("kernel_transform"):
            v_o, v_i, v_d, v_h, v_w = T.axis.remap("SSSSS", [o, i, d, h, w])
            kernel_transform[v_o, v_i, v_d, v_h, v_w] = y[v_i, v_o, T.int64(2) - v_d, T.int64(1) - v_h, T.int64(1) - v_w]
    for b, c, d, h, w, dc, dd, dh, dw in T.grid(T.int64(1), T.int64(2), T.int64(9), T.int64(11), T.int64(7), T.int64(1), T.int64(3), T.int64(2), T.int64(2)):
        with T.sblock("compute"):
            v_b, v_c, v_d, v_h, v_w, v_dc, v_dd, v_dh, v_dw = T.axis.remap("SSSSSRRRR", [b, c, d, h, w, dc, dd, dh, dw])
            with T.init():
                compute[v_b, v_c, v_d, v_h, v_w] = T.float32(0.0)
            compute[v_b, v_c, v_d, v_h, v_w] = compute[v_b, v_c, v_d, v_h, v_w] + data_pad[v_b, v_dc, v_d + v_dd, v_h + v_dh, v_w + v_dw] * kernel_transform[v_c, v_dc, v_dd, v_dh, v_dw]
"""


def test_conv3d_transpose():
    (name, attrs), = _ops(_CONV3D_T)
    assert name == "nn.conv3d_transpose"
    assert attrs["strides"] == [2, 2, 1] and attrs["padding"] == [1, 1, 0, 1, 0, 1]
    assert attrs["output_padding"] == [0, 0, 0] and attrs["groups"] == 1
    assert (attrs["data_layout"], attrs["kernel_layout"]) == ("NCDHW", "IODHW")


def test_group_norm_with_one_channel():
    func = tir.topi.lower("nn.group_norm", [((3, 1, 3), "float32"), ((1,), "float32"), ((1,), "float32")],
                          num_groups=1, channel_axis=1, axes=[2])
    (name, attrs), = _ops(func)
    assert name == "nn.group_norm"
    assert (attrs["num_groups"], attrs["channel_axis"], attrs["axes"]) == (1, 1, [2])


def test_group_norm_with_two_unit_axes_abstains():
    # channel axis 0 or 1: both of extent 1, gamma's length
    func = tir.topi.lower("nn.group_norm", [((1, 1, 8, 2), "float32"), ((1,), "float32"), ((1,), "float32")],
                          num_groups=1, channel_axis=1, axes=[2, 3])
    assert _ops(func) == []

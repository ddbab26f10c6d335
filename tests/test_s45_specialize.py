"""Windowed ops over symbolic spatial extents (:mod:`opinfo.specialize`).

TVM 0.27 legalized these Relax calls with a symbolic length, height or width (fixtures
``s45_sym_*``, printed by TVM). The recognizers need integer geometry there (a convolution's
after-padding from ``(n - 1) // 2 + 1``); the function is read again at six consecutive
bindings of its symbolic extents and named when every binding names the same op with the
same attributes."""
from __future__ import annotations

import pytest

import tir
from opinfo import analyze_module
from opinfo.specialize import BINDINGS, bind, bindings, read_specialized, symbolic_vars

from tests.fixture_util import FIXTURES

EXPECTED = {
    "conv1d_len": ("nn.conv1d", {"strides": [2], "padding": [1, 1], "dilation": [1], "groups": 1,
                                 "data_layout": "NCW", "kernel_layout": "OIW"}),
    "conv2d_hw": ("nn.conv2d", {"strides": [2, 1], "padding": [1, 0, 2, 1], "dilation": [1, 2], "groups": 1,
                                "data_layout": "NCHW", "kernel_layout": "OIHW"}),
    "max_pool2d_hw": ("nn.max_pool2d", {"pool_size": [2, 2], "strides": [2, 2], "padding": [0, 0, 0, 0],
                                        "ceil_mode": False, "layout": "NCHW"}),
    "adaptive_hw": ("nn.adaptive_avg_pool2d", {"output_size": [4, 4], "layout": "NCHW"}),
    "resize_hw": ("image.resize2d", {"size": [8, 8], "method": "linear",
                                     "coordinate_transformation_mode": "half_pixel"}),
    "conv1d_transpose_len": ("nn.conv1d_transpose", {"strides": [2], "padding": [1, 1], "output_padding": [0]}),
}


def _ops(name: str) -> list:
    mod = tir.parse((FIXTURES / f"s45_sym_{name}.py").read_text())
    infos = analyze_module(mod)
    return [op for info in infos.values() for op in info.ops]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_windowed_ops_over_symbolic_extents_are_named(name):
    (op,) = _ops(name)
    want_name, want = EXPECTED[name]
    assert op.name == want_name
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in want} == want
    assert op.operands[0].param == 0


def test_ceil_mode_over_a_symbolic_length_stays_open():
    """``max_pool1d(ceil_mode=True)`` lowers as ``ceil_mode=False`` with one more element of
    after-padding at every length: the bindings each abstain, and so does the function."""
    assert _ops("max_pool1d_ceil") == []


def test_attributes_that_follow_the_extent_give_no_answer():
    """The last three elements of ``x[n]``: a strided slice from ``n - 3`` -- a begin of
    14, 15, 16, ... at the bindings, no one value (Relax would write ``begin=[-3]``)."""
    func = tir.parse((FIXTURES / "s45_sym_tail3.py").read_text())
    from opinfo import analyze

    begins = {tuple(analyze(bind(func, b)).ops[0].attrs["begin"]) for b in bindings(symbolic_vars(func))}
    assert len(begins) == BINDINGS
    assert analyze(func).ops == ()


def test_bindings_give_each_symbol_its_own_consecutive_values():
    n, m = tir.SizeVar("n", tir.dtype.int64), tir.SizeVar("m", tir.dtype.int64)
    seen = [(b[n].value, b[m].value) for b in bindings([n, m])]
    assert [a for a, _ in seen] == list(range(seen[0][0], seen[0][0] + BINDINGS))
    assert all(a != b for a, b in seen) and len({b for _, b in seen}) == BINDINGS


def test_binding_folds_constant_arithmetic():
    """What substitution leaves as arithmetic on constants is folded, as TVM folds a static
    function's (the resize's scale ``17 / 8.0`` becomes one float)."""
    from tir.expr import Cast, Div, FloatImm, IntImm
    from tir.functor import children, pre_order_visit

    (_, f), = tir.parse((FIXTURES / "s45_sym_resize_hw.py").read_text()).prim_funcs()
    bound = bind(f, bindings(symbolic_vars(f))[0])
    unfolded, scales = [], []

    def visit(n):
        if isinstance(n, (Div, Cast)) and all(isinstance(c, (IntImm, FloatImm)) for c in children(n)):
            unfolded.append(n)
        if isinstance(n, FloatImm) and n.value == 17 / 8:
            scales.append(n)
        return True

    pre_order_visit(bound.body, visit)
    assert not unfolded and scales


def test_no_symbols_no_specialization():
    (_, f), = tir.parse((FIXTURES / "s45_sym_conv1d_len.py").read_text()).prim_funcs()
    static = bind(f, bindings(symbolic_vars(f))[0])
    assert symbolic_vars(static) == [] and read_specialized(static, lambda g: None) is None


# ---------------------------------------------------------------- a scheduled strided convolution
SCHEDULED = "s45_sym_conv1d_scheduled"  # conv1d(strides=2, padding=[1, 1], dilation=2), pad inlined
GUARD = "v_yy * T.int64(2) + v_ry * T.int64(2) <= w, x["


def test_after_padding_from_a_symbolic_output_length():
    """At w = 17 the output length 7 fits an after-padding of 1 or 2, at w = 18 (8 outputs)
    0 or 1: the lengths together leave 1."""
    from opinfo.recognize.window import symbolic_after

    (_, f), = tir.parse((FIXTURES / f"{SCHEDULED}.py").read_text()).prim_funcs()
    x, _, out = f.buffers
    assert symbolic_after(x.shape[2], out.shape[2], 1, 2, 2, 3) == 1


def test_a_scheduled_strided_convolution_over_a_symbolic_length_is_named():
    (op,) = _ops("conv1d_scheduled")
    got = op.to_json()["attrs"]
    assert (op.name, got["strides"], got["padding"], got["dilation"]) == ("nn.conv1d", [2], [1, 1], [2])


def test_a_guard_that_drops_the_last_column_is_refused():
    """The same function reading only ``x[..., :w - 1]``: a convolution of other data."""
    text = (FIXTURES / f"{SCHEDULED}.py").read_text()
    assert text.count(GUARD) == 1
    mod = tir.parse(text.replace(GUARD, GUARD.replace("<= w", "< w")))
    assert [op for info in analyze_module(mod).values() for op in info.ops] == []


def test_a_scheduled_max_pool_over_symbolic_extents_reads_as_the_static_one():
    """TVM's max_pool2d(pool 3x3, strides [1, 2], padding 1, NHWC) over a symbolic height and
    width, pad inlined: the readings that hold at every length are those of a static pool --
    ceil_mode=False with this padding, or ceil_mode=True with less after-padding, the same
    loops at every length. So it abstains, showing the convention's reading."""
    from opinfo import analyze

    (_, f), = tir.parse((FIXTURES / "s45_sym_max_pool2d_scheduled.py").read_text()).prim_funcs()
    info = analyze(f)
    assert info.ops == ()
    (op,) = info.undecided
    got = op.to_json()["attrs"]
    assert (got["pool_size"], got["strides"], got["padding"], got["ceil_mode"]) == ([3, 3], [1, 2], [1, 1, 1, 1], False)
    assert set(op.assumed) == {"ceil_mode", "padding"}

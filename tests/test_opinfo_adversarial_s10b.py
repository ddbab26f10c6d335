"""Mutants found by the s10 differential fuzzer (one statement of a TVM-printed function
changed; opinfo's answer unchanged while the interpreter computes something else), and
mutants of the run-based recognizers at symbolic sizes. Each must abstain.

Findings fixed with these tests:

- a reduction whose init stores elsewhere than its update (another element of the same
  buffer: indices permuted, shifted or made constant) was still read as the reduction
  (:mod:`opinfo.semantic` took the init's value without looking at where it went): sum,
  conv2d and max_pool2d on packed layouts. The init must now be exactly the update's store
  (same buffer, same index expressions over the same block variables).
- a producer whose loop (and, through ``T.axis.remap``, its domain) was cut short sets part
  of an intermediate, which its consumer reads whole: :mod:`opinfo.semantic` inlined the
  producer's value at every index. A producer stands for a load only when its block runs
  over the whole buffer.
- ``rfactor``'s partial block was merged back without looking at its init
  (:mod:`opinfo.rfactor`): an init at another element, or of 1 instead of 0, was still a
  ``sum``. The partial init must be the update's element set to the
  combiner's identity.
- the run-based recognizers bound symbolic extents to small values (attention 2 or 1, roi 2
  or 1, grid_sample 2 or 1, reverse_sequence 3, bucketize 5, adaptive pool 2): a test or a
  clamp against a larger constant (``i < 12``, ``min(b, 11)``) went unseen. The reading is
  now checked once more with the symbolic extents past every integer constant of the body
  (:func:`opinfo.recognize.running.shapes_beyond`); attention compares with keys of batch 1
  broadcast over a larger query batch.
"""
from __future__ import annotations

import pytest

import opinfo
from tests.fixture_util import fixture_func


def _names(func) -> list:
    # conventions=True: a sum that collapse_sum_to explains as well (the rfactor fixture) is
    # named by convention only, and the mutants must abstain for their own reason
    return [op.name for op in opinfo.analyze(func, conventions=True).ops]


def _replace(*pairs):
    def edit(text):
        for old, new in pairs:
            assert old in text, old
            text = text.replace(old, new, 1)
        return text
    return edit


# ------------------------------------------------------------------ reduction inits

SUM_INIT = "with T.init():\n                    x_red[v_ax0, v_ax1, v_ax2] = T.float32(0.0)"
CONV_INIT = "conv2d_nchw[v_nn, T.int64(0), v_yy, v_xx, v_ff] = T.float32(0.0)"
POOL_INIT = "pool_max[v_ax0, v_ax1 // T.int64(4), v_ax2, v_ax3, v_ax1 % T.int64(4)] = T.float32(-340282346638528859811704183484516925440.0)"

INIT_MUTANTS = {
    "sum: init indices permuted": ("s10b_sum", "sum", [(SUM_INIT, SUM_INIT.replace("x_red[v_ax0, v_ax1, v_ax2]", "x_red[v_ax0, v_ax2, v_ax1]"))]),
    "sum: init at a constant": ("s10b_sum", "sum", [(SUM_INIT, SUM_INIT.replace("x_red[v_ax0, v_ax1, v_ax2]", "x_red[v_ax0, v_ax1, T.int64(0)]"))]),
    "conv2d NCHW8c: init at another channel": ("s10b_conv2d_nchw8c", "nn.conv2d", [(CONV_INIT, CONV_INIT.replace("v_xx, v_ff]", "v_xx, v_nn]"))]),
    "conv2d NCHW8c: init rows shifted": ("s10b_conv2d_nchw8c", "nn.conv2d", [(CONV_INIT, CONV_INIT.replace("v_yy,", "(v_yy + T.int64(1)) % T.int64(2),"))]),
    "max_pool2d NCHW4c: init lanes % 3": ("s10b_max_pool2d_nchw4c", "nn.max_pool2d", [(POOL_INIT, POOL_INIT.replace("v_ax1 % T.int64(4)]", "v_ax1 % T.int64(3)]"))]),
}


@pytest.mark.parametrize("name,op", sorted({(f, op) for f, op, _ in INIT_MUTANTS.values()}))
def test_init_fixtures_are_named(name, op):
    assert _names(fixture_func(name)) == [op]


@pytest.mark.parametrize("fixture,op,pairs", list(INIT_MUTANTS.values()), ids=list(INIT_MUTANTS))
def test_init_elsewhere_abstains(fixture, op, pairs):
    assert _names(fixture_func(fixture, _replace(*pairs))) == []


RF_INIT = "x_red_rf[vk1, v_ax0] = T.float32(0.0)"


def test_rfactor_fixture_is_named():
    assert _names(fixture_func("s10b_rfactor_collapse_sum")) == ["sum"]


@pytest.mark.parametrize("new", ["x_red_rf[vk1, T.int64(0)] = T.float32(0.0)", "x_red_rf[vk1, v_ax0] = T.float32(1.0)"],
                         ids=["partial init elsewhere", "partial init of 1"])
def test_rfactor_partial_init_abstains(new):
    assert _names(fixture_func("s10b_rfactor_collapse_sum", _replace((RF_INIT, new)))) == []


DEC_BIND = 'v_ax0, v_ax1, v_ax2 = T.axis.remap("SSS", [ax0, ax1, ax2])'


def test_decomposed_sum_fixture_is_named():
    assert _names(fixture_func("s10b_sum_decomposed")) == ["sum"]


def test_decomposed_init_bound_transposed_abstains():
    # the init block of element (a, c, b) runs at iteration (a, b, c): some elements are reset after their update
    edit = _replace((DEC_BIND, DEC_BIND.replace("[ax0, ax1, ax2]", "[ax0, ax2, ax1]")))
    assert _names(fixture_func("s10b_sum_decomposed", edit)) == []


def test_decomposed_init_inside_the_reduction_loop_abstains():
    """The init block moved under the reduction loop resets the element before every term."""
    def edit(text):
        head, rest = text.split('            with T.block("x_red_init"):', 1)
        init, update = rest.split("            for k3 in range(T.int64(5)):", 1)
        init = "\n".join("    " + line if line.strip() else line for line in init.split("\n"))
        return head + "            for k3 in range(T.int64(5)):\n" + '                with T.block("x_red_init"):' + init + update

    assert _names(fixture_func("s10b_sum_decomposed", edit)) == []


# ------------------------------------------------------------------ producers over part of an intermediate

PARTIAL_PRODUCERS = {
    # the max over rows 0..2 of 4: row 3 of T_softmax_maxelem is never set, yet read
    "softmax: maxelem over 3 of 4 rows": ("s10b_softmax_axis0", "nn.softmax",
                                          ("for i0, k in T.grid(T.int64(4), T.int64(3)):", "for i0, k in T.grid(T.int64(3), T.int64(3)):")),
    # the flipped kernel over 2 of 3 columns
    "conv2d_transpose: kernel_transform over 2 of 3 columns": (
        "s10b_conv2d_transpose", "nn.conv2d_transpose",
        ("for o, i, h, w in T.grid(T.int64(2), T.int64(3), T.int64(2), T.int64(3)):",
         "for o, i, h, w in T.grid(T.int64(2), T.int64(3), T.int64(2), T.int64(2)):")),
}


@pytest.mark.parametrize("fixture,op,pair", list(PARTIAL_PRODUCERS.values()), ids=list(PARTIAL_PRODUCERS))
def test_partial_producer_fixture_is_named(fixture, op, pair):
    assert _names(fixture_func(fixture)) == [op]


@pytest.mark.parametrize("fixture,op,pair", list(PARTIAL_PRODUCERS.values()), ids=list(PARTIAL_PRODUCERS))
def test_partial_producer_abstains(fixture, op, pair):
    # T.axis.remap takes the loop's extent as the domain: the block is well formed, the buffer half set
    assert _names(fixture_func(fixture, _replace(pair))) == []


# ------------------------------------------------------------------ run-based recognizers at symbolic sizes

ATT_NORM = "T_divide_1[v_ax0, v_ax1, v_ax2] = trilu_1[v_ax0, v_ax1, v_ax2] / trilu_red_1[v_ax0, v_ax1, T.int64(0)]"
ATTB_NORM = "T_softmax_norm[v_i0, v_i1, v_i2] = T_softmax_exp[v_i0, v_i1, v_i2] / T_softmax_expsum[v_i0, v_i1]"
ROI_BATCH = 'T.Cast("int64", y[v_i_1, T.int64(0)])'
RS_READ = "T_reverse_sequence[v_ax0, v_ax1, v_ax2, v_ax3] = x[v_ax0, T.if_then_else("
BK_STORE = "searchsorted[v] = buffer[T.int64(0)]"
AP_READ = "+ x[v_ax0_1, v_ax1_1 * T.int64(11) // T.int64(2) + v_rv0"
GS_GRID = "y: T.Buffer((T.int64(1), T.int64(2), T.int64(2), T.int64(2))"
GS_GRID_N = "y: T.Buffer((n, T.int64(2), T.int64(2), T.int64(2))"


def _guarded(line: str, test: str, zero: str) -> tuple:
    head, value = line.split(" = ", 1)
    return line, f"{head} = T.if_then_else({test}, {value}, {zero})"


def _grid_sample_guarded(text: str) -> str:
    lines = text.replace(GS_GRID, GS_GRID_N).split("\n")
    i = next(i for i, line in enumerate(lines) if line.strip().startswith("compute[v_n, v_c, v_h, v_w] = "))
    head, value = lines[i].split(" = ", 1)
    lines[i] = f"{head} = T.if_then_else(v_n < T.int64(12), {value}, T.float32(0.0))"
    return "\n".join(lines)


SYMBOLIC = {
    "attention": ("s10b_attention_sym", "nn.attention", _replace(_guarded(ATT_NORM, "v_ax0 < T.int64(12)", "T.float32(0.0)"))),
    "attention_bias": ("s10b_attention_bias_sym", "nn.attention_bias",
                       _replace(_guarded(ATTB_NORM, "v_i0 < T.int64(12)", "T.float32(0.0)"))),
    "roi_align": ("s10b_roi_align_sym", "vision.roi_align", _replace((ROI_BATCH, f"T.min({ROI_BATCH}, T.int64(11))"))),
    "grid_sample": ("s10b_grid_sample_sym", "image.grid_sample", _grid_sample_guarded),
    "reverse_sequence": ("s10b_reverse_sequence_sym", "reverse_sequence",
                         _replace((RS_READ, RS_READ.replace("x[v_ax0,", "x[T.min(v_ax0, T.int64(11)),")))),
    "bucketize": ("s10b_bucketize_sym", "bucketize", _replace(_guarded(BK_STORE, "v < T.int64(12)", "T.int64(0)"))),
    "adaptive_avg_pool2d": ("s10b_adaptive_pool2d_sym", "nn.adaptive_avg_pool2d",
                            _replace((AP_READ, AP_READ.replace("x[v_ax0_1,", "x[T.min(v_ax0_1, T.int64(11)),")))),
}


@pytest.mark.parametrize("fixture,op,edit", list(SYMBOLIC.values()), ids=list(SYMBOLIC))
def test_symbolic_fixture_is_named(fixture, op, edit):
    assert _names(fixture_func(fixture)) == [op]


def test_grid_sample_with_a_symbolic_grid_batch_is_named():
    assert _names(fixture_func("s10b_grid_sample_sym", lambda t: t.replace(GS_GRID, GS_GRID_N))) == ["image.grid_sample"]


@pytest.mark.parametrize("fixture,op,edit", list(SYMBOLIC.values()), ids=list(SYMBOLIC))
def test_symbolic_cut_past_small_sizes_abstains(fixture, op, edit):
    assert _names(fixture_func(fixture, edit)) == []

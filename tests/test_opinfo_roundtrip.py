"""Hypothesis round trips for windowed ops: lower(op, random attrs) -> analyze == (op, attrs).

Convolutions (1-3-d, layouts, groups, packed NCHW{k}c), transposed convolutions and pooling,
each as lowered, after random loop splits/reorders, after pad inlining, and with a
symbolic batch. ``roundtrip_check.check`` accepts an abstention only when another
attribute set lowers to the same function, and a different answer only when it
computes the same values.
"""
import itertools

import tir
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from pad_inline import inline_pads
from roundtrip_check import check
from schedule_helpers import random_schedule

SETTINGS = settings(max_examples=20, deadline=None)
VARIANTS = st.sampled_from(["plain", "scheduled", "inlined", "symbolic"])


def _transform(variant, seed):
    if variant == "scheduled":
        return lambda f: random_schedule(f, seed)
    if variant == "inlined":  # inlined first: the schedule then draws the same splits for all readings
        return lambda f: random_schedule(inline_pads(f), seed)
    return lambda f: f


def _symbolic(inputs):
    (shape, dtype), rest = inputs[0], inputs[1:]
    return [((tir.SizeVar("n", tir.dtype.int64),) + tuple(shape[1:]), dtype)] + list(rest)


def _run(op, inputs, attrs, variant, seed, alternatives):
    """Lower, transform as ``variant`` says, and check the round trip."""
    try:
        tir.topi.lower(op, inputs, **attrs)
    except ValueError:
        assume(False)
    lowered = _symbolic(inputs) if variant == "symbolic" else inputs
    transform = _transform(variant, seed)
    func = transform(tir.topi.lower(op, lowered, **attrs))
    tir.verify(func)
    check(op, lowered, attrs, func, alternatives, transform, run_inputs=inputs)


def _layout_shape(layout, sizes: dict) -> tuple:
    return tuple(sizes[c] for c in layout)


# ---------------------------------------------------------------- convolution
@st.composite
def conv_case(draw):
    nd = draw(st.integers(1, 3))
    sp = "DHW"[3 - nd:]
    groups = draw(st.sampled_from([1, 2]))
    cin, cout = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    ks = [draw(st.integers(1, 3)) for _ in sp]
    attrs = dict(strides=[draw(st.integers(1, 3)) for _ in sp], dilation=[draw(st.integers(1, 2)) for _ in sp],
                 padding=[draw(st.integers(0, 2)) for _ in range(2 * nd)], groups=groups,
                 data_layout=draw(st.sampled_from(["NC" + sp, "N" + sp + "C"])),
                 kernel_layout=draw(st.sampled_from(["OI" + sp, sp + "IO", "O" + sp + "I"])))
    size = 7 if nd < 3 else 4
    data = {"N": 2, "C": cin, **{c: size for c in sp}}
    kern = {"O": cout, "I": cin // groups, **dict(zip(sp, ks))}
    inputs = [(_layout_shape(attrs["data_layout"], data), "float32"),
              (_layout_shape(attrs["kernel_layout"], kern), "float32")]
    return f"nn.conv{nd}d", inputs, attrs


def _after_pads(attrs, nd, top):
    """The same attributes with every after-padding in ``range(top)``."""
    for after in itertools.product(range(top), repeat=nd):
        yield {**attrs, "padding": list(attrs["padding"][:nd]) + list(after)}


@SETTINGS
@given(conv_case(), VARIANTS, st.integers(0, 1000))
def test_conv_round_trip(case, variant, seed):
    op, inputs, attrs = case
    nd = len(attrs["strides"])
    _run(op, inputs, attrs, variant, seed, list(_after_pads(attrs, nd, 8)))


@SETTINGS
@given(st.sampled_from([2, 4]), st.integers(1, 2), st.integers(1, 2), st.integers(0, 2), st.integers(1, 2),
       st.sampled_from(["native", "relaid", "reindexed"]), VARIANTS, st.integers(0, 1000))
def test_packed_conv_round_trip(block, cblocks, oblocks, pad, stride, form, variant, seed):
    """NCHW{k}c convolutions: TVM's conv2d_NCHWc, and a plain one re-laid-out with
    transform_layout (accesses rewritten, or the result block iterating the packed shape)."""
    layouts = dict(data_layout=f"NCHW{block}c", kernel_layout=f"OIHW{block}i{block}o")
    attrs = dict(strides=[stride, 1], padding=[pad, 0, 1, pad])
    if form == "native":
        inputs = [((1, cblocks, 6, 6, block), "float32"), ((oblocks, cblocks, 3, 2, block, block), "float32")]
        attrs = {**attrs, **layouts}
        _run("nn.conv2d", inputs, attrs, variant, seed, list(_after_pads(attrs, 2, 6)))
        return
    from layout.layout import Layout
    from layout.transform import transform_layout

    inputs = [((1, cblocks * block, 6, 6), "float32"), ((oblocks * block, cblocks * block, 3, 2), "float32")]
    f = tir.topi.lower("nn.conv2d", inputs, **attrs)
    for k, (src, dst) in enumerate([("NCHW", layouts["data_layout"]), ("OIHW", layouts["kernel_layout"]),
                                    ("NCHW", layouts["data_layout"])]):
        f = transform_layout(f, k, Layout.parse(src).index_map_to(dst), reindex=form == "reindexed")
    func = _transform(variant if variant != "symbolic" else "plain", seed)(f)
    from roundtrip_check import recovered
    got = recovered(func)
    assert got is not None or variant == "inlined"
    if got is not None:
        assert got[0] == "nn.conv2d" and all(got[1][k] == v for k, v in layouts.items())
        assert got[1]["strides"] == attrs["strides"] and got[1]["padding"][:2] == attrs["padding"][:2]


# ---------------------------------------------------------------- transposed convolution
@st.composite
def conv_transpose_case(draw):
    nd = draw(st.integers(1, 2))
    sp = "HW"[2 - nd:]
    groups = draw(st.sampled_from([1, 2]))
    strides = [draw(st.integers(1, 3)) for _ in sp]
    dilation = [draw(st.integers(1, 2)) for _ in sp]
    opad = [draw(st.integers(0, max(s, d) - 1)) for s, d in zip(strides, dilation)]
    attrs = dict(strides=strides, dilation=dilation, output_padding=opad, groups=groups,
                 padding=[draw(st.integers(0, 2)) for _ in range(2 * nd)])
    cin, cout_g = groups * draw(st.integers(1, 2)), draw(st.integers(1, 2))
    inputs = [((2, cin) + (4,) * nd, "float32"),
              ((cin, cout_g) + tuple(draw(st.integers(1, 3)) for _ in sp), "float32")]
    return f"nn.conv{nd}d_transpose", inputs, attrs


def _transpose_alternatives(attrs):
    """Readings with the same padding-after minus output_padding in every dimension."""
    nd = len(attrs["strides"])
    after, opad = attrs["padding"][nd:], attrs["output_padding"]
    ranges = [range(max(s, d)) for s, d in zip(attrs["strides"], attrs["dilation"])]
    for ts in itertools.product(*ranges):
        pads = [a - o + t for a, o, t in zip(after, opad, ts)]
        if min(pads) >= 0:
            yield {**attrs, "padding": list(attrs["padding"][:nd]) + pads, "output_padding": list(ts)}


@SETTINGS
@given(conv_transpose_case(), VARIANTS, st.integers(0, 1000))
def test_conv_transpose_round_trip(case, variant, seed):
    op, inputs, attrs = case
    _run(op, inputs, attrs, variant, seed, list(_transpose_alternatives(attrs)))


# ---------------------------------------------------------------- pooling
@st.composite
def pool_case(draw):
    nd = draw(st.integers(1, 3))
    sp = "DHW"[3 - nd:]
    kind = draw(st.sampled_from(["max", "avg"]))
    ks = [draw(st.integers(1, 3)) for _ in sp]
    dil = [draw(st.integers(1, 2)) for _ in sp]
    spans = [(k - 1) * d + 1 for k, d in zip(ks, dil)]
    pads = [draw(st.integers(0, s - 1)) for s in spans + spans]
    attrs = dict(pool_size=ks, strides=[draw(st.integers(1, 3)) for _ in sp], dilation=dil, padding=pads,
                 ceil_mode=draw(st.booleans()), layout=draw(st.sampled_from(["NC" + sp, "N" + sp + "C"])))
    if kind == "avg":
        attrs["count_include_pad"] = draw(st.booleans())
    sizes = {"N": 2, "C": 3, **{c: draw(st.integers(3, 8 if nd < 3 else 5)) for c in sp}}
    return f"nn.{kind}_pool{nd}d", [(_layout_shape(attrs["layout"], sizes), "float32")], attrs


def _pool_alternatives(attrs):
    nd = len(attrs["pool_size"])
    spans = [(k - 1) * d + 1 for k, d in zip(attrs["pool_size"], attrs["dilation"])]
    for ceil in (False, True):
        for after in itertools.product(*[range(s + st_) for s, st_ in zip(spans, attrs["strides"])]):
            yield {**attrs, "ceil_mode": ceil, "padding": list(attrs["padding"][:nd]) + list(after)}


@SETTINGS
@given(pool_case(), VARIANTS, st.integers(0, 1000))
def test_pool_round_trip(case, variant, seed):
    op, inputs, attrs = case
    _run(op, inputs, attrs, variant, seed, list(_pool_alternatives(attrs)))

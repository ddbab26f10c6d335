"""Fused kernels as FuseOps makes them: an anchor (convolution, matmul, pooling) followed by
a random chain of elementwise ops, with tensor or scalar operands. Each op must come back in
dataflow order, or opinfo abstains: never an op lost or merged into a neighbour whose
values it does not change (relu after exp, abs after negative, relu before leakyrelu).
"""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tir.builder import Builder
from tir.expr import const
from tir.topi import lower_into

from opinfo.api import analyze

F = "float32"

ANCHORS = {
    "conv2d": ([(1, 4, 8, 8), (8, 4, 3, 3)], "nn.conv2d",
               dict(strides=[1, 1], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NCHW",
                    kernel_layout="OIHW"), (1, 8, 8, 8)),
    "conv2d_nhwc": ([(1, 8, 8, 4), (3, 3, 4, 8)], "nn.conv2d",
                    dict(strides=[2, 2], padding=[1, 1, 1, 1], dilation=[1, 1], groups=1, data_layout="NHWC",
                         kernel_layout="HWIO"), (1, 4, 4, 8)),
    "conv1d": ([(1, 4, 10), (8, 4, 3)], "nn.conv1d",
               dict(strides=[1], padding=[1, 1], dilation=[1], groups=1, data_layout="NCW", kernel_layout="OIW"),
               (1, 8, 10)),
    "matmul": ([(4, 6), (6, 8)], "matmul", {}, (4, 8)),
    "batch_matmul": ([(2, 4, 6), (2, 6, 8)], "matmul", {}, (2, 4, 8)),
    "max_pool2d": ([(1, 8, 8, 8)], "nn.max_pool2d",
                   dict(pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 0], dilation=[1, 1], layout="NCHW"),
                   (1, 8, 4, 4)),
}
UNARY = {"nn.relu": {}, "sigmoid": {}, "tanh": {}, "nn.gelu": {}, "nn.silu": {}, "exp": {}, "nn.gelu_tanh": {},
         "negative": {}, "sqrt": {}, "abs": {}, "square": {}, "nn.leakyrelu": {"alpha": 0.1},
         "clip": {"min": -1.0, "max": 2.0}}
BINARY = ["add", "multiply", "subtract", "divide", "maximum"]
SCALAR = {"multiply": lambda v: v * const(0.25, F), "add": lambda v: v + const(1.5, F),
          "divide": lambda v: v / const(3.0, F)}


def build_chain(anchor: str, steps) -> tuple:
    """(PrimFunc, expected op names) for ``anchor`` then ``steps``: ("unary", op),
    ("binary", op, channel_operand) or ("scalar", op)."""
    shapes, op, attrs, out_shape = ANCHORS[anchor]
    b = Builder()
    params = [b.placeholder(s, F, n) for s, n in zip(shapes, ("x", "w"))]
    cur = lower_into(b, op, list(params), **attrs)
    want = [op]
    for k, step in enumerate(steps):
        if step[0] == "unary":
            cur = lower_into(b, step[1], [cur], **UNARY[step[1]])
        elif step[0] == "binary":
            if step[2] and len(out_shape) == 4:
                shape = (out_shape[3],) if anchor.endswith("nhwc") else (1, out_shape[1], 1, 1)
            else:
                shape = out_shape[-1:]
            p = b.placeholder(shape, F, f"p{k}")
            params.append(p)
            cur = lower_into(b, step[1], [cur, p])
        else:
            src, fn = cur, SCALAR[step[1]]
            cur = b.compute(f"T_{step[1]}", out_shape, lambda *i: fn(src[i]),
                            names=[f"ax{d}" for d in range(len(out_shape))])
        want.append(step[1])
    return b.build(params, [cur]), want


STEP = st.one_of(st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY))),
                 st.tuples(st.just("binary"), st.sampled_from(BINARY), st.booleans()),
                 st.tuples(st.just("scalar"), st.sampled_from(sorted(SCALAR))))


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(ANCHORS)), st.lists(STEP, min_size=1, max_size=3))
def test_fused_chain_is_recovered_or_abstains(anchor, steps):
    func, want = build_chain(anchor, steps)
    got = [o.name for o in analyze(func).ops]
    assert got in ([], want)


@pytest.mark.parametrize("anchor,steps", [
    ("max_pool2d", [("unary", "exp"), ("unary", "nn.relu"), ("unary", "tanh")]),
    ("conv2d", [("binary", "subtract", True), ("unary", "negative")]),
    ("conv2d", [("unary", "negative"), ("unary", "abs")]),
    ("conv1d", [("unary", "nn.leakyrelu"), ("unary", "nn.relu")]),
    ("matmul", [("unary", "sigmoid"), ("unary", "clip"), ("unary", "nn.relu")]),
    ("conv2d", [("binary", "add", True), ("unary", "nn.relu")]),
    ("conv2d", [("scalar", "multiply"), ("unary", "nn.gelu")]),
])
def test_no_op_is_lost(anchor, steps):
    """Chains where a later op does not change the values of an earlier one's result."""
    func, want = build_chain(anchor, steps)
    assert [o.name for o in analyze(func).ops] == want


def test_most_chains_are_recovered():
    """Abstaining is allowed, but on these plain chains it should be rare."""
    rng = random.Random(0)
    steps_pool = ([("unary", u) for u in UNARY] + [("binary", b, c) for b in BINARY for c in (True, False)]
                  + [("scalar", s) for s in SCALAR])
    got_right = total = 0
    for anchor in sorted(ANCHORS):
        for _ in range(8):
            steps = [rng.choice(steps_pool) for _ in range(rng.randint(1, 3))]
            func, want = build_chain(anchor, steps)
            got = [o.name for o in analyze(func).ops]
            assert got in ([], want)
            got_right += got == want
            total += 1
    assert got_right >= 0.9 * total

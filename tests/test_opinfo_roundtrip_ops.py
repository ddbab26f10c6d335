"""Hypothesis round trips for the other op families: elementwise (with constants), binary with
broadcasting, where, astype, matmul, reductions, argmax/argmin and data movement, as
lowered, after random loop splits/reorders and (where the attributes allow it) with a
symbolic batch. See ``roundtrip_check`` for what counts as a pass.
"""
import math

import opinfo
import tir
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from roundtrip_check import check
from schedule_helpers import random_schedule

SETTINGS = settings(max_examples=15, deadline=None)
SEEDS = st.one_of(st.none(), st.integers(0, 1000))


def _run(op, inputs, attrs, seed, symbolic=False, alternatives=()):
    try:
        tir.topi.lower(op, inputs, **attrs)
    except ValueError:
        assume(False)
    lowered = inputs
    if symbolic:
        (shape, dtype), rest = inputs[0], inputs[1:]
        lowered = [((tir.SizeVar("n", tir.dtype.int64),) + tuple(shape[1:]), dtype)] + list(rest)
    transform = (lambda f: f) if seed is None else (lambda f: random_schedule(f, seed))
    func = transform(tir.topi.lower(op, lowered, **attrs))
    tir.verify(func)
    check(op, lowered, attrs, func, alternatives, transform, run_inputs=inputs)


def shapes(min_rank=1, max_rank=4):
    return st.lists(st.integers(1, 5), min_size=min_rank, max_size=max_rank).map(tuple)


UNARY = ["exp", "sqrt", "sigmoid", "tanh", "nn.relu", "nn.gelu", "nn.gelu_tanh", "nn.silu", "nn.selu", "abs",
         "negative", "floor", "ceil", "round", "square", "sign", "erf", "sin", "cos", "rsqrt", "log"]
CONSTS = {"nn.leakyrelu": lambda d: {"alpha": d(st.sampled_from([0.01, 0.1, 0.2]))},
          "clip": lambda d: {"min": d(st.sampled_from([-1.0, 0.0])), "max": d(st.sampled_from([1.0, 6.0]))},
          "nn.softplus": lambda d: {"beta": d(st.sampled_from([1.0, 2.0])), "threshold": d(st.sampled_from([20.0, 5.0]))}}


@SETTINGS
@given(st.sampled_from(UNARY + sorted(CONSTS)), shapes(), st.data(), SEEDS, st.booleans())
def test_unary(op, shape, data, seed, symbolic):
    attrs = CONSTS[op](data.draw) if op in CONSTS else {}
    _run(op, [(shape, "float32")], attrs, seed, symbolic)


BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "floor_divide",
          "equal", "less", "greater_equal", "not_equal"]


@st.composite
def broadcast_pair(draw):
    big = draw(shapes())
    k = draw(st.integers(1, len(big)))
    small = tuple(1 if draw(st.booleans()) else e for e in big[len(big) - k:])
    return (big, small) if draw(st.booleans()) else (small, big)


@SETTINGS
@given(st.sampled_from(BINARY), broadcast_pair(), SEEDS)
def test_binary_broadcasting(op, pair, seed):
    _run(op, [(pair[0], "float32"), (pair[1], "float32")], {}, seed)


MORE_UNARY = ["tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "trunc",
              "isnan", "isinf", "isfinite"]


@SETTINGS
@given(st.sampled_from(MORE_UNARY), shapes(), SEEDS, st.booleans())
def test_more_unary(op, shape, seed, symbolic):
    """The rest of Relax's unary math ops (one intrinsic, or TVM's isinf/isfinite expressions)."""
    _run(op, [(shape, "float32")], {}, seed, symbolic)


@SETTINGS
@given(st.sampled_from([("bitwise_not", "int32"), ("logical_not", "bool")]), shapes(), SEEDS)
def test_integer_and_bool_unary(op_dtype, shape, seed):
    op, dtype = op_dtype
    _run(op, [(shape, dtype)], {}, seed)


@SETTINGS
@given(st.sampled_from([("mod", "float32"), ("atan2", "float32"), ("bitwise_and", "int32"),
                        ("bitwise_or", "int32"), ("bitwise_xor", "int32"), ("left_shift", "int32"),
                        ("right_shift", "int32"), ("logical_and", "bool"), ("logical_or", "bool"),
                        ("equal", "bool"), ("not_equal", "bool")]), broadcast_pair(), SEEDS)
def test_more_binary(op_dtype, pair, seed):
    """Relax's other binary ops; bool and integer operands are probed on their own values."""
    op, dtype = op_dtype
    _run(op, [(pair[0], dtype), (pair[1], dtype)], {}, seed)


@SETTINGS
@given(broadcast_pair(), st.booleans(), SEEDS)
def test_where(pair, cond_big, seed):
    cond = pair[0] if cond_big else pair[1]
    _run("where", [(cond, "bool"), (pair[0], "float32"), (pair[1], "float32")], {}, seed)


@SETTINGS
@given(shapes(), st.sampled_from(["float16", "int32", "float64"]), SEEDS, st.booleans())
def test_astype(shape, dtype, seed, symbolic):
    _run("astype", [(shape, "float32")], {"dtype": dtype}, seed, symbolic)


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 4), st.integers(1, 4), st.integers(0, 2), SEEDS)
def test_matmul(batch, m, k, n, form, seed):
    lhs, rhs = [((m, k), (k, n)), ((batch, m, k), (k, n)), ((m, k), (k,))][form]
    _run("matmul", [(lhs, "float32"), (rhs, "float32")], {}, seed)


def _axes(draw, rank):
    axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
    return [a - rank if draw(st.booleans()) else a for a in axes]


@SETTINGS
@given(st.sampled_from(["sum", "mean", "max", "min", "prod", "variance"]), shapes(), st.data(), SEEDS,
       st.booleans())
def test_reduction(op, shape, data, seed, symbolic):
    axis = None if data.draw(st.booleans()) else _axes(data.draw, len(shape))
    attrs = {"axis": axis, "keepdims": data.draw(st.booleans())}
    _run(op, [(shape, "float32")], attrs, seed, symbolic and axis is not None and 0 not in [a % len(shape) for a in axis])


@SETTINGS
@given(st.sampled_from(["argmax", "argmin"]), shapes(), st.data(), SEEDS)
def test_arg_reduction(op, shape, data, seed):
    rank = len(shape)
    axis = data.draw(st.one_of(st.none(), st.integers(-rank, rank - 1)))
    attrs = {"axis": axis, "keepdims": data.draw(st.booleans())}
    others = [{**attrs, "axis": a} for a in [None] + list(range(rank))]  # rank 1: None and 0 lower alike
    _run(op, [(shape, "float32")], attrs, seed, alternatives=others)


# ---------------------------------------------------------------- data movement
@SETTINGS
@given(shapes(), st.data(), SEEDS)
def test_permute_and_flip(shape, data, seed):
    perm = data.draw(st.permutations(range(len(shape))))
    _run("permute_dims", [(shape, "float32")], {"axes": list(perm)}, seed)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    _run("flip", [(shape, "float32")], {"axis": axis}, seed)


@SETTINGS
@given(shapes(), st.data(), SEEDS)
def test_reshape_family(shape, data, seed):
    n = math.prod(shape)
    first = data.draw(st.sampled_from([d for d in range(1, n + 1) if n % d == 0]))
    _run("reshape", [(shape, "float32")], {"shape": [first, n // first]}, seed)
    axis = data.draw(st.integers(0, len(shape)))
    _run("expand_dims", [(shape, "float32")], {"axis": [axis]}, seed)
    units = [i for i, e in enumerate(shape) if e == 1]
    if units:
        _run("squeeze", [(shape, "float32")], {"axis": units}, seed)


@SETTINGS
@given(shapes(), st.integers(2, 3), st.data(), SEEDS)
def test_concat_and_stack(shape, count, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    parts = [tuple(data.draw(st.integers(1, 3)) if i == axis else e for i, e in enumerate(shape)) for _ in range(count)]
    _run("concat", [(p, "float32") for p in parts], {"axis": axis}, seed)
    _run("stack", [(shape, "float32")] * count, {"axis": data.draw(st.integers(0, len(shape)))}, seed)


def _slice_alternatives(attrs, shape):
    """The same slice with any other ``end`` (past the last element read, it changes nothing)."""
    axis = attrs["axes"][0] % len(shape)
    for end in range(-shape[axis] - 2, shape[axis] + 3):
        yield {**attrs, "end": [end]}


@SETTINGS
@given(shapes(), st.data(), SEEDS)
def test_strided_slice(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    ext = shape[axis]
    attrs = {"axes": [axis], "begin": [data.draw(st.integers(0, ext - 1))],
             "end": [data.draw(st.integers(1, ext + 2))], "strides": [data.draw(st.integers(1, 2))]}
    assume(attrs["end"][0] > attrs["begin"][0])
    _run("strided_slice", [(shape, "float32")], attrs, seed, alternatives=list(_slice_alternatives(attrs, shape)))
    func = tir.topi.lower("strided_slice", [(shape, "float32")], **attrs)
    last = min(attrs["end"][0], ext) - 1
    if attrs["begin"][0] == 0 and last == ext - 1 and (attrs["strides"][0] == 1 or ext == 1):
        return  # the axis read whole: a copy, not a slice
    # with the importers' convention (axes read whole are not listed) the slice is read back;
    # on its own it abstains when another axis is read whole (it may have been listed)
    (op,) = opinfo.analyze(func, conventions=True).ops
    assert op.name == "strided_slice" and list(op.attrs["axes"]) == [axis]
    assert list(op.attrs["begin"]) == attrs["begin"] and list(op.attrs["strides"]) == attrs["strides"]
    assert (len(opinfo.analyze(func).ops) == 1) == (len(shape) == 1)


@SETTINGS
@given(shapes(), st.data(), SEEDS)
def test_pad_tile_broadcast(shape, data, seed):
    widths = [data.draw(st.integers(0, 2)) for _ in range(2 * len(shape))]
    _run("nn.pad", [(shape, "float32")], {"pad_width": widths, "pad_value": data.draw(st.sampled_from([0.0, 1.5]))}, seed)
    reps = [data.draw(st.integers(1, 3)) for _ in shape]
    _run("tile", [(shape, "float32")], {"repeats": reps}, seed)
    target = [e if e != 1 else data.draw(st.integers(1, 3)) for e in shape]
    _run("broadcast_to", [(shape, "float32")], {"shape": [2] + target}, seed)


@SETTINGS
@given(shapes(), st.integers(1, 4), st.data(), SEEDS)
def test_take(shape, count, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    _run("take", [(shape, "float32"), ((count,), "int64")], {"axis": axis}, seed)


# ---------------------------------------------------------------- adaptive pooling, batch_norm
@SETTINGS
@given(st.sampled_from(["NCHW", "NHWC"]), st.sampled_from([1, 2, 4, 8]), st.sampled_from([1, 2, 4, 8]), SEEDS,
       st.booleans())
def test_adaptive_avg_pool2d_even(layout, oh, ow, seed, symbolic):
    """Output sizes that divide the input (uneven windows are not recognized: see the report)."""
    shape = (2, 3, 8, 8) if layout == "NCHW" else (2, 8, 8, 3)
    _run("nn.adaptive_avg_pool2d", [(shape, "float32")], {"output_size": [oh, ow], "layout": layout}, seed, symbolic)


@SETTINGS
@given(shapes(min_rank=2), st.data(), st.sampled_from([1e-5, 1e-3]), SEEDS)
def test_batch_norm(shape, data, eps, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    c = shape[axis]
    inputs = [(shape, "float32")] + [((c,), "float32")] * 4
    attrs = {"axis": axis, "epsilon": eps, "center": data.draw(st.booleans()), "scale": data.draw(st.booleans())}
    others = [{**attrs, "axis": a} for a in range(len(shape))]  # unit channels: any unit axis lowers alike
    _run("nn.batch_norm", inputs, attrs, seed, alternatives=others)

"""Round trips for the multi-block recognizers: lower(op, random attrs) -> analyze == (op, attrs).

softmax / log_softmax, layer_norm / rms_norm, group_norm and resize2d, on random shapes,
with a symbolic batch, after random loop splits and reorders, and inside fused kernels.
"""
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tir
from tir.builder import Builder
from tir.topi import lower_into
from opinfo.api import analyze

sys.path.insert(0, str(Path(__file__).resolve().parent))
from schedule_helpers import random_schedule  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPS = st.sampled_from([1e-5, 1e-6, 1e-3, 0.01])


def _ops(func):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


def _batch(symbolic: bool, value: int):
    return tir.SizeVar("n", tir.dtype.int64) if symbolic else value


def _maybe_scheduled(func, seed):
    if seed is None:
        return func
    out = random_schedule(func, seed)
    tir.verify(out)
    return out


@st.composite
def shapes(draw, min_rank=1, max_rank=4, lo=2, hi=5):
    return draw(st.lists(st.integers(lo, hi), min_size=min_rank, max_size=max_rank))


@st.composite
def axes_of(draw, rank):
    axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1)))
    return [a - rank if draw(st.booleans()) else a for a in axes]


SEEDS = st.one_of(st.none(), st.integers(0, 10_000))


@SETTINGS
@given(st.sampled_from(["nn.softmax", "nn.log_softmax"]), shapes(), st.data(), st.booleans(), SEEDS)
def test_softmax_round_trip(op, shape, data, symbolic, seed):
    rank = len(shape)
    axis = data.draw(st.integers(-rank, rank - 1))
    symbolic = symbolic and rank > 1 and axis % rank != 0
    shape[0] = _batch(symbolic, shape[0])
    func = _maybe_scheduled(tir.topi.lower(op, [(shape, "float32")], axis=axis), seed)
    assert _ops(func) == [(op, {"axis": axis % rank})]


@SETTINGS
@given(shapes(min_rank=2), st.data(), EPS, st.booleans(), st.booleans(), st.booleans(), SEEDS)
def test_layer_norm_round_trip(shape, data, eps, center, scale, symbolic, seed):
    rank = len(shape)
    axes = data.draw(axes_of(rank))
    red = sorted(a % rank for a in axes)
    symbolic = symbolic and 0 not in red
    pshape = [shape[a] for a in red]
    shape[0] = _batch(symbolic, shape[0])
    func = tir.topi.lower("nn.layer_norm", [(shape, "float32"), (pshape, "float32"), (pshape, "float32")],
                          axes=axes, epsilon=eps, center=center, scale=scale)
    got = _ops(_maybe_scheduled(func, seed))
    assert got == [("nn.layer_norm", {"axes": red, "epsilon": pytest.approx(eps), "center": center,
                                       "scale": scale})]


@SETTINGS
@given(shapes(min_rank=2), st.data(), EPS, st.booleans(), SEEDS)
def test_rms_norm_round_trip(shape, data, eps, symbolic, seed):
    rank = len(shape)
    axes = data.draw(axes_of(rank))
    red = sorted(a % rank for a in axes)
    symbolic = symbolic and 0 not in red
    wshape = [shape[a] for a in red]
    shape[0] = _batch(symbolic, shape[0])
    func = tir.topi.lower("nn.rms_norm", [(shape, "float32"), (wshape, "float32")], axes=axes, epsilon=eps)
    got = _ops(_maybe_scheduled(func, seed))
    assert got == [("nn.rms_norm", {"axes": red, "epsilon": pytest.approx(eps)})]


@SETTINGS
@given(st.integers(3, 4), st.data(), EPS, st.booleans(), SEEDS)
def test_group_norm_round_trip(rank, data, eps, center, seed):
    shape = data.draw(shapes(min_rank=rank, max_rank=rank, lo=2, hi=4))
    ca = data.draw(st.integers(0, rank - 1))
    shape[ca] = data.draw(st.sampled_from([2, 4, 6, 8]))
    groups = data.draw(st.sampled_from([g for g in range(1, shape[ca] + 1) if shape[ca] % g == 0]))
    others = [d for d in range(rank) if d != ca]
    axes = sorted(data.draw(st.sets(st.sampled_from(others), min_size=1)))
    c = (shape[ca],)
    func = tir.topi.lower("nn.group_norm", [(shape, "float32"), (c, "float32"), (c, "float32")],
                          num_groups=groups, channel_axis=ca, axes=axes, epsilon=eps, center=center)
    got = _ops(_maybe_scheduled(func, seed))
    assert got == [("nn.group_norm", {"num_groups": groups, "channel_axis": ca, "axes": axes,
                                       "epsilon": pytest.approx(eps), "center": center, "scale": True})]


MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]
ROUNDINGS = ["round", "floor", "ceil", "", "round_prefer_floor", "round_prefer_ceil"]


@SETTINGS
@given(st.sampled_from(["NCHW", "NHWC"]), st.sampled_from(["nearest_neighbor", "linear", "cubic"]),
       st.sampled_from(MODES), st.sampled_from(ROUNDINGS), st.lists(st.integers(2, 7), min_size=4, max_size=4),
       st.sampled_from([-0.75, -0.5]), st.integers(0, 1), st.booleans(), SEEDS)
def test_resize2d_round_trip(layout, method, mode, rounding, sizes, alpha, exclude, symbolic, seed):
    ih, iw, oh, ow = sizes
    shape = [_batch(symbolic, 1), 2, ih, iw] if layout == "NCHW" else [_batch(symbolic, 1), ih, iw, 2]
    attrs = dict(size=[oh, ow], layout=layout, method=method, coordinate_transformation_mode=mode,
                 rounding_method=rounding, cubic_alpha=alpha, cubic_exclude=exclude)
    func = _maybe_scheduled(tir.topi.lower("image.resize2d", [(shape, "float32")], **attrs), seed)
    got = _ops(func)
    if ih == oh or iw == ow:
        assert got == [] or got[0][0] != "image.resize2d" or got[0][1]["layout"] == layout
        return
    assert len(got) == 1 and got[0][0] == "image.resize2d"
    claimed = got[0][1]
    assert (claimed["layout"], claimed["method"], claimed["size"]) == (layout, method, [oh, ow])
    _same_function(shape, attrs, claimed)


def _same_function(shape, attrs, claimed):
    """Equivalent choices (``round`` vs ``round_prefer_ceil`` without .5 positions) must
    compute the same on this shape."""
    concrete = [1 if not isinstance(s, int) else s for s in shape]
    keys = ("size", "layout", "method", "coordinate_transformation_mode", "rounding_method", "cubic_alpha",
            "cubic_exclude")
    want = tir.topi.lower("image.resize2d", [(concrete, "float32")], **attrs)
    back = tir.topi.lower("image.resize2d", [(concrete, "float32")], **{k: claimed[k] for k in keys if k in claimed})
    x = np.random.default_rng(0).standard_normal(concrete).astype("float32")
    np.testing.assert_allclose(tir.run(back, x), tir.run(want, x), rtol=1e-6)


def _fused(op, attrs, shape, extra, add_first=False):
    """op -> add -> relu in one PrimFunc (add -> op -> relu with ``add_first``)."""
    b = Builder()
    x, y = b.placeholder(shape, "float32", "x"), b.placeholder(shape, "float32", "y")
    params = [b.placeholder(s, "float32", f"p{i}") for i, s in enumerate(extra)]
    if add_first:
        out = lower_into(b, "nn.relu", [lower_into(b, op, [lower_into(b, "add", [x, y])] + params, **attrs)])
    else:
        out = lower_into(b, "nn.relu", [lower_into(b, "add", [lower_into(b, op, [x] + params, **attrs), y])])
    return b.build([x, y] + params, [out])


@pytest.mark.parametrize("op,attrs,extra", [
    ("nn.softmax", {"axis": 1}, []),
    ("nn.log_softmax", {"axis": 0}, []),
    ("nn.layer_norm", {"axes": [1], "epsilon": 1e-5, "center": True, "scale": True}, [(4,), (4,)]),
    ("nn.rms_norm", {"axes": [1], "epsilon": 1e-5}, [(4,)]),
])
def test_fused_op_add_relu(op, attrs, extra):
    """The op, then elementwise ops on its result: one kernel of TVM's FuseOps. An
    elementwise op before it is never fused into its input, so add -> op -> relu in one
    PrimFunc is no fused kernel and recovery abstains (opinfo/fusion.py)."""
    got = _ops(_fused(op, attrs, (3, 4), extra))
    assert got == [(op, attrs), ("add", {}), ("nn.relu", {})]
    assert _ops(_fused(op, attrs, (3, 4), extra, add_first=True)) == []


def test_relu_after_softmax_is_its_own_op():
    """relu changes nothing after a softmax; it is still reported, not absorbed."""
    b = Builder()
    x = b.placeholder((3, 4), "float32", "x")
    f = b.build([x], [lower_into(b, "nn.relu", [lower_into(b, "nn.softmax", [x], axis=1)])])
    assert _ops(f) == [("nn.softmax", {"axis": 1}), ("nn.relu", {})]


def test_instance_norm_computation_without_grouping_is_not_group_norm():
    """One channel per group without TVM's grouping reshape is instance_norm's computation."""
    b = Builder()
    x = b.placeholder((2, 3, 4, 5), "float32", "x")
    g = b.placeholder((3,), "float32", "g")
    from tir.builder import sum_
    from tir.expr import Call, const
    k1, k2 = b.reduce_axis(4, "k1"), b.reduce_axis(5, "k2")
    s = b.compute("s", (2, 3), lambda n, c: sum_(x[n, c, k1.var, k2.var], [k1, k2]))
    k3, k4 = b.reduce_axis(4, "k3"), b.reduce_axis(5, "k4")
    q = b.compute("q", (2, 3), lambda n, c: sum_(x[n, c, k3.var, k4.var] * x[n, c, k3.var, k4.var], [k3, k4]))

    def out(n, c, h, w):
        mean = s[n, c] / const(20.0)
        var = q[n, c] / const(20.0) - mean * mean
        return (x[n, c, h, w] - mean) * Call(x.dtype, "rsqrt", (var + const(1e-5),)) * g[c]

    f = b.build([x, g], [b.compute("y", (2, 3, 4, 5), out)])
    assert all(name != "nn.group_norm" for name, _ in _ops(f))


CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "ops"
_FAMILY = ("nn.softmax", "nn.log_softmax", "nn.layer_norm", "nn.rms_norm", "nn.group_norm", "image.resize2d")
_IGNORED = {"out_dtype", "roi", "cubic_alpha", "cubic_exclude", "extrapolation_value"}


def _corpus_cases():
    idx = CORPUS / "index.json"
    if not idx.exists():
        return []
    import json
    return [c for c in json.loads(idx.read_text())["cases"] if c["op"] in _FAMILY]


def _normalised(key, value, rank):
    if key in ("axis", "axes"):
        return sorted(a % rank for a in value) if isinstance(value, list) else value % rank
    return value


@pytest.mark.parametrize("case", _corpus_cases(), ids=lambda c: c["id"])
@pytest.mark.parametrize("seed", [None, 1, 2])
def test_tvm_corpus_cases_after_split_reorder(case, seed):
    """TVM's own lowering of these ops, as is and after random splits and reorders."""
    mod = tir.parse((CORPUS / f"{case['id']}.py").read_text())
    (_, func), = list(mod.prim_funcs())
    rank = len(case["inputs"][0]["shape"])
    (name, got), = _ops(_maybe_scheduled(func, seed))
    assert name == case["op"]
    for key, value in case["attrs"].items():
        if key not in _IGNORED:
            want = _normalised(key, value, rank)
            want = pytest.approx(want) if isinstance(want, float) else want
            assert _normalised(key, got[key], rank) == want, key


def test_half_precision_rms_norm_computed_in_float32():
    """Casts to float32 and back (TVM's float16 norms) leave the attributes recoverable."""
    from tir import dtype as dt
    from tir.builder import sum_
    from tir.expr import Call, Cast, const
    b = Builder()
    x, w = b.placeholder((4, 16), "float16", "x"), b.placeholder((16,), "float16", "w")
    xc = b.compute("xc", (4, 16), lambda i, j: Cast(dt.float32, x[i, j]))
    k = b.reduce_axis(16, "k")
    ss = b.compute("ss", (4,), lambda i: sum_(xc[i, k.var] * xc[i, k.var], [k]))
    rs = lambda i: Call(dt.float32, "rsqrt", (ss[i] / const(16.0) + const(1e-6),))  # noqa: E731
    out = b.compute("o", (4, 16), lambda i, j: Cast(dt.float16, xc[i, j] * rs(i) * Cast(dt.float32, w[j])))
    assert _ops(b.build([x, w], [out])) == [("nn.rms_norm", {"axes": [1], "epsilon": pytest.approx(1e-6)})]


_TWO_SUMS = '''
@T.prim_func
def f(x: T.Buffer((4, 8), "float32"), s: T.Buffer((4,), "float32"), q: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("red"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                s[vi] = T.float32(0.0)
                q[vi] = T.float32(0.0)
            v_s: T.float32 = s[vi] + x[vi, vk]
            v_q: T.float32 = q[vi] + UPDATE
            s[vi] = v_s
            q[vi] = v_q
'''


@pytest.mark.parametrize("update,split", [("x[vi, vk] * x[vi, vk]", True), ("s[vi] * x[vi, vk]", False)])
def test_two_value_reduction_is_split_when_independent(update, split):
    from opinfo.semantic import Reduce, Semantics
    sem = Semantics(tir.parse(_TWO_SUMS.replace("UPDATE", update)))
    assert sem.opaque is not split
    if split:
        assert [s.buffer.name for s in sem.stages] == ["s", "q"]
        assert all(isinstance(s.expr, Reduce) and s.expr.combiner == "sum" for s in sem.stages)


@pytest.mark.parametrize("mode,rounding", [("asymmetric", "round"), ("half_pixel", "round"),
                                           ("half_pixel", "floor"), ("align_corners", "round_prefer_ceil")])
def test_resize2d_equivalent_attributes_are_told_apart_by_form(mode, rounding):
    """A 2x nearest upscaling reads the same pixels under several attribute sets; the way
    TVM writes each one (integer division, floor epsilon, floor(x + 0.5)) decides."""
    attrs = dict(size=[8, 8], method="nearest_neighbor", coordinate_transformation_mode=mode,
                 rounding_method=rounding)
    func = tir.topi.lower("image.resize2d", [((1, 2, 4, 4), "float32")], **attrs)
    (name, got), = _ops(func)
    assert (got["coordinate_transformation_mode"], got["rounding_method"]) == (mode, rounding)

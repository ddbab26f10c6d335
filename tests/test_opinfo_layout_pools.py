"""Pools read from packed (NCHW4c) buffers whose window or output variable of extent 1
TVM's transform_layout folded away (``o + r`` -> ``o`` for a kernel-1 axis, ``o * 8 + r``
-> ``r`` for one output position): see opinfo/recognize/pool_window.py.

Real TVM 0.27 cases (tests/fixtures/layout_pool_*.py, from tools/tvm_oracle/gen_variants.py
``layout``) and round trips: tir.topi pools, layout.transform_layout, then TVM's folding of
extent-1 variables out of the rewritten accesses (``_fold_unit_vars``)."""
import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings

import tir
from fixture_util import fixture_func
from layout.index_map import IndexMap
from layout.transform import transform_layout
from opinfo.affine import ONE, affine
from opinfo.api import analyze
from tir.expr import Add, BufferLoad, IntImm, Mul, Var
from tir.functor import post_order_visit, transform
from tir.stmt import BufferStore


def _pool(size, strides, padding=(0, 0, 0, 0), ceil=False, include=False, layout="NCHW8c"):
    return {"pool_size": list(size), "strides": list(strides), "dilation": [1, 1], "padding": list(padding),
            "ceil_mode": ceil, "count_include_pad": include, "layout": layout, "out_layout": layout}


def _adaptive(size, layout):
    return {"output_size": list(size), "layout": layout, "out_layout": layout}


CASES = {
    # H: kernel 1, stride 2 read as x[n, 0, o * 2, w, c]; W: kernel 1, stride 1 read as o itself
    "layout_pool_max_kernel1_stride2": ("nn.max_pool2d", _pool([1, 1], [2, 1])),
    # H's window variable folded (o + r -> o), W's window in sight
    "layout_pool_max_folded_h": ("nn.max_pool2d", _pool([1, 2], [1, 2], layout="NCHW4c")),
    # W: kernel 1, stride 2 (x[..., o * 2, ...]); the divisor names both output variables
    "layout_pool_avg_include_pad": ("nn.avg_pool2d", _pool([2, 1], [1, 2], include=True, layout="NCHW4c")),
    # H: one output position (o * 10 + r -> r), W: kernel 1 (o + r -> o)
    "layout_pool_adaptive_out1": ("nn.adaptive_avg_pool2d", _adaptive([1, 7], "NCHW4c")),
    # output = input: every window variable folded; two blocks of channels (c // 8, c % 8)
    "layout_pool_adaptive_identity": ("nn.adaptive_avg_pool2d", _adaptive([5, 5], "NCHW8c")),
    # the same with the intermediate sum packed too (read only as the logical function)
    "layout_pool_adaptive_packed_sum": ("nn.adaptive_avg_pool2d", _adaptive([7, 5], "NCHW4c")),
}


def _ops(func):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


BLIND = {"layout_pool_max_kernel1_stride2"}
"""Every window folded: no dilation in sight, so the reported 1 is a convention (assumed)."""

SAME_SIZE = {"layout_pool_adaptive_identity", "layout_pool_adaptive_packed_sum"}
"""Output size = input size: Relax's output_size=None lowers the same (assumed)."""


@pytest.mark.parametrize("name", sorted(CASES))
def test_tvm_packed_pool_with_folded_axes_is_recognised(name):
    op, attrs = CASES[name]
    func = fixture_func(name)
    if name in BLIND:
        assert _ops(func) == []
        (got,) = analyze(func, conventions=True).ops
        assert (got.name, got.to_json()["attrs"]) == (op, attrs) and "dilation" in got.assumed
        return
    if name in SAME_SIZE:
        assert _ops(func) == []
        (got,) = analyze(func, conventions=True).ops
        assert (got.name, got.to_json()["attrs"]) == (op, attrs) and got.assumed == ("output_size",)
        return
    assert _ops(func) == [(op, attrs)]


def test_stride_one_kernel_one_pool_still_abstains():
    # pool_size [1, 1], strides [1, 1], ceil_mode=True: ceil_mode has no effect on these
    # loops (as in NCHW), so nothing is named
    assert _ops(fixture_func("layout_pool_avg_stride1")) == []


def test_folded_axis_needs_the_pool_compute_tag():
    # the kernel-1 W axis is placed by the order TVM's pools give their reduction
    # variables: without TVM's pool block the loops alone do not say it is pooled
    func = fixture_func("layout_pool_max_kernel1_stride2", lambda t: t.replace('"pool_max"', '"T_reduce"'))
    assert _ops(func) == []


# ----------------------------------------------------------------------------- round trips

NCHW4C = IndexMap.from_func(lambda n, c, h, w: [n, c // 4, h, w, c % 4])


def _unit_vars(func) -> dict:
    found = {}
    for b in func.blocks():
        found.update({id(iv.var): iv.var for iv in b.iter_vars if tir.expr.as_int(iv.dom.extent) == 1})
    return found


def _folded(index, units: dict):
    """``index`` as TVM's simplifier leaves it on the block's domain: a variable of extent 1
    dropped from a sum or product (a bare variable stays)."""
    form = affine(index)
    if isinstance(index, Var) or form is None or not all(k is ONE or isinstance(k, Var) for k in form):
        return index
    terms = [(k, c) for k, c in form.items() if k is not ONE and id(k) not in units and c]
    if len(terms) == len([k for k in form if k is not ONE]):
        return index
    out = None
    for k, c in terms:
        t = k if c == 1 else Mul(k, IntImm(k.dtype, c))
        out = t if out is None else Add(out, t)
    const = form.get(ONE, 0)
    if out is None:
        return IntImm(index.dtype, const)
    return out if const == 0 else Add(out, IntImm(index.dtype, const))


def _fold_unit_vars(func, buffers):
    """TVM's ``transform_layout`` form: the rewritten accesses of ``buffers`` simplified."""
    units, ids = _unit_vars(func), {id(b) for b in buffers}

    def post(n):
        if isinstance(n, BufferLoad) and id(n.buffer) in ids:
            return BufferLoad(n.buffer, tuple(_folded(i, units) for i in n.indices))
        if isinstance(n, BufferStore) and id(n.buffer) in ids:
            return BufferStore(n.buffer, n.value, tuple(_folded(i, units) for i in n.indices))
        return None

    return transform(func, post)


def _packed(op, shape, attrs):
    f = tir.topi.lower(op, [(shape, "float32")], **attrs)
    g = transform_layout(transform_layout(f, 0, NCHW4C, False), 1, NCHW4C, False)
    packed = [b for b in g.buffers]
    return f, _fold_unit_vars(g, packed)


def _loads(func):
    found = []
    post_order_visit(func.body, lambda n: found.append(n) if isinstance(n, BufferLoad) else None)
    return found


def test_fold_mimics_tvm():
    # the helper gives the TVM fixture's read from the lowering library's function
    _, g = _packed("nn.max_pool2d", (1, 4, 8, 8), dict(pool_size=[1, 2], strides=[1, 2]))
    tvm = fixture_func("layout_pool_max_folded_h")
    text = [str(tir.expr.as_int(i)) if tir.expr.as_int(i) is not None else type(i).__name__
            for i in _loads(g)[-1].indices]
    want = [str(tir.expr.as_int(i)) if tir.expr.as_int(i) is not None else type(i).__name__
            for i in _loads(tvm)[-1].indices]
    assert text == want


def _expected(op, attrs):
    out = dict(attrs)
    for key in ("layout", "out_layout"):
        out[key] = "NCHW4c"
    if op != "nn.adaptive_avg_pool2d":
        out.setdefault("dilation", [1, 1])
        out.setdefault("ceil_mode", False)
        out.setdefault("count_include_pad", False)
    return out


@st.composite
def pools(draw):
    op = draw(st.sampled_from(["nn.max_pool2d", "nn.avg_pool2d", "nn.adaptive_avg_pool2d"]))
    shape = (draw(st.integers(1, 2)), draw(st.sampled_from([4, 8])), draw(st.integers(4, 9)), draw(st.integers(4, 9)))
    if op == "nn.adaptive_avg_pool2d":
        sizes = [draw(st.sampled_from([1, shape[2]] + [d for d in (2, 3) if shape[2] % d == 0])),
                 draw(st.sampled_from([1, shape[3]] + [d for d in (2, 3) if shape[3] % d == 0]))]
        return op, shape, {"output_size": sizes}
    size = [draw(st.integers(1, 3)), draw(st.integers(1, 3))]
    pad = [draw(st.integers(0, (k - 1) // 2 + (k > 1))) if k > 1 else 0 for k in size]
    attrs = {"pool_size": size, "strides": [draw(st.integers(1, 2)), draw(st.integers(1, 2))],
             "padding": pad + pad, "ceil_mode": draw(st.booleans())}
    if op == "nn.avg_pool2d":
        attrs["count_include_pad"] = draw(st.booleans())
    return op, shape, attrs


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pools())
def test_round_trip_is_right_or_abstains_only_where_nchw_does(case):
    """Packed and folded, a pool is named with its attributes or not at all; it is named
    whenever its NCHW form is, unless an axis has one output position (a max/avg pool's
    stride there is not in the folded loops)."""
    op, shape, attrs = case
    f, g = _packed(op, shape, attrs)
    got = _ops(g)
    plain = _ops(f)
    want = (op, _expected(op, attrs))
    assert got in ([], [want])
    out_shape = [tir.expr.as_int(s) for s in f.buffers[-1].shape]
    one_position = op != "nn.adaptive_avg_pool2d" and 1 in out_shape[2:]
    blind = attrs.get("pool_size") == [1, 1]  # no window in sight: the dilation is assumed
    if plain and plain[0][0] == op and not one_position and not blind:
        assert got == [want]


@pytest.mark.parametrize("op, shape, attrs", [
    # the kernel-1 H axis's dilation is not in the folded loops; W shows dilation 2, so a
    # framework's single dilation for both axes may be the truth: abstain
    ("nn.max_pool2d", (1, 4, 9, 9), dict(pool_size=[1, 2], strides=[2, 2], dilation=[2, 2])),
    # H has one output position: its stride is not in the folded loops
    ("nn.max_pool2d", (1, 4, 3, 8), dict(pool_size=[3, 2], strides=[2, 2])),
    ("nn.avg_pool2d", (1, 4, 3, 8), dict(pool_size=[3, 2], strides=[1, 2])),
])
def test_round_trip_abstains_where_folded_loops_do_not_say(op, shape, attrs):
    f, g = _packed(op, shape, attrs)
    assert _ops(f)  # named in NCHW
    assert _ops(g) == []

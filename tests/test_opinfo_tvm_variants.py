"""The corpus's `layout` and `fused` variants on real TVM 0.27 output
(tools/tvm_oracle/gen_variants.py): ops and attributes as Relax names them, or nothing.

Layout fixtures are one legalized op whose buffers ``transform_layout`` packed (NCHW{k}c,
OIHW{k}i{k}o); opinfo reads them on the logical tensors (:func:`opinfo.unpack.unpack`), and
that rewrite must compute what the packed function does. Fused fixtures are FuseOps +
FuseTIR output, ops listed across the module's functions in call order.
"""
import numpy as np
import pytest

import tir
from opinfo.api import analyze
from opinfo.cli.analyze import call_order
from opinfo.unpack import unpack

from fixture_util import FIXTURES, fixture_func


def _ops(name: str) -> list:
    mod = tir.parse((FIXTURES / f"{name}.py").read_text())
    return [op for n in call_order(mod) for op in analyze(mod[n], n).ops]


def _agrees(op, name: str, attrs: dict) -> bool:
    return op.name == name and all(op.attrs.get(k) in (v, tuple(v) if isinstance(v, list) else v)
                                   for k, v in attrs.items())


LAYOUT = [
    ("variant_layout_conv2d_grouped", "nn.conv2d",
     {"strides": [2, 1], "padding": [0, 2, 0, 0], "dilation": [1, 2], "groups": 2,
      "data_layout": "NCHW4c", "kernel_layout": "OIHW4i4o", "out_layout": "NCHW4c"}),
    ("variant_layout_avg_pool2d", "nn.avg_pool2d",
     {"pool_size": [2, 2], "strides": [2, 1], "padding": [1, 1, 1, 1], "ceil_mode": False,
      "count_include_pad": True, "layout": "NCHW4c", "out_layout": "NCHW4c"}),
    ("variant_layout_batch_norm", "nn.batch_norm", {"axis": 1, "epsilon": 1e-05}),
]


@pytest.mark.parametrize("name,op,attrs", LAYOUT, ids=[c[0] for c in LAYOUT])
def test_layout_variant_ops(name, op, attrs):
    ops = analyze(fixture_func(name)).ops
    assert len(ops) == 1 and _agrees(ops[0], op, attrs), ops


def _logical(arr: np.ndarray, splits: tuple, shape: tuple) -> np.ndarray:
    """The logical tensor of a packed array (dimension ``outer`` holds ``i // k``, ``inner``
    holds ``i % k``)."""
    grid = np.indices(shape)
    idx = [None] * arr.ndim
    for s in splits:
        idx[s.outer], idx[s.inner] = grid[s.outer] // s.factor, grid[s.outer] % s.factor
    for d in range(arr.ndim):
        if idx[d] is None:
            idx[d] = grid[d]
    return arr[tuple(idx)]


@pytest.mark.parametrize("name", ["variant_layout_conv2d_grouped", "variant_layout_avg_pool2d"])
def test_unpacked_function_computes_the_packed_one(name):
    func = fixture_func(name)
    logical, packed, _ = unpack(func)
    rng = np.random.default_rng(0)
    args = [rng.uniform(-1, 1, [int(s.value) for s in b.shape]).astype("float32") for b in func.buffers[:-1]]
    out = tir.run(func, *args)
    lshape = {b.name: tuple(int(s.value) for s in b.shape) for b in logical.buffers}
    largs = [_logical(a, packed.get(b.name, ()), lshape[b.name]) for a, b in zip(args, func.buffers)]
    res = func.buffers[-1]
    np.testing.assert_allclose(_logical(out, packed.get(res.name, ()), lshape[res.name]),
                               tir.run(logical, *largs), rtol=1e-5, atol=1e-5)


def test_packed_global_adaptive_pool_is_not_a_mean():
    """transform_layout folded the extent-1 output variables out of the pool's window: the
    numbers are a mean over H and W, the compute tag (adaptive_pool_sum) says the op was an
    adaptive pool; the pool reader reads the folded window (opinfo.recognize.pool_window),
    never ``mean``."""
    func = fixture_func("variant_layout_adaptive_global")
    x = np.random.default_rng(1).uniform(-1, 1, (1, 1, 10, 5, 4)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), x.mean(axis=(2, 3), keepdims=True), rtol=1e-5)
    assert [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops] == [
        ("nn.adaptive_avg_pool2d", {"output_size": [1, 1], "layout": "NCHW4c", "out_layout": "NCHW4c"})]


FUSED = [
    ("variant_fused_conv2d_nhwc_bn_relu",
     [("nn.conv2d", {"strides": [1, 1], "padding": [0, 1, 0, 1], "dilation": [1, 1], "groups": 1,
                     "data_layout": "NHWC", "kernel_layout": "HWIO"}),
      ("multiply", {}), ("add", {}), ("nn.relu", {})]),
    ("variant_fused_conv3d_tanh_multiply",
     [("nn.conv3d", {"strides": [1, 2, 1], "padding": [1, 0, 0, 1, 0, 0], "dilation": [2, 2, 1],
                     "groups": 2, "data_layout": "NDHWC", "kernel_layout": "DHWIO"}),
      ("tanh", {}), ("multiply", {})]),
    ("variant_fused_layer_norm_add_clip",
     [("nn.layer_norm", {"axes": [2], "epsilon": 1e-05}), ("add", {}), ("clip", {"min": 0.0, "max": 6.0})]),
    ("variant_fused_strided_slice_exp",
     [("strided_slice", {"axes": [1], "begin": [1], "end": [3], "strides": [1]}), ("exp", {})]),
    ("variant_fused_square_mean", [("square", {}), ("mean", {"axis": [1, 2, 3], "keepdims": False})]),
    ("variant_fused_permute_sigmoid", [("permute_dims", {"axes": [1, 3, 0, 2]}), ("sigmoid", {})]),
]


@pytest.mark.parametrize("name,want", FUSED, ids=[c[0] for c in FUSED])
def test_fused_variant_ops_in_dataflow_order(name, want):
    ops = _ops(name)
    assert [op.name for op in ops] == [w[0] for w in want]
    for op, (wname, attrs) in zip(ops, want):
        assert _agrees(op, wname, attrs), op

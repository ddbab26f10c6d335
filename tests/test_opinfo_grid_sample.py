"""image.grid_sample, recognised by running the function (opinfo/grid_sample.py).

Fixtures (tests/fixtures/grid_sample_*.py) were printed by TVM 0.27's
tools/tvm_oracle/gen_ops.py (plain, scheduled and symbolic-batch cases, both dialects).
"""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
from fixture_util import fixture_func
from opinfo.grid_sample import grid_sample_ref


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


def _attrs(method, padding, align):
    return {"method": method, "layout": "NCHW", "padding_mode": padding, "align_corners": align}


@pytest.mark.parametrize("name, want", [
    ("grid_sample_bilinear_zeros_71_0", _attrs("bilinear", "zeros", True)),
    ("grid_sample_bilinear_border_81_0", _attrs("bilinear", "border", False)),
    ("grid_sample_nearest_reflection_81_7", _attrs("nearest", "reflection", False)),  # symbolic batch
    ("grid_sample_nearest_border_81_6", _attrs("nearest", "border", True)),           # scheduled
    ("grid_sample_bicubic_border_81_10", _attrs("bicubic", "border", True)),          # symbolic batch
])
def test_grid_sample_named(name, want):
    func = fixture_func(name)
    assert _ops(func) == [("image.grid_sample", want)]
    op, = opinfo.analyze(func).ops
    assert [o.role for o in op.operands] == ["data", "grid"]


@pytest.mark.parametrize("name, old, new", [
    ("grid_sample_bilinear_zeros_71_0", 'T.block("compute")', 'T.block("T_add")'),      # another op's tag
    ("grid_sample_bilinear_zeros_71_0", "T.float32(5.0)", "T.float32(4.0)"),            # wrong width scale
    ("grid_sample_nearest_reflection_81_7", "T.nearbyint", "T.floor"),                  # not rounding
    ("grid_sample_bilinear_border_81_0", "y[v_n, T.int64(0)", "y[v_n, T.int64(1)"),    # x read from y's channel
])
def test_edited_grid_sample_not_named(name, old, new):
    func = fixture_func(name, lambda t: t.replace(old, new))
    assert _ops(func) == []


@pytest.mark.parametrize("method", ["nearest", "bilinear", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_reference_identity_grid(method, padding):
    """With align_corners the grid of pixel centres samples the image back exactly."""
    rng = np.random.default_rng(0)
    data = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    ys, xs = np.meshgrid(np.linspace(-1, 1, 4), np.linspace(-1, 1, 5), indexing="ij")
    grid = np.broadcast_to(np.stack([xs, ys]), (2, 2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(grid_sample_ref(data, grid, method, padding, True), data, atol=1e-5)


def test_reference_padding_outside():
    """A point left of the image: 0 (zeros), the edge pixel (border), its mirror (reflection)."""
    data = np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4).repeat(2, axis=2)  # rows [0 1 2 3]
    grid = np.array([-2.0, 0.0], np.float32).reshape(1, 2, 1, 1)  # x = -2 -> pixel -1.5 (align)
    got = [grid_sample_ref(data, grid, "nearest", p, True).item() for p in ("zeros", "border", "reflection")]
    assert got == [0.0, 0.0, 2.0]

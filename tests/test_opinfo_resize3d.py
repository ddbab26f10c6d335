"""image.resize3d: the lowering library against TVM's numbers, lower(random attrs) ->
analyze == attrs (up to readings that compute the same), and TVM-printed cases."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tir
from opinfo.api import analyze, analyze_module
from opinfo.recognize import resize_ref as ref
from tir.topi.resize import RESIZE3D

FIXTURES = Path(__file__).parent / "fixtures"
MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"]
ROUNDINGS = ["", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]
KEYS = ("size", "layout", "method", "coordinate_transformation_mode", "rounding_method", "cubic_alpha",
        "cubic_exclude")


def _shape(layout, spatial, batch=1):
    return [batch, 2, *spatial] if layout == "NCDHW" else [batch, *spatial, 2]


def _lower(shape, **attrs):
    return tir.topi.lower("image.resize3d", [(shape, "float32")], **attrs)


def _ops(func):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


def _run(shape, attrs):
    x = (np.arange(np.prod(shape), dtype="float32") % 7 - 3).reshape(shape)
    return tir.run(_lower(shape, **attrs), x)


# ------------------------------------------------------------------ the lowering
def test_cubic_exclude_weighs_depth_as_tvm_does():
    # TVM 0.27's topi resize3d weighs depth with the width weights masked against the height
    # when cubic_exclude is set; these are its outputs for this input
    tvm_out = [-2.66277, 0.53589, -0.52841, -0.58695, 1.06572, -1.04325, 1.12022, -0.54696,
               -0.54636, 2.69862, 0.86907, -0.13223, 0.42566, -0.57414, -1.5986, 1.64992]
    attrs = dict(size=[2, 4, 2], method="cubic", coordinate_transformation_mode="half_pixel", cubic_alpha=-0.5,
                 cubic_exclude=1)
    got = _run([1, 1, 3, 3, 3], attrs)
    np.testing.assert_allclose(got.ravel(), tvm_out, rtol=1e-4, atol=1e-5)


def test_defaults_follow_relax():
    func = _lower([1, 2, 3, 4, 5], size=[6, 8, 10])
    (name, attrs), = _ops(func)
    assert name == "image.resize3d"
    assert attrs["method"] == "linear" and attrs["coordinate_transformation_mode"] == "half_pixel"
    assert attrs["rounding_method"] == "" and attrs["layout"] == "NCDHW"


def test_rejects_a_2d_layout():
    with pytest.raises(ValueError, match="layout"):
        _lower([1, 2, 3, 4], size=[6, 8, 10], layout="NCHW")


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(["NCDHW", "NDHWC"]), st.sampled_from(["nearest_neighbor", "linear", "cubic"]),
       st.sampled_from(MODES), st.sampled_from(ROUNDINGS), st.lists(st.integers(1, 5), min_size=6, max_size=6),
       st.integers(0, 1))
def test_lowering_matches_the_numpy_reference(layout, method, mode, rounding, sizes, exclude):
    """tir.topi's resize3d and the recognizer's references compute the same."""
    ins, outs = sizes[:3], [s + 1 for s in sizes[3:]]
    shape = _shape(layout, ins)
    attrs = dict(size=outs, layout=layout, method=method, coordinate_transformation_mode=mode,
                 rounding_method=rounding, cubic_alpha=-0.75, cubic_exclude=exclude)
    got = _run(shape, attrs)
    axes = (2, 3, 4) if layout == "NCDHW" else (1, 2, 3)
    x = (np.arange(np.prod(shape), dtype="float64") % 7 - 3).reshape(shape)
    pos = np.stack(np.meshgrid(*[np.arange(s) for s in got.shape], indexing="ij"), -1).reshape(-1, 5)

    def pixel(coords):
        idx = [pos[:, d] for d in range(5)]
        for a, c, size in zip(axes, coords, ins):
            idx[a] = np.clip(c, 0, size - 1).astype(int)
        return x[tuple(idx)]

    args = (pixel, [pos[:, a].astype(float) for a in axes], ins, outs, RESIZE3D, mode)
    if method == "nearest_neighbor":
        want = ref.nearest_nd(*args, rounding)
    elif method == "linear":
        want = ref.linear_nd(*args)
    else:
        want = ref.cubic_nd(*args, -0.75, exclude)
    if want is None:
        return
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-4, atol=1e-4, equal_nan=True)


# ------------------------------------------------------------------ recognition
@pytest.mark.parametrize("layout,ins,outs,method,mode,rounding", [
    ("NCDHW", [5, 3, 6], [10, 7, 12], "linear", "align_corners", ""),
    ("NCDHW", [3, 3, 2], [7, 4, 5], "nearest_neighbor", "asymmetric", "floor"),
    ("NCDHW", [3, 4, 3], [6, 8, 7], "nearest_neighbor", "align_corners", "round"),
    ("NDHWC", [2, 4, 3], [5, 7, 4], "nearest_neighbor", "half_pixel", "ceil"),
    ("NDHWC", [3, 2, 4], [5, 5, 9], "linear", "asymmetric", ""),
    ("NCDHW", [2, 3, 2], [3, 5, 4], "cubic", "half_pixel", ""),
])
def test_attributes_recovered(layout, ins, outs, method, mode, rounding):
    attrs = dict(size=outs, layout=layout, method=method, coordinate_transformation_mode=mode,
                 rounding_method=rounding)
    (name, got), = _ops(_lower(_shape(layout, ins), **attrs))
    assert name == "image.resize3d"
    assert {k: got[k] for k in attrs} == attrs


def _same_function(shape, given_attrs, claimed):
    """A claim other than the given attributes (an alias, or a reading no position tells
    apart) computes the same on this shape."""
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    back = _lower(shape, **{k: claimed[k] for k in KEYS if k in claimed})
    np.testing.assert_allclose(tir.run(back, x), tir.run(_lower(shape, **given_attrs), x), rtol=1e-5, atol=1e-6)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(["NCDHW", "NDHWC"]), st.sampled_from(["nearest_neighbor", "linear", "cubic"]),
       st.sampled_from(MODES), st.sampled_from(ROUNDINGS), st.lists(st.integers(2, 5), min_size=6, max_size=6),
       st.sampled_from([-0.75, -0.5]), st.booleans())
def test_round_trip(layout, method, mode, rounding, sizes, alpha, symbolic):
    """lower(random attrs) -> analyze: the given op, layout, method and size, with
    attributes that compute the same; abstaining only where an axis keeps its size (every
    mode folds a scale of one away)."""
    ins, outs = sizes[:3], sizes[3:]
    batch = tir.SizeVar("n", tir.dtype.int64) if symbolic else 1
    attrs = dict(size=outs, layout=layout, method=method, coordinate_transformation_mode=mode,
                 rounding_method=rounding, cubic_alpha=alpha, cubic_exclude=0)
    got = _ops(_lower(_shape(layout, ins, batch), **attrs))
    if any(i == o for i, o in zip(ins, outs)) and not got:
        return
    assert len(got) == 1 and got[0][0] == "image.resize3d"
    claimed = got[0][1]
    assert (claimed["layout"], claimed["method"], claimed["size"]) == (layout, method, outs)
    _same_function(_shape(layout, ins), attrs, claimed)


def test_a_2d_resize_is_not_read_as_3d():
    func = tir.topi.lower("image.resize2d", [([1, 2, 4, 3], "float32")], size=[7, 5], method="nearest_neighbor")
    assert [name for name, _ in _ops(func)] == ["image.resize2d"]


# ------------------------------------------------------------------ TVM-printed cases
@pytest.mark.parametrize("name,want", [
    ("resize3d_linear_align_corners.py",
     dict(size=[10, 7, 12], layout="NCDHW", method="linear", coordinate_transformation_mode="align_corners",
          rounding_method="")),
    ("resize3d_nearest_half_pixel_ceil.py",
     dict(size=[7, 12, 2], layout="NCDHW", method="nearest_neighbor", coordinate_transformation_mode="half_pixel",
          rounding_method="ceil")),
    ("resize3d_blocked_nearest.py",
     dict(size=[6, 7, 9], layout="NCDHW4c", method="nearest_neighbor", coordinate_transformation_mode="asymmetric",
          rounding_method="floor")),
])
def test_tvm_printed(name, want):
    info = analyze_module(tir.parse((FIXTURES / name).read_text()))
    (op,) = info["resize3d"].ops
    assert op.name == "image.resize3d"
    got = op.to_json()["attrs"]
    assert {k: got[k] for k in want} == want

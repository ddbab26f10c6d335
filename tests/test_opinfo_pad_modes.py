"""nn.pad in the modes reflect / replicate / circular (opinfo.recognize.pad_modes).

The index maps are proven against numpy's np.pad; pad_value does not enter these loops, so it
is reported as Relax's default, assumed: a standalone function abstains, a network (or a
caller passing conventions=True) reports it. Fixtures are TVM 0.27 output (gen_ops.py with
gen_attr_gaps' pad modes, some scheduled with fuse/cache)."""
from __future__ import annotations

import random

import numpy as np
import pytest

import tir
from tir.expr import FloorMod, Max, Min, const
from tir.topi import lower
from opinfo.api import analyze, analyze_module
from fixture_util import FIXTURES, fixture_func
from unknown_ops import _one

NP_MODE = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


def _attrs(func, conventions=True):
    return [(o.name, o.to_json()["attrs"], tuple(o.assumed)) for o in analyze(func, conventions=conventions).ops]


def _pad(mode, pw):
    return [("nn.pad", {"pad_width": pw, "pad_value": 0.0, "pad_mode": mode}, ("pad_value",))]


@pytest.mark.parametrize("name, mode, pw", [
    ("pad_mode_reflect_dynamic", "reflect", [0, 1, 2, 0, 1, 2, 2, 2]),  # symbolic batch n padded by 1
    ("pad_mode_replicate", "replicate", [2, 1, 2, 1]),
    ("pad_mode_circular_split", "circular", [0, 0, 2, 0, 1, 2]),  # an axis split by the schedule
    ("pad_mode_reflect_cached", "reflect", [1, 1, 0, 1, 1, 1, 2, 2]),  # read through a shared cache copy
])
def test_tvm_fixtures_named_in_a_network_only(name, mode, pw):
    func = fixture_func(name)
    assert _attrs(func) == _pad(mode, pw)
    assert analyze(func).ops == ()  # standalone: the pad value is not in the loops


def test_network_context_reports_the_assumed_value():
    text = (FIXTURES / "pad_mode_replicate.py").read_text()
    one = 'lv = R.call_tir(cls.replicate_pad, (x,), out_ty=R.Tensor((9, 10), dtype="float32"))'
    assert one in text
    twice = text.replace(one, one + "\n            lv1 = R.call_tir(cls.replicate_pad, (x,), "
                                     'out_ty=R.Tensor((9, 10), dtype="float32"))')
    (info,) = analyze_module(tir.parse(twice)).values()
    assert [(o.name, o.to_json()["attrs"], tuple(o.assumed)) for o in info.ops] == _pad("replicate", [2, 1, 2, 1])
    (alone,) = analyze_module(tir.parse(text)).values()
    assert alone.ops == ()


def test_zero_widths_abstain():
    """A reflect pad by nothing copies the data: its mode is not in what it computes."""
    assert _attrs(fixture_func("pad_mode_reflect_zero")) == []


def test_lowering_matches_numpy():
    rng = np.random.default_rng(0)
    for mode, np_mode in NP_MODE.items():
        x = rng.standard_normal((3, 4, 5)).astype("float32")
        pw = [1, 2, 0, 3, 2, 1]
        f = lower("nn.pad", [((3, 4, 5), "float32")], pad_width=pw, pad_mode=mode)
        np.testing.assert_array_equal(tir.run(f, x), np.pad(x, [(1, 2), (0, 3), (2, 1)], np_mode))


def test_lowered_random_shapes_never_wrong():
    """Every answer on lowered pads is the one lowered; abstentions only where modes or widths
    coincide: an extent of 1 padded (any split of the widths reads index 0), of 2 (mirroring
    is wrapping), or nothing padded."""
    rng = random.Random(5)
    named = 0
    for _ in range(120):
        shape = [rng.randint(1, 6) for _ in range(rng.randint(1, 3))]
        mode = rng.choice(list(NP_MODE))
        pw = []
        for n in shape:
            top = 3 if mode == "replicate" else min(3, n - 1)
            pw += [rng.randint(0, top), rng.randint(0, top)]
        got = _attrs(lower("nn.pad", [(shape, "float32")], pad_width=pw, pad_mode=mode))
        if got:
            assert got == _pad(mode, pw)
            named += 1
        else:
            small = [n for n, b, a in zip(shape, pw[0::2], pw[1::2]) if b + a and n <= 2]
            assert small or not any(pw), (shape, pw, mode)
    assert named > 60


def test_symbolic_extent_bound_to_values():
    n = tir.expr.SizeVar("n", tir.dtype.int64)
    f = lower("nn.pad", [((n, 4), "float32")], pad_width=[2, 1, 1, 1], pad_mode="circular")
    assert _attrs(f) == _pad("circular", [2, 1, 1, 1])


def test_extent_two_reflect_and_circular_coincide():
    """On an extent of two, mirroring and wrapping read the same elements: abstain."""
    f = lower("nn.pad", [((2, 2), "float32")], pad_width=[1, 1, 0, 0], pad_mode="reflect")
    assert _attrs(f) == []
    g = lower("nn.pad", [((2, 2), "float32")], pad_width=[1, 1, 0, 0], pad_mode="replicate")
    assert _attrs(g) == _pad("replicate", [1, 1, 0, 0])


def test_not_a_pad_map_abstains():
    """Index maps that are neither: a clamp that stops one short, a wrap of the wrong period, a
    resize-like halving (division is not a pad's writing)."""
    I64 = "int64"

    def clamp_short(x):
        return lambda i, j: x[i, Max(Min(j - const(1, I64), const(2, I64)), const(0, I64))]

    def wrap_wrong(x):
        return lambda i, j: x[i, FloorMod(j + const(1, I64), const(3, I64))]

    def halve(x):
        return lambda i, j: x[i, tir.expr.FloorDiv(j, const(2, I64))]

    for body, out in ((clamp_short, (3, 6)), (wrap_wrong, (3, 6)), (halve, (3, 8))):
        f = _one("ReplicatePadInput", [((3, 4), "float32")], body, out)
        assert _attrs(f) == []


def test_other_axis_in_index_abstains():
    """An index that reads another output coordinate is no pad (e.g. a skewed copy)."""
    I64 = "int64"
    f = _one("ReplicatePadInput", [((4, 4), "float32")],
             lambda x: lambda i, j: x[i, Max(Min(j - i, const(3, I64)), const(0, I64))], (4, 6))
    assert _attrs(f) == []


# ------------------------------------------------------------ image.resize2d tf_crop_and_resize
def _resize(name):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(fixture_func(name)).ops]


def _crop(size, layout, method, rounding, roi, ext, **cubic):
    return [("image.resize2d", {"size": size, "layout": layout, "method": method,
                                "coordinate_transformation_mode": "tf_crop_and_resize", "rounding_method": rounding,
                                "roi": roi, "extrapolation_value": ext, **cubic})]


@pytest.mark.parametrize("name, want", [
    ("resize_crop_nearest_ceil", _crop([10, 10], "NCHW", "nearest_neighbor", "ceil", [-0.07, 0.1, 1.09, 1.06], 0.5)),
    ("resize_crop_linear_nhwc", _crop([4, 6], "NHWC", "linear", "round", [0.18, 0.04, 0.72, 0.82], 0.5)),
    ("resize_crop_cubic_dynamic", _crop([8, 8], "NCHW", "cubic", "round", [-0.18, 0.1, 1.17, 1.09], 0.5,
                                        cubic_alpha=-0.75, cubic_exclude=1)),
    # split and cached by the schedule; rounding floor(x + 0.5), told from floor by the values
    ("resize_crop_nearest_sched", _crop([3, 10], "NHWC", "nearest_neighbor", "round_prefer_ceil",
                                        [0.03, -0.19, 1.14, 0.96], -1.0)),
])
def test_tf_crop_and_resize_fixtures(name, want):
    assert _resize(name) == want


def test_tf_crop_cubic_exclude_not_seen_abstains():
    """No source coordinate near a border: cubic_exclude 0 and 1 compute the same here."""
    assert _resize("resize_crop_cubic_exclude_unseen") == []


def test_tf_crop_guard_on_a_wrong_bound_abstains():
    """The upper guard must be the input's last index (here 4.0 against an extent of 4)."""
    edit = lambda t: t.replace("T.float32(3.0) < ", "T.float32(4.0) < ")
    text = (FIXTURES / "resize_crop_linear_nhwc.py").read_text()
    assert "T.float32(3.0) < " in text
    assert [o.name for o in analyze(fixture_func("resize_crop_linear_nhwc", edit)).ops] == []


def test_tf_crop_mixed_extrapolation_values_abstain():
    text = (FIXTURES / "resize_crop_nearest_ceil.py").read_text()
    first = text.index("T.float32(0.5), T.if_then_else")
    edited = text[:first] + "T.float32(0.25), T.if_then_else" + text[first + len("T.float32(0.5), T.if_then_else"):]
    assert edited != text
    assert [o.name for o in analyze(fixture_func("resize_crop_nearest_ceil", lambda t: edited)).ops] == []

"""index_put (accumulate) and slice_scatter with a step > 1, in the forms TVM 0.27 lowers
them to (texts written here after TVM's topi.index_put / topi.slice_scatter).

* index_put: one opaque ``index_put_generic`` block; named only under that tag, its
  ``accumulate`` read by running it. The same loops under scatter_elements' tag stay
  scatter_elements, and under no tag nothing is claimed.
* slice_scatter: start and step from the take index, end from the mask's ``i < end``
  conjunct (or the axis extent when TVM dropped it); an end that does not fit the source's
  extent is not named.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opinfo
import tir


def _ops(func):
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


# ---------------------------------------------------------------- index_put
def _index_put_text(shape, n_idx: int, accumulate: bool, tag: str = "index_put_generic") -> str:
    """TVM's index_put: copy data, then for k < n_idx put (or add) values[k] at the position
    (idx_0[k], ..., idx_{r-1}[k]), negative indices wrapped."""
    r = len(shape)
    dims = ", ".join(f"T.int64({d})" for d in shape)
    params = [f'x: T.Buffer(({dims},), "float32")']
    params += [f'y{d}: T.Buffer((T.int64({n_idx}),), "int64")' for d in range(r)]
    params += [f'vals: T.Buffer((T.int64({n_idx}),), "float32")', f'out_buf: T.Buffer(({dims},), "float32")']
    total = math.prod(shape)
    strides = [math.prod(shape[d + 1:]) for d in range(r)]
    flat_out = ", ".join(f"v // T.int64({s}) % T.int64({d})" for s, d in zip(strides, shape))
    shifted = [f"(y{d}[v] + T.Cast(\"int64\", y{d}[v] < T.int64(0)) * T.int64({shape[d]}))" for d in range(r)]
    at = ", ".join(shifted)
    update = f"out_buf[{at}] + vals[v]" if accumulate else "vals[v]"
    return f'''
@T.prim_func
def main({", ".join(params)}):
    with T.block("{tag}"):
        T.reads()
        T.writes()
        for v in T.parallel(T.int64({total})):
            out_buf[{flat_out}] = x[{flat_out}]
        for v in T.parallel(T.int64({n_idx})):
            out_buf[{at}] = {update}
'''


def _index_put_numpy(x, idx, vals, accumulate):
    out = x.copy()
    for k in range(len(vals)):
        at = tuple(int(i[k]) for i in idx)
        out[at] = out[at] + vals[k] if accumulate else vals[k]
    return out


@settings(max_examples=12, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.integers(1, 4), st.booleans(), st.integers(0, 99))
def test_index_put_accumulate_read(shape, n_idx, accumulate, seed):
    func = tir.parse(_index_put_text(shape, n_idx, accumulate))
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype("float32")
    idx = [rng.integers(-d, d, n_idx).astype("int64") for d in shape]
    vals = rng.standard_normal(n_idx).astype("float32")
    np.testing.assert_allclose(tir.run(func, x, *idx, vals), _index_put_numpy(x, idx, vals, accumulate),
                               rtol=1e-6)
    ops = _ops(func)
    if n_idx < 2 and not accumulate and math.prod(shape) < 2:
        return  # a one-element data written once: nothing told apart, either answer fits
    assert ops == [("index_put", {"accumulate": accumulate})]
    (op,) = opinfo.analyze(func).ops
    assert [o.role for o in op.operands] == ["data"] + ["indices"] * len(shape) + ["values"]


def test_index_put_duplicates_tell_accumulate():
    # data (2,), two indices: adding twice at one place is add, writing twice update
    assert _ops(tir.parse(_index_put_text([2], 2, True))) == [("index_put", {"accumulate": True})]
    assert _ops(tir.parse(_index_put_text([2], 2, False))) == [("index_put", {"accumulate": False})]


def test_index_put_loops_need_their_tag():
    # one-axis index_put computes scatter_elements(axis 0): the tag decides, and without
    # a tag the loops are not claimed
    func = tir.parse(_index_put_text([6], 3, True, tag="scatter_elements_generic"))
    assert _ops(func) == [("scatter_elements", {"axis": 0, "reduction": "add"})]
    assert _ops(tir.parse(_index_put_text([6], 3, True, tag="compute"))) == []
    # two index tensors are not scatter_elements' signature: nothing without the tag
    assert _ops(tir.parse(_index_put_text([4, 5], 3, False, tag="compute"))) == []


def test_index_put_wrong_computation_not_named():
    # values written at a shifted place: neither reading agrees
    text = _index_put_text([6], 3, False).replace("out_buf[(y0[v] +", "out_buf[(T.int64(1) + y0[v] +", 1)
    text = text.replace("* T.int64(6))] = vals[v]", "* T.int64(6)) % T.int64(6)] = vals[v]")
    func = tir.parse(text)
    assert _ops(func) == []


# ---------------------------------------------------------------- slice_scatter
def _slice_scatter_text(rows: int, n: int, start: int, end: int, step: int, m: int, less: bool = None) -> str:
    """TVM's slice_scatter along axis 1 of x (rows, n) with src (rows, m): the mask chain
    (``i >= start`` only when start != 0, ``i < end`` only when end != n, the step test only
    when step != 1) and the clipped take index ``(i - start + step - 1) // step``."""
    less = end != n if less is None else less
    blocks, mask = [], "T_full"
    allocs = ['T_full = T.alloc_buffer((T.int64(N),), "bool")', 'T_arange = T.alloc_buffer((T.int64(N),), "int64")']

    def vec(name, dtype, value):
        allocs.append(f'{name} = T.alloc_buffer((T.int64(N),), "{dtype}")')
        blocks.append(f'''
    for a in range(T.int64(N)):
        with T.block("{name}"):
            v = T.axis.spatial(T.int64(N), a)
            {name}[v] = {value}''')

    vec("T_full", "bool", "T.bool(True)")
    allocs = allocs[:2]
    vec("T_arange", "int64", 'T.Cast("int64", v)')
    allocs = allocs[:2]
    k = 0
    if start != 0:
        vec("T_greater_equal", "bool", f"T.int64({start}) <= T_arange[v]")
        vec(f"T_logical_and_{k}", "bool", f"{mask}[v] and T_greater_equal[v]")
        mask, k = f"T_logical_and_{k}", k + 1
    if less:
        vec("T_less", "bool", f"T_arange[v] < T.int64({end})")
        vec(f"T_logical_and_{k}", "bool", f"{mask}[v] and T_less[v]")
        mask, k = f"T_logical_and_{k}", k + 1
    if step != 1:
        vec("T_floor_mod", "int64", f"(T_arange[v] - T.int64({start})) % T.int64({step})")
        vec("T_equal", "bool", "T_floor_mod[v] == T.int64(0)")
        vec(f"T_logical_and_{k}", "bool", f"{mask}[v] and T_equal[v]")
        mask, k = f"T_logical_and_{k}", k + 1
    vec("compute", "int64", f"T.max(T.min((T_arange[v] - T.int64({start}) + T.int64({step - 1})) // "
                            f"T.int64({step}), T.int64(N1)), T.int64(0))")
    body = "".join(blocks).replace("N1", str(n - 1)).replace("(N)", f"({n})")
    allocs_text = "\n    ".join(a.replace("(N)", f"({n})") for a in allocs)
    return f'''
@T.prim_func
def main(x: T.Buffer((T.int64({rows}), T.int64({n})), "float32"), y: T.Buffer((T.int64({rows}), T.int64({m})), "float32"), T_where: T.Buffer((T.int64({rows}), T.int64({n})), "float32")):
    {allocs_text}
    T_take = T.alloc_buffer((T.int64({rows}), T.int64({n})))
    {body}
    for a, b in T.grid(T.int64({rows}), T.int64({n})):
        with T.block("T_take"):
            v0, v1 = T.axis.remap("SS", [a, b])
            T_take[v0, v1] = y[v0, compute[v1]]
    for a, b in T.grid(T.int64({rows}), T.int64({n})):
        with T.block("T_where"):
            v0, v1 = T.axis.remap("SS", [a, b])
            T_where[v0, v1] = T.Select(T.int64(0) < T.Cast("int64", {mask}[v1]), T_take[v0, v1], x[v0, v1])
'''


@st.composite
def _slices(draw):
    n = draw(st.integers(2, 12))
    step = draw(st.integers(1, 4))
    start = draw(st.integers(0, n - 1))
    end = draw(st.integers(start + 1, n))
    return n, start, end, step, -(-(end - start) // step)


@settings(max_examples=25, deadline=None)
@given(_slices(), st.integers(1, 3))
def test_slice_scatter_any_step(sl, rows):
    n, start, end, step, m = sl
    func = tir.parse(_slice_scatter_text(rows, n, start, end, step, m))
    rng = np.random.default_rng(n * 100 + start)
    x, y = rng.standard_normal((rows, n)).astype("float32"), rng.standard_normal((rows, m)).astype("float32")
    want = x.copy()
    want[:, start:end:step] = y
    np.testing.assert_array_equal(tir.run(func, x, y), want)
    assert _ops(func) == [("slice_scatter", {"axis": 1, "start": start, "end": end, "step": step})]


def test_slice_scatter_end_open_only_in_step_window():
    # n = 10, start 8, step 2: one element written; end 9 spelled by ``i < 9``, end 10 by
    # no bound at all (TVM drops ``i < n``)
    assert _ops(tir.parse(_slice_scatter_text(2, 10, 8, 9, 2, 1))) == \
        [("slice_scatter", {"axis": 1, "start": 8, "end": 9, "step": 2})]
    assert _ops(tir.parse(_slice_scatter_text(2, 10, 8, 10, 2, 1))) == \
        [("slice_scatter", {"axis": 1, "start": 8, "end": 10, "step": 2})]


def test_slice_scatter_inconsistent_end_not_named():
    # a bound that leaves fewer elements than the source has, or more than a step beyond
    # the last one written, fits no slice_scatter
    assert _ops(tir.parse(_slice_scatter_text(2, 10, 1, 9, 2, 3, less=True))) == []
    # no bound while the last element written is more than a step from the extent
    assert _ops(tir.parse(_slice_scatter_text(2, 10, 1, 6, 2, 3, less=False))) == []


# ---------------------------------------------------------------- TVM-printed fixtures
from fixture_util import fixture_func  # noqa: E402


@pytest.mark.parametrize("name, want", [
    # index_put on 2-D data (two index tensors), and with a symbolic first extent
    ("s7c_index_put_2d", ("index_put", {"accumulate": False})),
    ("s7c_index_put_sym", ("index_put", {"accumulate": True})),
    # cache_read copies (``y2_shared``, ``y_shared``) carry no compute tag of their own
    ("s7c_meshgrid_cached", ("meshgrid", {"indexing": "xy"})),
    ("s7c_grid_sample_cached", ("image.grid_sample", {"method": "bilinear", "layout": "NCHW",
                                                      "padding_mode": "reflection", "align_corners": False})),
])
def test_tvm_fixture_recognised(name, want):
    assert _ops(fixture_func(name)) == [want]


def test_roi_align_one_sample_per_bin_max_from_reduction():
    # sample_ratio 1: avg and max give the same numbers; the max reduction decides
    (op,) = opinfo.analyze(fixture_func("s7c_roi_align_max_1")).ops
    assert (op.name, op.attrs["mode"], op.attrs["sample_ratio"], op.attrs["layout"]) == \
        ("vision.roi_align", "max", 1, "NHWC")


def test_roi_align_mixed_reductions_not_settled():
    # a function whose reduction updates are of both forms settles nothing
    from opinfo.roi import _combiner, _settle_mode
    func = fixture_func("s7c_roi_align_max_1")
    assert _combiner(func) == "max"
    base = {"pooled_size": [3, 3], "spatial_scale": 1.0, "sample_ratio": 1, "aligned": False, "layout": "NHWC"}
    pair = [("vision.roi_align", dict(base, mode="avg")), ("vision.roi_align", dict(base, mode="max"))]
    assert _settle_mode(pair, func) == [pair[1]]
    other = [pair[0], ("vision.roi_align", dict(base, mode="max", sample_ratio=2))]
    assert _settle_mode(other, func) == other  # differing in more than the mode: left as is
    mixed = tir.parse('''
@T.prim_func
def main(a: T.Buffer((T.int64(4),), "float32"), b: T.Buffer((T.int64(1),), "float32"), c: T.Buffer((T.int64(1),), "float32")):
    for k in range(T.int64(4)):
        with T.block("s"):
            vk = T.axis.reduce(T.int64(4), k)
            with T.init():
                b[0] = T.float32(0.0)
            b[0] = b[0] + a[vk]
    for k in range(T.int64(4)):
        with T.block("m"):
            vk = T.axis.reduce(T.int64(4), k)
            with T.init():
                c[0] = T.float32(-3.0e38)
            c[0] = T.max(c[0], a[vk])
''')
    assert _combiner(mixed) is None
    assert _settle_mode(pair, mixed) == []

"""Lowerings of index-driven ops (``tir/topi/gather.py``): gathers, scatters, ``one_hot``,
``split``, ``meshgrid``, ``bucketize``, ``reverse_sequence``, ``slice_scatter``,
``index_put``, ``eye`` and ``full``, in the forms TVM 0.27's legalization writes.

Each op is lowered with random attributes, then (1) ``opinfo.analyze`` must name the op with
those attributes (``eye`` and ``full`` are named only in a module whose ``main`` calls
them) and (2) the interpreter must compute a numpy reference on random inputs. (Against TVM:
``tools/relower_audit.py`` over the generated corpora confirms these ops' answers.)"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import opinfo
from opinfo.api import analyze_module
from tir import run, topi
from tir.topi.graph import GraphBuilder
from tir.verifier import verify

SETTINGS = settings(max_examples=12, deadline=None)
SHAPES = st.lists(st.integers(1, 4), min_size=1, max_size=3)


def _lower(op, inputs, attrs):
    func = topi.lower(op, inputs, **attrs)
    verify(func)
    return func


def _named(func) -> list:
    """``[(op, attrs)]`` opinfo finds in ``func`` (tuples as lists)."""
    return [(o.name, {k: list(v) if isinstance(v, tuple) else v for k, v in dict(o.attrs).items()})
            for o in opinfo.analyze(func).ops]


def _run_all(func, *inputs) -> list:
    """Every output of ``func`` (the parameters after ``inputs``) after running it."""
    from tir.interp import interpret
    from tir.interp_data import np_dtype

    outs = [np.zeros([int(e.value) for e in buf.shape], np_dtype(buf.dtype)) for buf in func.buffers[len(inputs):]]
    interpret(func, *inputs, *outs)
    return outs


def _rng(seed):
    return np.random.default_rng(seed)


def _floats(rng, shape):
    return rng.standard_normal(shape).astype("float32")


# ---------------------------------------------------------------- gathers
@SETTINGS
@given(SHAPES, st.data(), st.integers(0, 99))
def test_gather_elements(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    ishape = [data.draw(st.integers(1, e)) for e in shape]
    func = _lower("gather_elements", [(shape, "float32"), (ishape, "int64")], dict(axis=axis))
    assert _named(func) == [("gather_elements", {"axis": axis})]
    rng = _rng(seed)
    x, idx = _floats(rng, shape), rng.integers(0, shape[axis], ishape)
    want = np.empty(ishape, "float32")
    for pos in np.ndindex(*ishape):
        want[pos] = x[pos[:axis] + (idx[pos],) + pos[axis + 1:]]
    np.testing.assert_array_equal(run(func, x, idx), want)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=4), st.data(), st.integers(0, 99))
def test_gather_nd(shape, data, seed):
    batch = data.draw(st.integers(0, 1))
    depth = data.draw(st.integers(1, len(shape) - batch))
    lead = [data.draw(st.integers(1, 3))]
    ishape = shape[:batch] + lead + [depth]
    func = _lower("gather_nd", [(shape, "float32"), (ishape, "int64")], dict(batch_dims=batch))
    assert _named(func) == [("gather_nd", {"batch_dims": batch})]
    rng = _rng(seed)
    x = _floats(rng, shape)
    idx = np.stack([rng.integers(0, shape[batch + k], ishape[:-1]) for k in range(depth)], axis=-1)
    want = np.stack([x[pos[:batch] + tuple(idx[pos])] for pos in np.ndindex(*ishape[:-1])])
    np.testing.assert_array_equal(run(func, x, idx), want.reshape(ishape[:-1] + shape[batch + depth:]))


# ---------------------------------------------------------------- scatters
REDUCE = {"update": lambda o, u: u, "add": np.add, "mul": np.multiply, "min": np.minimum,
          "max": np.maximum, "mean": lambda o, u: (o + u) / np.float32(2)}


@SETTINGS
@given(st.lists(st.integers(2, 4), min_size=1, max_size=2), st.data(), st.sampled_from(sorted(REDUCE)), st.integers(0, 99))
def test_scatter_elements(shape, data, reduction, seed):
    """Indices shaped like the data off the axis (TVM's flat offsets then agree with numpy's
    coordinates); negative indices count from the end; later updates of one element win.
    (opinfo names the op only when the indices are no longer than the data along the axis.)"""
    axis = data.draw(st.integers(0, len(shape) - 1))
    ishape = list(shape)
    ishape[axis] = data.draw(st.integers(1, shape[axis]))
    inputs = [(shape, "float32"), (ishape, "int64"), (ishape, "float32")]
    func = _lower("scatter_elements", inputs, dict(axis=axis, reduction=reduction))
    assert _named(func) == [("scatter_elements", {"axis": axis, "reduction": reduction})]
    rng = _rng(seed)
    x, idx, upd = _floats(rng, shape), rng.integers(-shape[axis], shape[axis], ishape), _floats(rng, ishape)
    want = x.copy()
    for pos in np.ndindex(*ishape):
        at = pos[:axis] + (idx[pos] % shape[axis],) + pos[axis + 1:]
        want[at] = REDUCE[reduction](want[at], upd[pos])
    np.testing.assert_allclose(run(func, x, idx, upd), want, rtol=1e-6)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data(), st.sampled_from(sorted(set(REDUCE) - {"mean"})),
       st.integers(0, 99))
def test_scatter_nd(shape, data, reduction, seed):
    depth = data.draw(st.integers(1, len(shape)))
    lead = data.draw(st.integers(1, 3))
    ishape, ushape = [lead, depth], [lead] + shape[depth:]
    inputs = [(shape, "float32"), (ishape, "int64"), (ushape, "float32")]
    func = _lower("scatter_nd", inputs, dict(reduction=reduction))
    named = _named(func)
    assert named in ([("scatter_nd", {"reduction": reduction})], [])  # tiny shapes can leave reductions alike
    rng = _rng(seed)
    x, upd = _floats(rng, shape), _floats(rng, ushape)
    idx = np.stack([rng.integers(0, shape[k], lead) for k in range(depth)], axis=-1)
    want = x.copy()
    for row in range(lead):
        at = tuple(idx[row])
        want[at] = REDUCE[reduction](want[at], upd[row])
    np.testing.assert_allclose(run(func, x, idx, upd), want, rtol=1e-6)


def test_scatter_nd_is_named_on_larger_shapes():
    func = _lower("scatter_nd", [((6, 4), "float32"), ((3, 1), "int64"), ((3, 4), "float32")], dict(reduction="max"))
    assert _named(func) == [("scatter_nd", {"reduction": "max"})]


@SETTINGS
@given(st.lists(st.integers(2, 5), min_size=1, max_size=3), st.integers(1, 4), st.booleans(), st.integers(0, 99))
def test_index_put(shape, count, accumulate, seed):
    inputs = [(shape, "float32")] + [((count,), "int64")] * len(shape) + [((count,), "float32")]
    func = _lower("index_put", inputs, dict(accumulate=accumulate))
    assert _named(func) == [("index_put", {"accumulate": accumulate})]
    rng = _rng(seed)
    x, vals = _floats(rng, shape), _floats(rng, count)
    idx = [rng.integers(-e, e, count) for e in shape]
    want = x.copy()
    for k in range(count):
        at = tuple(i[k] for i in idx)
        want[at] = want[at] + vals[k] if accumulate else vals[k]
    np.testing.assert_allclose(run(func, x, *idx, vals), want, rtol=1e-6)


def test_index_put_broadcasts_its_indices():
    func = _lower("index_put", [((4, 5), "float32"), ((3, 1), "int64"), ((2,), "int64"), ((6,), "float32")], {})
    x, rows, cols = np.zeros((4, 5), "float32"), np.array([[0], [2], [3]]), np.array([1, 4])
    vals = np.arange(1, 7, dtype="float32")
    want = x.copy()
    want[rows, cols] = vals.reshape(3, 2)
    np.testing.assert_array_equal(run(func, x, rows, cols, vals), want)


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=3), st.data(), st.integers(0, 99))
def test_slice_scatter(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis] + 3
    step = data.draw(st.integers(1, 3))
    start = data.draw(st.integers(0, n - 1))
    end = data.draw(st.integers(start + 1, n))
    xshape, sshape = list(shape), list(shape)
    xshape[axis], sshape[axis] = n, len(range(start, end, step))
    attrs = dict(axis=axis, start=start, end=end, step=step)
    func = _lower("slice_scatter", [(xshape, "float32"), (sshape, "float32")], attrs)
    named = _named(func)
    if step == 1 or end == n or (end - start) % step:  # otherwise another end gives the same slice
        assert named == [("slice_scatter", attrs)]
    rng = _rng(seed)
    x, src = _floats(rng, xshape), _floats(rng, sshape)
    want = x.copy()
    want[(slice(None),) * axis + (slice(start, end, step),)] = src
    np.testing.assert_array_equal(run(func, x, src), want)


# ---------------------------------------------------------------- other index-driven ops
@SETTINGS
@given(SHAPES, st.integers(1, 5), st.data(), st.sampled_from([(1.0, 0.0), (2.5, 0.5), (0.0, 1.0)]),
       st.sampled_from(["int32", "int64"]), st.integers(0, 99))
def test_one_hot(shape, depth, data, values, idtype, seed):
    axis = data.draw(st.sampled_from([-1] + list(range(len(shape)))))
    on, off = values
    attrs = dict(depth=depth, axis=axis, on_value=on, off_value=off)
    func = _lower("one_hot", [(shape, idtype)], attrs)
    assert _named(func) == [("one_hot", attrs)]
    idx = _rng(seed).integers(0, depth + 1, shape).astype(idtype)
    hot = np.where(idx[..., None] == np.arange(depth), on, off)
    want = hot if axis == -1 else np.moveaxis(hot, -1, axis)
    np.testing.assert_array_equal(run(func, idx), want)


@SETTINGS
@given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.data(), st.integers(0, 99))
def test_split(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    if data.draw(st.booleans()):
        sections = data.draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
        arg, cuts = sections, [n // sections * k for k in range(1, sections)]
    else:
        cuts = sorted(data.draw(st.lists(st.integers(1, n), min_size=1, max_size=2, unique=True)))
        arg = cuts
    func = _lower("split", [(shape, "float32")], dict(indices_or_sections=arg, axis=axis))
    if len(cuts) + 1 > 1 and all(0 < c < n for c in cuts):
        assert _named(func) == [("split", {"axis": axis, "indices_or_sections": arg})]
    x = _floats(_rng(seed), shape)
    got = _run_all(func, x)
    want = np.split(x, cuts, axis=axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_split_sections_round_up():
    """``n`` sections of ``ceil(extent / n)``, the last one shorter, as TVM's ``split_sections``."""
    x = np.arange(5, dtype="float32")
    got = _run_all(_lower("split", [((5,), "float32")], dict(indices_or_sections=3, axis=0)), x)
    assert [list(g) for g in got] == [[0, 1], [2, 3], [4]]


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.sampled_from(["ij", "xy"]), st.integers(0, 99))
def test_meshgrid(lengths, indexing, seed):
    func = _lower("meshgrid", [((m,), "float32") for m in lengths], dict(indexing=indexing))
    if len(lengths) > 1 and len(set(lengths)) == len(lengths):
        assert _named(func) == [("meshgrid", {"indexing": indexing})]
    xs = [_floats(_rng(seed + k), m) for k, m in enumerate(lengths)]
    got = _run_all(func, *xs)
    assert len(got) == len(xs)
    for g, w in zip(got, np.meshgrid(*xs, indexing=indexing)):
        np.testing.assert_array_equal(g, w)


@SETTINGS
@given(SHAPES, st.integers(1, 6), st.booleans(), st.booleans(), st.integers(0, 99))
def test_bucketize(shape, count, out_int32, right, seed):
    attrs = dict(out_int32=out_int32, right=right)
    func = _lower("bucketize", [(shape, "float32"), ((count,), "float32")], attrs)
    if count > 1:
        assert _named(func) == [("bucketize", attrs)]
    rng = _rng(seed)
    bounds = np.sort(rng.integers(-3, 4, count)).astype("float32")
    x = rng.integers(-4, 5, shape).astype("float32")
    got = run(func, x, bounds)
    assert got.dtype == ("int32" if out_int32 else "int64")
    np.testing.assert_array_equal(got, np.searchsorted(bounds, x, side="right" if right else "left"))


@SETTINGS
@given(st.lists(st.integers(1, 4), min_size=2, max_size=3), st.data(), st.integers(0, 99))
def test_reverse_sequence(shape, data, seed):
    seq_axis, batch_axis = data.draw(st.permutations(range(len(shape))))[:2]
    attrs = dict(seq_axis=seq_axis, batch_axis=batch_axis)
    func = _lower("reverse_sequence", [(shape, "float32"), ((shape[batch_axis],), "int32")], attrs)
    if shape[seq_axis] > 1:
        assert _named(func) in ([("reverse_sequence", attrs)], [])
    rng = _rng(seed)
    x, lengths = _floats(rng, shape), rng.integers(0, shape[seq_axis] + 2, shape[batch_axis]).astype("int32")
    want = x.copy()
    for bi, length in enumerate(lengths):
        keep = min(int(length), shape[seq_axis])
        if keep <= 1:
            continue
        sel = [slice(None)] * len(shape)
        sel[batch_axis], sel[seq_axis] = bi, slice(0, keep)
        want[tuple(sel)] = np.flip(x[tuple(sel)], axis=seq_axis - (batch_axis < seq_axis))
    np.testing.assert_array_equal(run(func, x, lengths), want)


def test_reverse_sequence_is_named():
    attrs = dict(seq_axis=1, batch_axis=0)
    func = _lower("reverse_sequence", [((2, 6, 6), "float32"), ((2,), "int32")], attrs)
    assert _named(func) == [("reverse_sequence", attrs)]


# ---------------------------------------------------------------- creations
def _named_in_graph(op, attrs) -> list:
    g = GraphBuilder()
    mod = g.build(g.call(op, **attrs))
    (info,) = analyze_module(mod).values()
    return [(o.name, {k: list(v) if isinstance(v, tuple) else v for k, v in dict(o.attrs).items()}) for o in info.ops]


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 6), st.integers(-3, 3), st.sampled_from(["float32", "int32"]))
def test_eye(n, m, k, dtype):
    attrs = dict(n=n, m=m, k=k, dtype=dtype)
    if n > 1 or m > 1:
        assert _named_in_graph("eye", attrs) in ([("eye", attrs)], [])
    got = run(_lower("eye", [], attrs))
    np.testing.assert_array_equal(got, np.eye(n, m, k, dtype=dtype))


def test_eye_is_named():
    attrs = dict(n=4, m=3, k=-1, dtype="float32")
    assert _named_in_graph("eye", attrs) == [("eye", attrs)]


@SETTINGS
@given(st.lists(st.integers(1, 5), min_size=1, max_size=3), st.sampled_from([-2.5, 3.0, 7.25]))
def test_full(shape, fill):
    attrs = dict(shape=shape, fill_value=fill, dtype="float32")
    if np.prod(shape) > 1:
        assert _named_in_graph("full", attrs) == [("full", attrs)]
    np.testing.assert_array_equal(run(_lower("full", [], attrs)), np.full(shape, fill, "float32"))


@pytest.mark.parametrize("op, inputs, attrs", [
    ("gather_elements", [((3, 4), "float32"), ((3,), "int64")], {}),
    ("gather_elements", [((3, 4), "float32"), ((3, 4), "float32")], {}),
    ("gather_nd", [((3, 4), "float32"), ((2, 3), "int64")], {}),
    ("scatter_elements", [((3, 4), "float32"), ((3, 4), "int64"), ((3, 4), "float32")], dict(reduction="sub")),
    ("scatter_nd", [((3, 4), "float32"), ((2, 1), "int64"), ((2, 5), "float32")], {}),
    ("one_hot", [((3,), "int64")], dict(depth=0)),
    ("split", [((6,), "float32")], dict(indices_or_sections=[4, 2])),
    ("meshgrid", [((2, 2), "float32")], {}),
    ("bucketize", [((3,), "float32"), ((2, 2), "float32")], {}),
    ("reverse_sequence", [((3, 4), "float32"), ((2,), "int32")], dict(seq_axis=1, batch_axis=0)),
    ("slice_scatter", [((6, 4), "float32"), ((2, 4), "float32")], dict(axis=0, start=1, end=4)),
    ("index_put", [((3, 4), "float32"), ((2,), "int64"), ((2,), "float32")], {}),
    ("eye", [], dict(n=-1)),
    ("full", [], dict(shape=[2, -3])),
])
def test_bad_attributes_raise_op_error(op, inputs, attrs):
    with pytest.raises(topi.OpError):
        topi.lower(op, inputs, **attrs)

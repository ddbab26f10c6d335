"""tile with a repeat of one on an axis a schedule split: ``v % n`` simplified to ``v``.

TVM prints tile's index as ``x[v % n, ...]`` on every data axis, a repeat of one included.
After ``blockize`` (or any split giving the axis a block variable of the data's extent)
TVM's simplifier proves ``v % n == v`` and prints the bare variable; the recognizer reads
such an axis as a repeat of one when the output's extent is the data's. At least one axis
must still be read modulo its extent: with none, broadcast_to or a copy reads the same.
"""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import opinfo
import tir

BLOCKIZED = '''
# from tvm.script import tir as T
@T.prim_func(private=True)
def tile(x: T.Buffer((T.int64(4), T.int64(3)), "float32"), T_tile: T.Buffer((T.int64(2), T.int64(12), T.int64(3)), "float32")):
    T.func_attr({"tir.noalias": True})
    for f in range(T.int64(24)):
        with T.block("T_tile_o"):
            v_ax0_o = T.axis.spatial(T.int64(2), f // T.int64(12))
            v_ax1_o = T.axis.spatial(T.int64(12), f % T.int64(12))
            v_ax2_o = T.axis.spatial(T.int64(1), T.int64(0))
            T.reads(x[v_ax1_o % T.int64(4), T.int64(0):T.int64(3)])
            T.writes(T_tile[v_ax0_o, v_ax1_o, T.int64(0):T.int64(3)])
            for ax2 in range(T.int64(3)):
                with T.block("T_tile"):
                    v_ax2_i = T.axis.spatial(T.int64(3), ax2)
                    T.reads(x[v_ax1_o % T.int64(4), v_ax2_i])
                    T.writes(T_tile[v_ax0_o, v_ax1_o, v_ax2_i])
                    T_tile[v_ax0_o, v_ax1_o, v_ax2_i] = x[v_ax1_o % T.int64(4), v_ax2_i]
'''


def _func(text: str):
    parsed = tir.parse(text)
    return parsed if isinstance(parsed, tir.PrimFunc) else parsed.prim_funcs()[0][1]


def _ops(func) -> list:
    with np.errstate(all="ignore"):
        return [(op.name, {k: (list(v) if isinstance(v, tuple) else v) for k, v in op.attrs.items()})
                for op in opinfo.analyze(func).ops]


def test_blockized_tile_reads_the_bare_axis_as_repeat_one():
    func = _func(BLOCKIZED)
    assert _ops(func) == [("tile", {"repeats": [2, 3, 1]})]
    x = np.arange(12, dtype="float32").reshape(4, 3)
    np.testing.assert_array_equal(tir.run(func, x), np.tile(x, (2, 3, 1)))
    # a copy out of row-major order is named only under its op's own tag (copy_tags)
    other = _func(BLOCKIZED.replace('"T_tile"', '"T_other"').replace('"T_tile_o"', '"T_other_o"'))
    assert _ops(other) == []


def test_bare_axis_of_another_extent_is_no_tile():
    # the output's last axis is longer than the data's: ``x[.., v]`` reads past it
    text = BLOCKIZED.replace("T.int64(2), T.int64(12), T.int64(3)), \"float32\")):",
                             "T.int64(2), T.int64(12), T.int64(6)), \"float32\")):")
    text = text.replace("T.axis.spatial(T.int64(3), ax2)", "T.axis.spatial(T.int64(6), ax2)")
    text = text.replace("range(T.int64(3))", "range(T.int64(6))").replace("T.int64(0):T.int64(3)]", "T.int64(0):T.int64(6)]")
    assert [name for name, _ in _ops(_func(text))] != ["tile"]


def _unmodded(shape, reps, bare):
    """tile's loops with the axes in ``bare`` (repeat one) read without the modulo."""
    R, r = len(reps), len(shape)
    out = [s * k for s, k in zip([1] * (R - r) + list(shape), reps)]
    vs = [f"v{i}" for i in range(R)]
    idx = []
    for d, n in enumerate(shape):
        v = vs[R - r + d]
        idx.append(v if d in bare else f"{v} % {n}")
    load = f"x[{', '.join(idx)}]"
    return f'''
# from tvm.script import tir as T
@T.prim_func(private=True)
def tile(x: T.Buffer(({", ".join(map(str, shape))},), "float32"), T_tile: T.Buffer(({", ".join(map(str, out))},), "float32")):
    for {", ".join(f"a{i}" for i in range(R))} in T.grid({", ".join(map(str, out))}):
        with T.block("T_tile"):
            {", ".join(vs)} = T.axis.remap("{'S' * R}", [{", ".join(f"a{i}" for i in range(R))}])
            T_tile[{", ".join(vs)}] = {load}
'''


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_tile_with_bare_unit_repeats_recovers_and_runs(data):
    r = data.draw(st.integers(1, 3))
    shape = data.draw(st.lists(st.integers(2, 4), min_size=r, max_size=r))
    extra = data.draw(st.integers(0, 1))
    reps = data.draw(st.lists(st.integers(1, 3), min_size=r + extra, max_size=r + extra))
    ones = [d for d in range(r) if reps[extra + d] == 1]
    bare = set(data.draw(st.lists(st.sampled_from(ones), unique=True))) if ones else set()
    func = _func(_unmodded(shape, reps, bare))
    x = np.random.default_rng(0).normal(size=shape).astype("float32")
    np.testing.assert_array_equal(tir.run(func, x), np.tile(x, reps))
    got = _ops(func)
    if len(bare) == r:
        # no axis read modulo: broadcast_to or a copy reads the same loops; TVM's block
        # tag may still name the tile (opinfo.copy_tags), never with other repeats
        assert all(attrs == {"repeats": reps} for name, attrs in got if name == "tile")
    else:
        assert got == [("tile", {"repeats": reps})]

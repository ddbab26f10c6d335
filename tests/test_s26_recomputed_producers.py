"""Predicates of producers that ``compute_at`` placed under a consumer's resplit loops
(opinfo.predicates.drop_predicates with opinfo.predicate_enum's ``repeats``).

The fixture is TVM 0.27's max_pool2d (NHWC, stride 3, dilation 2) with its loops split again
and again by factors that do not divide (the robustness generator's ``resplit``), its pad
block and a cached copy of it computed at the pool's loops. The digits of the consumer's
splits reach the producers' predicates; enumerating them shows every row of the padded input
is computed, the rows two output tiles share twice. A producer that computes the same value
wherever it runs may run a point again; an accumulator's init or update may not.
"""
from __future__ import annotations

import numpy as np

import opinfo
import tir
from opinfo.predicates import _recomputable, drop_predicates
from opinfo.coverage import block_realizes
from opinfo.rewrite import stores_in
from tests.fixture_util import FIXTURES

NAME = "s26_resplit_pool_compute_at"
PAD_GUARD = "ax0_0 * T.int64(2) + ax0_1 < T.int64(5))"


def _func(old: str = "", new: str = ""):
    text = (FIXTURES / f"{NAME}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (func,) = [f for _, f in tir.parse(text).prim_funcs()]
    return func


def test_recomputed_pad_rows_are_read():
    func = _func()
    assert drop_predicates(func) is not None
    info = opinfo.analyze(func)
    assert info.refused is None and info.ops == ()
    (pool,) = info.undecided  # ceil_mode and the bottom padding are open: by design
    assert pool.name == "nn.max_pool2d"
    assert {k: list(pool.attrs[k]) for k in ("pool_size", "strides", "dilation")} == \
        {"pool_size": [3, 3], "strides": [3, 1], "dilation": [2, 1]}
    assert pool.attrs["layout"] == "NHWC"
    # the reading computes what the scheduled loops compute
    x = np.random.default_rng(3).normal(size=(1, 12, 6, 4)).astype("float32")
    want = tir.run(func, x)
    attrs = {k: (list(v) if isinstance(v, tuple) else v) for k, v in pool.attrs.items()}
    again = tir.topi.lower("nn.max_pool2d", [((1, 12, 6, 4), "float32")], **attrs)
    np.testing.assert_allclose(tir.run(again, x), want, rtol=0, atol=0)


def test_a_pad_row_no_tile_computes_is_not_dropped():
    # one row fewer per tile: the last padded row (13) is never computed
    func = _func(PAD_GUARD, PAD_GUARD.replace("T.int64(5))", "T.int64(4))"))
    dropped = drop_predicates(func)
    # refused, or read as a pad block over the leading rows computed (predicates.prefix_box):
    # the pool reading the row left out is then the uninitialised-read gate's to refuse
    assert dropped is None or [b.iter_vars for b in dropped.blocks()] != [b.iter_vars for b in func.blocks()]
    assert opinfo.analyze(func).ops == ()
    assert opinfo.analyze(func).undecided == ()


def test_only_pure_producers_may_run_a_point_again():
    func = _func()
    writers: dict = {}
    blocks = {}
    for r, _ in block_realizes(func.body):
        blocks[r.block.name] = r.block
        for store in stores_in(r.block.body):
            writers.setdefault(id(store.buffer), set()).add(id(r.block))
    assert _recomputable(blocks["pad_temp"], writers)
    assert _recomputable(blocks["pad_temp_shared"], writers)
    # the pool's init shares its buffer with the update: run again it would reset partial maxima
    assert not _recomputable(blocks["pool_max_init"], writers)
    assert not _recomputable(blocks["pool_max_update"], writers)


# ---------------------------------------------------------------- producers of a prefix box
#
# blockize then compute_at (TVM 0.27, the generator's ``blockize`` and ``bind`` kinds): the
# pad block of a stride-3 conv1d computes, per output column, the three padded columns it
# reads -- 12 of the pad buffer's 13, its domain [0, 12) once unblockized. Its value stands
# for every load of the buffer, since all read inside [0, 12); the buffer's shape still
# tells the after-padding.

PREFIX = "s26_blockize_pad_prefix_conv1d"
READ = "pad_temp[v_nn_o, v_rc_o, v_yy_o * T.int64(3) + v_ry_i] * y"


def _prefix_func(old: str = "", new: str = ""):
    text = (FIXTURES / f"{PREFIX}.py").read_text()
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (func,) = [f for _, f in tir.parse(text).prim_funcs()]
    return func


def test_a_pad_computed_only_where_read_is_inlined():
    (op,) = opinfo.analyze(_prefix_func()).ops
    assert op.name == "nn.conv1d"
    assert {k: list(op.attrs[k]) for k in ("strides", "padding", "dilation")} == \
        {"strides": [3], "padding": [2, 2], "dilation": [1]}


def test_a_load_past_the_computed_box_is_not_inlined():
    # the product reads one column further: column 12, which no block writes
    func = _prefix_func(READ, READ.replace("v_ry_i]", "v_ry_i + T.int64(1)]"))
    assert opinfo.analyze(func).ops == ()


def test_short_box_and_reads_within():
    from opinfo.normalize import normalize
    from opinfo.semantic import Semantics, _reads_within, _short_box

    func = normalize(_prefix_func())
    sem = Semantics(func)
    (pad,) = [s for s in sem.stages if s.buffer is not None and s.buffer.name == "pad_temp"]
    assert _short_box(pad) == {2: 12}
    assert _reads_within(func, pad.buffer, {2: 12})
    assert not _reads_within(func, pad.buffer, {2: 11})


def test_blockized_tile_keeps_its_modulo():
    # tile(x[8], [3, 1, 1]) blockized by 2: the inner block reads x[o % 4 * 2 + i]; fused
    # back that is x[v % 8] (tile), not x[v] (which broadcast_to reads the same)
    (func,) = [f for _, f in tir.parse((FIXTURES / "s26_blockize_tile.py").read_text()).prim_funcs()]
    (op,) = opinfo.analyze(func).ops
    assert (op.name, list(op.attrs["repeats"])) == ("tile", [3, 1, 1])


def test_merged_digits_is_an_identity():
    from tir.expr import Add, FloorDiv, FloorMod, Mul, Var, const
    from tir.dtype import dtype
    from opinfo.blockize import _merged_digits
    from opinfo.probe import evaluate_points

    v = Var("v", dtype("int64"))
    c = lambda k: const(k, "int64")  # noqa: E731
    for d, m in ((2, 4), (3, 5), (1, 7)):
        e = Add(Mul(FloorMod(FloorDiv(v, c(d)), c(m)), c(d)), FloorMod(v, c(d)))
        merged = _merged_digits(e)
        assert isinstance(merged, FloorMod) and merged.b.value == d * m
        pts = np.arange(-40, 40)
        assert (evaluate_points(e, {v: pts}, len(pts)) == evaluate_points(merged, {v: pts}, len(pts))).all()
    # a divisor other than the scale: not a digit pair
    assert _merged_digits(Add(Mul(FloorMod(FloorDiv(v, c(2)), c(4)), c(3)), FloorMod(v, c(3)))) is None

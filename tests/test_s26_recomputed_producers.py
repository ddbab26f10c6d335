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
from opinfo.coverage import _realizes
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
    assert drop_predicates(func) is None
    assert opinfo.analyze(func).ops == ()


def test_only_pure_producers_may_run_a_point_again():
    func = _func()
    writers: dict = {}
    blocks = {}
    for r, _ in _realizes(func.body):
        blocks[r.block.name] = r.block
        for store in stores_in(r.block.body):
            writers.setdefault(id(store.buffer), set()).add(id(r.block))
    assert _recomputable(blocks["pad_temp"], writers)
    assert _recomputable(blocks["pad_temp_shared"], writers)
    # the pool's init shares its buffer with the update: run again it would reset partial maxima
    assert not _recomputable(blocks["pool_max_init"], writers)
    assert not _recomputable(blocks["pool_max_update"], writers)

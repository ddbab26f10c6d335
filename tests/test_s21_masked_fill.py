"""``masked_fill`` named from the graph: Relax writes it as ``where(mask, full_like(x, v), x)``;
with a symbolic batch LegalizeOps leaves the ``where`` in ``main`` and only the fill is a
PrimFunc (fixture: TVM 0.27's output for ``R.masked_fill(x, y, 5.5)``, x of shape (n, 4, 6))."""
from __future__ import annotations

import tir
from opinfo.api import analyze_module
from tests.fixture_util import replaced

WHERE = "lv1: R.Tensor(dtype=\"float32\", ndim=3) = R.where(y, lv, x)"


def _ops(old: str = "", new: str = "") -> list:
    infos = analyze_module(tir.parse(replaced("s21_masked_fill_dynamic", old, new)))
    return [op.to_json() for info in infos.values() for op in info.ops]


def test_fill_feeding_a_where_is_masked_fill():
    (op,) = _ops()
    assert op["op"] == "masked_fill" and op["attrs"] == {"value": 5.5, "dtype": "float32"}
    assert [(o["role"], o["buffer"], o["param"]) for o in op["operands"]] == [("data", "x", None), ("mask", "y", None)]
    assert op["output"]["buffer"] == "T_full"


def test_other_uses_of_the_fill_are_not_masked_fill():
    # the fill as the value kept where the mask is false: masked_fill of the negated mask, not named
    assert _ops(WHERE, WHERE.replace("R.where(y, lv, x)", "R.where(y, x, lv)")) == []
    # a condition that is not a bool tensor
    assert _ops('y: R.Tensor((7, 4, 6), dtype="bool")', 'y: R.Tensor((7, 4, 6), dtype="float32")') == []
    # the other operand's shape is not the fill's: no full_like of it
    assert _ops('x: R.Tensor((n, 4, 6), dtype="float32")', 'x: R.Tensor((n, 4, 1), dtype="float32")') == []
    # the fill also returned: used twice
    assert _ops("gv: R.Tensor(dtype=\"float32\", ndim=3) = lv1", "gv = R.tuple(lv1, lv)") == []


def test_the_module_runs_with_its_graph_level_where():
    """`opinfo run`'s graph executor runs the where LegalizeOps left (numpy broadcasting)."""
    import shutil

    import numpy as np

    mod = tir.parse(replaced("s21_masked_fill_dynamic"))
    rng = np.random.default_rng(0)
    x, mask = rng.standard_normal((7, 4, 6)).astype("float32"), rng.random((7, 4, 6)) < 0.5
    want = np.where(mask, np.float32(5.5), x)
    for engine in ["interp"] + (["c"] if shutil.which("gcc") else []):
        got = tir.run(mod, x, mask, engine=engine)
        assert got.dtype == np.float32 and np.array_equal(got, want)


def test_a_where_that_does_not_broadcast_is_an_error():
    import numpy as np
    import pytest

    from tir.interp_data import InterpError

    mod = tir.parse(replaced("s21_masked_fill_dynamic"))
    with pytest.raises(InterpError, match="do not broadcast"):
        tir.run(mod, np.zeros((3, 4, 6), "float32"), np.zeros((7, 4, 6), bool))  # n = 3 against 7

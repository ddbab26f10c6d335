"""A block whose predicate runs a leading part of one axis while another axis runs a symbolic
batch whole (``pad_einsum``/``reverse_compute_inline`` under a symbolic ``n``): the block over
that part, as with static shapes (tests/test_s36_prefix_box.py); predicates dropping other
points, or outputs the part leaves unwritten, still refuse."""
import numpy as np
import pytest

import opinfo
import tir
from opinfo.coverage import block_realizes
from opinfo.predicates import prefix_box

TEXT = """
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True, s_tir=True)
    def f(x: T.Buffer((n, T.int64(12)), "float32"), out: T.Buffer((n, T.int64(OUT)), "float32")):
        for b, i0, i1 in T.grid(n, T.int64(4), T.int64(4)):
            with T.sblock("compute"):
                vb = T.axis.spatial(n, b)
                v = T.axis.spatial(T.int64(13), i0 * T.int64(4) + i1)
                T.where(PRED)
                out[vb, v] = T.exp(x[vb, v])
"""
CUT = "i0 * T.int64(4) + i1 < T.int64(12)"


def _func(pred: str = CUT, out: int = 12):
    mod = tir.parse(TEXT.replace("PRED", pred).replace("OUT", str(out)))
    return mod["f"]


def test_symbolic_batch_with_a_cut_axis_is_the_op():
    func = _func()
    info = opinfo.analyze(func)
    assert [op.name for op in info.ops] == ["exp"]
    x = np.random.default_rng(1).normal(size=(3, 12)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), np.exp(x), rtol=1e-6)


def test_the_box_keeps_the_batch_whole_and_cuts_the_other_axis():
    func = _func()
    ((realize, loops),) = [(r, lp) for r, lp in block_realizes(func.body) if r.block.name == "compute"]
    batch, cut = prefix_box(realize, loops)
    assert batch.dom.extent is realize.block.iter_vars[0].dom.extent  # n, untouched
    assert int(cut.dom.extent.value) == 12


@pytest.mark.parametrize("pred, out", [
    (CUT, 13),  # the output's last column is never written
    (CUT + " and i0 * T.int64(4) + i1 != T.int64(5)", 12),  # a middle column dropped
])
def test_cuts_that_leave_elements_unwritten_refuse(pred, out):
    assert opinfo.analyze(_func(pred, out)).ops == ()


def test_a_predicate_reading_the_batch_is_not_a_free_axis():
    # the batch loop is read by the predicate: enumerating needs n, nothing is cut
    func = _func("i0 * T.int64(4) + i1 < T.int64(12) and b < n")
    ((realize, loops),) = [(r, lp) for r, lp in block_realizes(func.body) if r.block.name == "compute"]
    assert prefix_box(realize, loops) is None

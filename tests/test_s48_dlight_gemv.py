"""dlight's GEMV rule (TVM 0.27, target cuda): a matrix-vector product reduced in three
stages -- each thread a stripe of the row (``rf``), pairs of stripes (``rf_1``), the
threads -- over a reduction split ``r0 * 256 + t0 * 8 + r2 * 4 + t1``. Normalization merges
the stages one after the other, drops the unit reduction variables that only pad an index
(:func:`opinfo.normalize.drop_unit_reduction_terms`) and fuses the digits back into one
variable, so the matmul reads as it was lowered."""
from __future__ import annotations

import tir
from opinfo import analyze, verify_op
from opinfo.normalize import drop_unit_reduction_terms, normalize

from tests.fixture_util import FIXTURES


def _matmul(name: str):
    return dict(tir.parse((FIXTURES / name).read_text()).prim_funcs())["matmul"]


def test_gemv_three_stage_reduction_named_and_confirmed():
    for name in ("s48_dlight_gemv_64x512.py", "s48_dlight_gemv_32x64_f16.py"):
        func = _matmul(name)
        (op,) = analyze(func).ops
        assert op.name == "matmul" and [o.buffer for o in op.operands] == ["x0", "x1"]
        assert verify_op(func, op) is True


def test_gemv_normalizes_to_one_reduction_block():
    norm = normalize(_matmul("s48_dlight_gemv_64x512.py"))
    (block,) = [b for b in norm.blocks() if b.name != "root"]
    reduce = [iv for iv in block.iter_vars if iv.kind.name == "REDUCE"]
    assert len(reduce) == 1 and int(reduce[0].dom.extent.value) == 512


UNIT_DILATED = """
@T.prim_func
def pool(x: T.Buffer((1, 4, 9), "float32"), out: T.Buffer((1, 4, 3), "float32")):
    for n, c, w, rh, rw in T.grid(1, 4, 3, 1, 3):
        with T.block("pool_max"):
            vn, vc, vw, vrh, vrw = T.axis.remap("SSSRR", [n, c, w, rh, rw])
            with T.init():
                out[vn, vc, vw] = T.float32(-3.4e38)
            out[vn, vc, vw] = T.max(out[vn, vc, vw], x[vn, vc + vrh * 2, vw * 3 + vrw])
"""


def test_unit_reduction_alone_in_an_index_is_kept():
    # vrh (extent 1) is read with its own coefficient, in an index no longer reduction
    # variable shares: a window row whose dilation the coefficient may tell
    func = tir.parse(UNIT_DILATED)
    assert drop_unit_reduction_terms(func) is func

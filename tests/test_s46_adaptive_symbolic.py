"""Adaptive average pooling over symbolic extents where some pooled axis is pooled to 2.

TVM 0.27 legalized ``adaptive_avg_pool3d(x, output_size=[2, 2, 1], layout="NDHWC")`` with
``x: (2, d, h, w, 8)`` (fixture ``s46_sym_adaptive3d_even_axis``). The recognizer runs the
function with the symbols bound to a small value; at 2 every pooled axis divides evenly
(2 / 2, 2 / 1), where any fixed-window pool computes the same, so it abstained, and the
bindings past the body's constants that specialization reads were too large to run. It
now tries 3 as well, where 3 / 2 is uneven."""
from __future__ import annotations

import tir
from opinfo.recognize.pool_adaptive import SYMBOLIC_VALUES, recognize_adaptive_pool, _layouts
from opinfo.recognize.running import concrete_shapes

from tests.fixture_util import FIXTURES


def _func():
    mod = tir.parse((FIXTURES / "s46_sym_adaptive3d_even_axis.py").read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    return func


def test_even_at_two_uneven_at_three():
    func = _func()
    at = {v: _layouts(*concrete_shapes(list(func.buffers), v)) for v in SYMBOLIC_VALUES}
    assert at[2] == [] and at[3]


def test_named_over_symbolic_extents():
    (op,) = recognize_adaptive_pool(_func())
    assert op.name == "nn.adaptive_avg_pool3d"
    assert op.to_json()["attrs"] == {"output_size": [2, 2, 1], "layout": "NDHWC", "out_layout": "NDHWC"}
    assert op.operands[0].param == 0 and op.output.param == 1

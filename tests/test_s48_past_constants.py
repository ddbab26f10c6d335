"""Answers read over symbolic extents are checked once more past the body's constants
(:func:`opinfo.verify.refuted_past_constants`). Fixture: TVM 0.27's float16 ``silu`` of an
(n, 5) tensor under dlight (a fused loop bound to blocks of 1024 threads). Taking the fused
loop apart as ``f0 * 1024 - f1`` still writes every element while one block covers the
tensor (n <= 204), and misses some past it: that function is no silu. Before, the check at
the second binding was answered from the memo of the first."""
from __future__ import annotations

import tir
from opinfo import analyze, verify_op
from opinfo.verify import refuted_past_constants

from tests.fixture_util import FIXTURES

RIGHT = "(ax0_ax1_fused_0 * T.int64(1024) + ax0_ax1_fused_1) % T.int64(5))"
WRONG = "(ax0_ax1_fused_0 * T.int64(1024) - ax0_ax1_fused_1) % T.int64(5))"


def _silu(text: str):
    return dict(tir.parse(text).prim_funcs())["silu"]


def _text() -> str:
    return (FIXTURES / "s48_dlight_silu_symbolic_f16.py").read_text()


def test_symbolic_dlight_silu_named():
    func = _silu(_text())
    (op,) = analyze(func).ops
    assert op.name == "nn.silu"
    assert not refuted_past_constants(func, op)


def test_wrong_past_one_thread_block_is_refused():
    text = _text()
    assert RIGHT in text
    func = _silu(text.replace(RIGHT, WRONG))
    info = analyze(func)
    assert not info.ops and info.refused is not None
    op = analyze(_silu(text)).ops[0]
    assert verify_op(func, op, symbolic=5) is True      # one block: every element right
    assert verify_op(func, op, symbolic=1025) is False  # a check of its own at this binding

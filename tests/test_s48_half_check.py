"""Half-precision answers confirmed in single precision (:mod:`opinfo.half_check`).

Fixture: TVM 0.27's float16 ``linear`` of a (1, 1, 256) row by a (64, 256) weight under
dlight's CUDA rules: the 256 products are summed in 16 stripes (rfactor), then the stripes,
an order that moves float16 sums near 250 by a unit or two. The op lowered afresh adds in
order; in float16 the two differ past the half-precision tolerance, in float32 they agree."""
from __future__ import annotations

import numpy as np

import tir
from opinfo import analyze, verify_op
from opinfo.half_check import converts_floats, promoted
from opinfo.verify import differ, random_inputs, run_copies

from tests.fixture_util import FIXTURES

FIXTURE = "s48_dlight_linear_f16_rfactor.py"


def _matmul(text: str):
    return dict(tir.parse(text).prim_funcs())["matmul"]


def _text() -> str:
    return (FIXTURES / FIXTURE).read_text()


def test_rfactor_float16_matmul_named_and_confirmed():
    func = _matmul(_text())
    (op,) = analyze(func).ops
    assert op.name == "matmul"
    assert verify_op(func, op) is True


def test_float16_rounding_alone_differs_and_single_precision_agrees():
    func = _matmul(_text())
    (op,) = analyze(func).ops
    fresh = tir.topi.lower("matmul", [((1, 1, 256), "float16"), ((256, 64), "float16")])
    rng = np.random.default_rng(0)
    arrays = random_inputs(func, rng)
    mine = run_copies(func, arrays)[2]
    theirs = run_copies(fresh, arrays)[2]
    assert differ(mine, theirs)  # rounding of another order, past float16's tolerance
    wide = [a.astype(np.float32) for a in arrays]
    assert not differ(run_copies(promoted(func), wide)[2], run_copies(promoted(fresh), wide)[2])


def test_a_stripe_left_out_is_still_refuted():
    # the final block sums 15 of the 16 stripes: a wrong reading for matmul
    text = _text().replace("vax1_fused_1 = T.axis.reduce(T.int64(16), ax0)",
                           "vax1_fused_1 = T.axis.reduce(T.int64(15), ax0)")
    text = text.replace('for ax0 in T.thread_binding(T.int64(16), thread="threadIdx.y"):\n                    with T.sblock("matmul"):',
                        'for ax0 in T.thread_binding(T.int64(15), thread="threadIdx.y"):\n                    with T.sblock("matmul"):')
    func = _matmul(text)
    op = analyze(_matmul(_text())).ops[0]
    assert verify_op(func, op) is False
    assert not analyze(func).ops or analyze(func).ops[0].name != "matmul"


def test_functions_converting_float_widths_are_not_promoted():
    cast = tir.topi.lower("astype", [((4, 8), "float16")], dtype="float32")
    assert converts_floats(cast) and promoted(cast) is None
    plain = tir.topi.lower("add", [((4, 8), "float16"), ((4, 8), "float16")])
    wide = promoted(plain)
    assert wide is not None and all(str(b.dtype) == "float32" for b in wide.buffers)
    assert promoted(tir.topi.lower("add", [((4, 8), "float32"), ((4, 8), "float32")])) is None

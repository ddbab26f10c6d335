"""``nn.attention``/``nn.attention_bias`` on float16 inputs.

With a ``scale`` Relax multiplies the float16 scores by a float32 constant: TVM 0.27's
legalization casts the scores to float32 there, and the softmax, the bias add (the bias
cast), the second matmul (the values cast) and the output are float32. Without one the
scores are divided by ``sqrt(float16(d))`` and everything stays float16. The lowering
library writes both; the recognizer compares a run with the float64 reference at 2e-2
whenever any buffer is of lower precision than float32 (the output may be float32 while
the matmuls ran in float16).
"""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from opinfo.attention import reference
from tests.fixture_util import fixture_func
from tir.interp import interpret

SHAPES = [(2, 3, 2, 8), (2, 4, 2, 8), (2, 4, 2, 5)]


def _ops(func) -> list:
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


@pytest.mark.parametrize("op", ["nn.attention", "nn.attention_bias"])
@pytest.mark.parametrize("scale", [None, 0.709])
@pytest.mark.parametrize("causal", [None, "TopLeft", "BottomRight"])
def test_half_attention_lowered_named_and_run(op, scale, causal):
    shapes = SHAPES + ([(2, 2, 3, 4)] if op == "nn.attention_bias" else [])
    attrs = {"scale": scale, "causal_mask": causal, "window_size": None}
    func = tir.topi.lower(op, [(s, "float16") for s in shapes], **attrs)
    out_dtype = "float32" if scale is not None else "float16"
    assert str(func.buffer_map[func.params[-1]].dtype) == out_dtype
    assert _ops(func) == [(op, attrs)]
    rng = np.random.default_rng(3)
    ins = [rng.standard_normal(s).astype("float16") for s in shapes]
    out = np.zeros((2, 3, 2, 5), out_dtype)
    interpret(func, *ins, out)
    want = reference(*ins[:3], 8 ** -0.5 if scale is None else scale, causal,
                     bias=ins[3] if op == "nn.attention_bias" else None)
    np.testing.assert_allclose(out, want, rtol=2e-2, atol=2e-2)


def test_tvm_half_attention_with_a_float32_output_is_named():
    # TVM 0.27's own legalization (symbolic batch n): float16 in, float32 out
    func = fixture_func("s35_attention_float16_scaled")
    assert [str(func.buffer_map[p].dtype) for p in func.params] == ["float16"] * 3 + ["float32"]
    assert _ops(func) == [("nn.attention", {"scale": 0.877, "causal_mask": None, "window_size": None})]

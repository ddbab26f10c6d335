"""Fused functions that begin with an op read by running it (an uneven adaptive average pool,
TVM 0.27 FuseOps + FuseTIR output in fixtures/) and go on with ops the semantic layer reads."""
from __future__ import annotations

import re

import numpy as np

import opinfo
import tir
from opinfo.opaque_prefix import recognize_opaque_prefix
from opinfo.recognize.pool_adaptive import reference

from fixture_util import fixture_func


def _names(info):
    return [op.name for op in info.ops]


def test_adaptive_pool_then_subtract_multiply():
    func = fixture_func("fused_adaptive_avg_pool2d_subtract_multiply")
    info = opinfo.analyze(func)
    assert _names(info) == ["nn.adaptive_avg_pool2d", "subtract", "multiply"]
    pool, sub, mul = info.ops
    assert dict(pool.attrs) == {"output_size": (1, 2), "layout": "NCHW", "out_layout": "NCHW"}
    assert pool.operands[0].buffer == "x" and pool.operands[0].param == 0
    assert pool.output.param is None  # the intermediate between the two parts
    assert {(o.buffer, o.param) for o in sub.operands} == {(pool.output.buffer, None), ("x1", 1)}
    assert {(o.buffer, o.param) for o in mul.operands} == {(sub.output.buffer, None), ("x2", 2)}
    assert mul.output.buffer == func.buffers[-1].name and mul.output.param == 3


def test_the_recovered_ops_compute_what_the_function_does():
    func = fixture_func("fused_adaptive_avg_pool2d_subtract_multiply")
    rng = np.random.default_rng(0)
    x, x1, x2 = (rng.standard_normal([int(s.value) for s in b.shape]).astype("float32") for b in func.buffers[:3])
    want = (reference(x, [2, 3], [1, 2]) - x1) * x2
    np.testing.assert_allclose(tir.run(func, x, x1, x2), want, rtol=1e-5, atol=1e-6)


def test_symbolic_batch():
    info = opinfo.analyze(fixture_func("fused_adaptive_avg_pool2d_add"))
    assert _names(info) == ["nn.adaptive_avg_pool2d", "add"]
    assert info.ops[0].attrs["output_size"] == (10, 2)


def test_an_unread_rest_leaves_the_function_unnamed():
    # The epilogue turned into something no recognizer knows: both parts must be named.
    def edit(text):
        return re.sub(r"(T_multiply_intermediate\[[^\]]*\] = )(.*)$",
                      lambda m: m.group(1) + "T.sin(" + m.group(2) + ") * T.cos(" + m.group(2) + ")",
                      text, flags=re.M)
    func = fixture_func("fused_adaptive_avg_pool2d_subtract_multiply", edit)
    assert opinfo.analyze(func).ops == ()


def test_the_rest_must_be_named_too():
    func = fixture_func("fused_adaptive_avg_pool2d_add")
    assert recognize_opaque_prefix(func, lambda f: ()) == ()

"""Split reduction variables fused back (opinfo.reduce_fuse): TVM's dlight GPU rules split a row
reduction, bind the inner part to threads and rfactor it; merged back, the block reduces over
``a * F + b``. The fixture is TVM 0.27's dlight schedule (target cuda) of sum(x, axis=1)."""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from opinfo.normalize import normalize
from opinfo.reduce_fuse import fuse_split_reductions
from tests.fixture_util import FIXTURES

TEXT = (FIXTURES / "s23_dlight_sum_rfactor.py").read_text()


def _wider(text: str) -> str:
    """The same schedule over 4 columns: the outer part of the split runs twice."""
    out = text.replace('x: T.Buffer((T.int64(3), T.int64(2)), "float32")', 'x: T.Buffer((T.int64(3), T.int64(4)), "float32")')
    out = out.replace("for ax1_fused_0, u in T.grid(T.int64(1), 1)", "for ax1_fused_0, u in T.grid(T.int64(2), 1)")
    out = out.replace('R.Tensor((3, 2), dtype="float32")', 'R.Tensor((3, 4), dtype="float32")')
    assert out.count("T.int64(4)") >= 1 and out != text
    return out


def _func(text: str):
    (_, func), = tir.parse(text).prim_funcs()
    return func


@pytest.mark.parametrize("text", [TEXT, _wider(TEXT)], ids=["one_outer", "two_outer"])
def test_dlight_rfactored_sum_is_named(text):
    info = opinfo.analyze(_func(text))
    assert [(op.name, list(op.attrs["axis"]), op.attrs["keepdims"]) for op in info.ops] == [("sum", [1], False)]


@pytest.mark.parametrize("text", [TEXT, _wider(TEXT)], ids=["one_outer", "two_outer"])
def test_normalized_function_computes_the_same(text):
    func = _func(text)
    norm = normalize(func)
    blocks = [b for b in norm.blocks() if b.iter_vars]
    assert len(blocks) == 1
    assert sum(1 for iv in blocks[0].iter_vars if iv.kind.name == "REDUCE") == 1
    x = np.random.default_rng(1).normal(size=tuple(int(s.value) for s in func.buffers[0].shape)).astype("float32")
    want = tir.run(func, x)
    np.testing.assert_allclose(tir.run(norm, x), want, rtol=1e-6)
    np.testing.assert_allclose(want, x.sum(axis=1), rtol=1e-5)


def test_other_coefficients_are_not_fused():
    # x[v0, a * 3 + b] with b in [0, 2): the pairs (a, b) read columns 0, 1, 3, 4 -- not one axis
    text = _wider(TEXT).replace('x: T.Buffer((T.int64(3), T.int64(4)), "float32")', 'x: T.Buffer((T.int64(3), T.int64(5)), "float32")')
    text = text.replace("vax1_fused_0 * T.int64(2) + vax1_fused_1", "vax1_fused_0 * T.int64(3) + vax1_fused_1")
    text = text.replace('R.Tensor((3, 4), dtype="float32")', 'R.Tensor((3, 5), dtype="float32")')
    func = _func(text)
    norm = normalize(func)
    assert norm is None or all(sum(1 for iv in b.iter_vars if iv.kind.name == "REDUCE") != 1
                               for b in norm.blocks() if any(iv.kind.name == "REDUCE" for iv in b.iter_vars))
    assert opinfo.analyze(func).ops == ()


def test_a_function_without_split_reductions_is_returned_as_is():
    fused = normalize(_func(_wider(TEXT)))  # already fused: nothing left to do
    assert fuse_split_reductions(fused) is fused

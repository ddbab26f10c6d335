"""dlight's Matmul rule (TVM's CUDA schedule for matmul): the operands copied into padded,
reindexed shared tiles with a leading unit axis (``y`` transposed), a padded local
accumulator, a crop back to the output -- read back to the matmul it computes.

Fixture: TVM 0.27's ``matmul`` of (7, 8) x (8, 7) float16 into float32, scheduled by
``dlight.ApplyDefaultSchedule(dl.gpu.Matmul(), ...)`` for target ``cuda``."""
from __future__ import annotations

import tir
from opinfo import analyze
from opinfo.normalize import as_lowered, normalize
from opinfo.reindex_pad import REINDEX_PAD, unreindex

from tests.fixture_util import FIXTURES


def _func():
    mod = tir.parse((FIXTURES / "s42_dlight_matmul_f16.py").read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    return func


def test_names():
    for name in ("x_reindex_pad_shared", "matmul_reindex_pad_local", "y_reindex_pad"):
        assert REINDEX_PAD.search(name)
    for name in ("x_pad", "x_reindex_shared", "T_pad", "y_reindex_pad_global"):
        assert not REINDEX_PAD.search(name)


def test_unit_axes_and_transposed_copy_removed():
    func = _func()
    shapes = {b.name: tuple(int(e.value) for e in b.shape) for b in unreindex(as_lowered(func)).root_block.alloc_buffers}
    assert shapes == {"matmul_reindex_pad_local": (32, 64), "x_reindex_pad_shared": (32, 16),
                      "y_reindex_pad_shared": (16, 64)}


def test_normalized_to_one_reduction():
    (block,) = [b for b in normalize(_func()).blocks() if b.iter_vars]
    assert block.writes[0].buffer.name == "matmul"
    assert [int(iv.dom.extent.value) for iv in block.iter_vars] == [7, 7, 8]


def test_named_matmul():
    (op,) = analyze(_func()).ops
    assert op.name == "matmul"
    assert [(o.role, o.buffer, o.param) for o in op.operands] == [("lhs", "x", 0), ("rhs", "y", 1)]
    assert (op.output.buffer, op.output.param) == ("matmul", 2)


def test_an_epilogue_inlined_into_the_write_back():
    """FuseOps' matmul + add scheduled by dlight: the add is inlined into the write-back
    (``T_add[i, j] = C_reindex_pad_local[0, i, j] + bias[0, j]``); the padded accumulator is
    restored over the output's extent under the name it had before dlight padded it."""
    mod = tir.parse((FIXTURES / "s46_dlight_matmul_add_epilogue.py").read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    ops = analyze(func).ops
    assert [op.name for op in ops] == ["matmul", "add"]
    matmul, add = ops
    assert [o.param for o in matmul.operands] == [0, 1]
    assert matmul.output.buffer == "matmul_intermediate" and matmul.output.param is None
    assert {o.buffer for o in add.operands} == {"x2", "matmul_intermediate"}
    assert add.output.param == 3

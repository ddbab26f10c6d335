"""Unit axes written at a constant 0 get their block variable back (opinfo.unit_axes). The
fixtures are TVM 0.27's dlight schedules (target cuda) of expand_dims(axis=1) on (9, 5),
variance(axis=1) on (3, 2) and group_norm(num_groups=1) on (n, 1, 4, 7): dlight fuses each
block's spatial loops and drops the unit ones, so the blocks write ``out[v0, 0, v1]``."""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from opinfo.normalize import normalize
from opinfo.unit_axes import rebuilt, restore_unit_vars
from tests.fixture_util import FIXTURES


def _func(name: str):
    (_, func), = tir.parse((FIXTURES / f"{name}.py").read_text()).prim_funcs()
    return func


def _ops(func):
    return [(op.name, {k: (list(v) if isinstance(v, tuple) else v) for k, v in op.attrs.items()}) for op in
            opinfo.analyze(func).ops]


def test_expand_dims_is_named():
    assert _ops(_func("s23_dlight_expand_dims")) == [("expand_dims", {"axis": [1]})]


def test_variance_is_named():
    assert _ops(_func("s23_dlight_variance")) == [("variance", {"axis": [1], "keepdims": False})]


@pytest.mark.parametrize("name", ["s23_dlight_expand_dims", "s23_dlight_variance"])
def test_restored_function_computes_the_same(name):
    func = _func(name)
    norm = normalize(func)
    assert rebuilt(norm)
    rng = np.random.default_rng(7)
    inputs = [rng.normal(size=tuple(int(s.value) for s in b.shape)).astype("float32") for b in func.buffers[:-1]]
    np.testing.assert_allclose(tir.run(norm, *inputs), tir.run(func, *inputs), rtol=1e-6)


def test_restored_store_indexes_a_unit_variable():
    norm = restore_unit_vars(_func("s23_dlight_expand_dims"))
    (block,) = [b for b in norm.blocks() if b.iter_vars]
    assert len(block.iter_vars) == 3
    unit = block.iter_vars[0]
    assert int(unit.dom.extent.value) == 1 and block.body.indices[1] is unit.var


def test_one_channel_group_norm_rebuilt_is_not_called_instance_norm():
    # with one channel per group the computation is instance_norm's too; TVM's group_norm
    # tells itself apart by its grouping reshape, which dlight inlined: abstain
    func = _func("s23_dlight_group_norm_one_channel")
    assert opinfo.analyze(func).ops == ()


def test_untouched_function_is_not_marked():
    func = normalize(_func("s23_dlight_variance"))
    again = restore_unit_vars(func)
    assert again is func


def test_operands_of_the_output_rank_read_the_unit_axis_at_the_new_variable():
    # add on NCHW4c buffers (1, 2, 3, 3, 4) + (1, 2, 1, 3, 4), dlight-scheduled: the batch axis
    # is written and read at 0; the broadcast operand's axis 2 (extent 1 where the output's is
    # 3) stays at 0
    func = _func("s23_dlight_add_packed")
    assert _ops(func) == [("add", {})]
    norm = restore_unit_vars(func)
    (block,) = [b for b in norm.blocks() if b.iter_vars]
    unit = block.iter_vars[0].var
    x, x1 = block.body.value.a, block.body.value.b
    assert x.indices[0] is unit and x1.indices[0] is unit
    assert isinstance(x1.indices[2], tir.expr.IntImm) and x1.indices[2].value == 0

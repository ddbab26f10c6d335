"""``main`` as TVM's build pipeline leaves it after CallTIRRewrite: ``alloc: T =
R.builtin.alloc_tensor(...)`` and a statement ``cls.f(inputs..., alloc)`` writing it, and
``R.reshape`` for a reshape PrimFunc (RewriteDataflowReshape). Read back, each pair is the
call_tir it came from. Fixtures: TVM 0.27's zero pipeline output of conv2d+add+relu ->
max_pool2d -> reshape -> softmax, and the same after RewriteDataflowReshape, ToNonDataflow,
RemovePurityChecking and CallTIRRewrite."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import opinfo
import tir
from tests.fixture_util import FIXTURES

REWRITTEN = (FIXTURES / "s23_call_tir_rewrite.py").read_text()
PLANNED = (FIXTURES / "s23_kill_after_last_use.py").read_text()
"""The same module further through StaticPlanBlockMemory, LowerAllocTensor and KillAfterLastUse:
R.memory.alloc_storage / alloc_tensor and kill statements."""
RUNTIME = (FIXTURES / "s23_lower_runtime_builtin.py").read_text()
"""And through LowerRuntimeBuiltin: R.vm.alloc_storage / alloc_tensor / kill_object, the reshape as
R.call_packed("vm.builtin.reshape", ...)."""
SHAPE_LOWERED = (FIXTURES / "s23_vm_shape_lower.py").read_text()
"""And through ComputePrimValue, VMShapeLower and AttachGlobalSymbol: the parameters checked
against main's static types (vm.builtin.check_tensor_info / match_shape)."""
ZERO = (FIXTURES / "s23_zero_pipeline.py").read_text()
ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])


def _inputs():
    rng = np.random.default_rng(5)
    return [rng.normal(size=s).astype("float32") for s in ((1, 3, 8, 8), (4, 3, 3, 3), (1, 4, 1, 1))]


def _named(mod):
    return {name: [op.name for op in info.ops] for name, info in opinfo.analyze_module(mod).items()}


def test_read_as_the_call_tir_it_came_from():
    mod = tir.parse(REWRITTEN)
    assert "alloc_tensor" in REWRITTEN and "cls.max_pool2d(lv, alloc1)" in REWRITTEN
    calls = [b.value for blk in mod["main"].blocks for b in blk.bindings if isinstance(b.value, tir.relax.CallTIR)]
    assert [c.func.name for c in calls] == ["fused_conv2d_add_relu", "max_pool2d", "softmax"]
    named = _named(mod)
    assert named["fused_conv2d_add_relu"] == ["nn.conv2d", "add", "nn.relu"]
    assert named["max_pool2d"] == ["nn.max_pool2d"] and named["softmax"] == ["nn.softmax"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text", [REWRITTEN, PLANNED, RUNTIME, SHAPE_LOWERED],
                         ids=["call_tir_rewrite", "planned_and_killed", "runtime_builtins", "vm_shape_lower"])
def test_runs_as_the_zero_pipeline_module(engine, text):
    got = tir.run(tir.parse(text), *_inputs(), engine=engine)
    want = tir.run(tir.parse(ZERO), *_inputs(), engine=engine)
    assert got.shape == (1, 64)
    np.testing.assert_array_equal(got, want)


def test_planned_memory_is_read_as_the_calls():
    assert "R.memory.kill_tensor" in PLANNED and "R.memory.alloc_storage" in PLANNED
    named = _named(tir.parse(PLANNED))
    assert named["fused_conv2d_add_relu"] == ["nn.conv2d", "add", "nn.relu"] and named["softmax"] == ["nn.softmax"]
    bad = PLANNED.replace("R.memory.alloc_tensor(storage1,", "R.memory.alloc_tensor(x,")
    with pytest.raises(tir.ParseError, match="R.memory.alloc_tensor takes storage from R.memory.alloc_storage"):
        tir.parse(bad)


def test_symbolic_shape_heap_is_refused_with_the_place():
    text = (FIXTURES / "s23_vm_shape_lower_symbolic.py").read_text()
    with pytest.raises(tir.ParseError, match=r"\d+:\d+: vm.builtin.match_shape binds symbolic dimensions"):
        tir.parse(text)


def test_other_runtime_calls_are_not_run():
    bad = RUNTIME.replace('"vm.builtin.reshape"', '"vm.builtin.unknown"')
    with pytest.raises(tir.interp_data.InterpError, match="calls a function of the TVM runtime; cannot execute"):
        tir.run(tir.parse(bad), *_inputs())


def test_an_allocation_read_before_a_call_writes_it():
    bad = REWRITTEN.replace("cls.max_pool2d(lv, alloc1)", "cls.max_pool2d(alloc1, alloc1)")
    with pytest.raises(tir.ParseError, match="one allocation is written twice by the call"):
        tir.parse(bad)
    bad = TWO_OUTPUTS.replace("cls.halves(x, a, b)", "cls.halves(b, x, a)")
    with pytest.raises(tir.ParseError, match="an allocation is read before a call writes it"):
        tir.parse(bad)
    bad = TWO_OUTPUTS.replace("cls.halves(x, a, b)", "d = a\n        cls.halves(x, a, b)")
    with pytest.raises(tir.ParseError, match="'a' is an allocation .* read before a call writes it"):
        tir.parse(bad)


def test_a_call_statement_needs_an_allocation_to_write():
    bad = REWRITTEN.replace("cls.max_pool2d(lv, alloc1)", "cls.max_pool2d(lv, lv)")
    with pytest.raises(tir.ParseError, match="trailing arguments, which must be allocations"):
        tir.parse(bad)


TWO_OUTPUTS = '''
@I.ir_module
class Module:
    @T.prim_func
    def halves(x: T.Buffer((4, 6), "float32"), a: T.Buffer((4, 3), "float32"), b: T.Buffer((4, 3), "float32")):
        for i, j in T.grid(4, 3):
            with T.block("a"):
                vi, vj = T.axis.remap("SS", [i, j])
                a[vi, vj] = x[vi, vj]
        for i, j in T.grid(4, 3):
            with T.block("b"):
                vi, vj = T.axis.remap("SS", [i, j])
                b[vi, vj] = x[vi, vj + 3]

    @R.function
    def main(x: R.Tensor((4, 6), dtype="float32")) -> R.Tensor((4, 3), dtype="float32"):
        R.func_attr({"relax.force_pure": True})
        cls = Module
        a: R.Tensor((4, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([4, 3]), R.dtype("float32"), 0, R.str("global"))
        b: R.Tensor((4, 3), dtype="float32") = R.builtin.alloc_tensor(R.shape([4, 3]), R.dtype("float32"), 0, R.str("global"))
        cls.halves(x, a, b)
        c: R.Tensor((4, 3), dtype="float32") = R.reshape(b, R.shape([4, 3]))
        return c
'''


def test_a_call_writing_two_allocations():
    x = np.arange(24, dtype="float32").reshape(4, 6)
    np.testing.assert_array_equal(tir.run(tir.parse(TWO_OUTPUTS), x), x[:, 3:])

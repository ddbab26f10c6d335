"""TIR as TVM 0.27 prints it after its whole lowering pipeline up to MakePackedAPI (the
s_tir passes, FlattenBuffer, NarrowDataType, VectorizeLoop, StorageRewrite, UnrollLoop,
CommonSubexprElim): a ``T.target`` function attribute, allocations among the statements
(their shape bound by a let just before), views at offset 0 (``elem_offset=0``) and storage
reused with another type (``T.decl_buffer(shape, "bool", data=t.data)``). The fixture is
TVM's output for a legalized ``mean`` with a symbolic batch."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import tir
from tests.fixture_util import FIXTURES
from tir.node import Target

ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])


def _mean():
    (_, func), = tir.parse((FIXTURES / "s22_lowered_pipeline_mean.py").read_text()).prim_funcs()
    return func


def test_target_attribute_is_kept_and_printed_back():
    func = _mean()
    target = func.attrs["target"]
    assert isinstance(target, Target) and target.config["kind"] == "llvm"
    text = tir.to_script(func)
    assert 'T.target({"keys": ["cpu"], "kind": "llvm"' in text
    assert tir.to_script(tir.parse(text)) == text


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("batch", [1, 3])
def test_allocation_after_a_let_runs_as_the_op(engine, batch):
    """``x_red = T.alloc_buffer((cse_v1,))`` after ``cse_v1: T.let = n * 6`` allocates for
    the statements after it (not in the root block, where cse_v1 is not yet bound)."""
    x = np.random.default_rng(batch).standard_normal((batch, 6, 9)).astype("float32")
    got = tir.run(_mean(), x, engine=engine)
    np.testing.assert_allclose(got, x.mean(axis=2), rtol=1e-5, atol=1e-6)


def _reuse(view_line: str) -> str:
    return f'''
# from tvm.script import tirx as T
@T.prim_func(private=True)
def f(x: T.Buffer((6,), "float32"), o: T.Buffer((6,), "float32")):
    T.func_attr({{"target": T.target("llvm"), "tirx.noalias": True}})
    t = T.alloc_buffer((6,))
    for i in range(6):
        t[i] = x[i] * T.float32(2.0)
    for i in range(6):
        o[i] = t[i] + T.float32(1.0)
{view_line}
    for i in range(6):
        m[i] = x[i] > T.float32(0.0)
    for i in range(6):
        o[i] = T.Select(m[i], o[i], T.float32(0.0))
'''


@pytest.mark.parametrize("engine", ENGINES)
def test_storage_reused_with_another_type_runs(engine):
    """StorageRewrite's reuse: a bool buffer over a float32 one's bytes once it is dead."""
    func = tir.parse(_reuse('    m = T.decl_buffer((6,), "bool", data=t.data)'))
    text = tir.to_script(func)
    assert 'm = T.decl_buffer((T.int64(6),), "bool", data=t.data)' in text
    assert tir.to_script(tir.parse(text)) == text
    x = np.array([1.5, -2.0, 0.25, -0.5, 3.0, 0.0], dtype="float32")
    np.testing.assert_array_equal(tir.run(func, x, engine=engine), np.where(x > 0, 2 * x + 1, 0))


def test_a_view_larger_than_the_storage_in_bytes_is_refused():
    with pytest.raises(tir.ParseError, match=r"7 int64, more than 't' holds \(6 float32\)"):
        tir.parse(_reuse('    m = T.decl_buffer((7,), "int64", data=t.data)'))


# ---------------------------------------------------------------------------- vectorised code

VECTORIZED = {  # TVM 0.27's output for a vectorising schedule of each op, put through its pipeline
    "s22_vectorized_broadcast_to": ([(1, 4)], lambda x: np.broadcast_to(x, (4, 2, 4))),
    "s22_vectorized_layout_transform": ([(1, 8, 2, 3)], lambda x: x.reshape(1, 2, 4, 2, 3).transpose(0, 1, 3, 4, 2)),
    "s22_vectorized_nn_log_softmax": ([(4, 7, 2)], lambda x: x - x.max(0) - np.log(np.exp(x - x.max(0)).sum(0))),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(VECTORIZED))
def test_vectorized_function_reads_prints_back_and_runs_as_the_op(name, engine):
    """T.Ramp indices, T.Broadcast operands, vector stores ``o[i:i + 4]`` (strided
    ``o[i:i + 12:4]``), lets bound to vectors and buffers of vector elements
    (``T.alloc_local((8,), "float32x4")``), run lane by lane."""
    (_, func), = tir.parse((FIXTURES / f"{name}.py").read_text()).prim_funcs()
    text = tir.to_script(func)
    assert "T.Ramp(" in text and tir.to_script(tir.parse(text)) == text
    shapes, reference = VECTORIZED[name]
    args = [np.random.default_rng(3).standard_normal(s).astype("float32") for s in shapes]
    np.testing.assert_allclose(tir.run(func, *args, engine=engine), reference(*args), rtol=1e-5, atol=1e-5)


def _vec(body: str) -> str:
    return f'''
# from tvm.script import tirx as T
@T.prim_func(private=True)
def f(x: T.Buffer((12,), "float32"), o: T.Buffer((12,), "float32")):
{body}
'''


@pytest.mark.parametrize("engine", ENGINES)
def test_vector_forms_run_lane_by_lane(engine):
    func = tir.parse(_vec('''    for i in range(3):
        v: T.let[T.int32x4] = T.Ramp(i * 4, 1, 4)
        o[v] = T.Select(x[v] > T.Broadcast(T.float32(0.0), 4), x[v], T.Broadcast(T.float32(0.0), 4)) + T.Cast("float32x4", T.Ramp(0, 1, 4))'''))
    x = np.linspace(-3, 3, 12).astype("float32")
    want = np.maximum(x, 0) + np.tile(np.arange(4), 3)
    np.testing.assert_allclose(tir.run(func, x, engine=engine), want, rtol=1e-6)


def test_devectorize_gives_the_serial_loops_and_keeps_scalar_functions():
    from tir.devectorize import devectorize, has_vectors

    func = tir.parse(_vec('''    for i in range(3):
        o[i * 4:i * 4 + 4] = x[T.Ramp(i * 4, 1, 4)]'''))
    assert has_vectors(func.body)
    flat = devectorize(func)
    assert not has_vectors(flat.body) and "o[i * 4 + lane] = x[i * 4 + lane]" in tir.to_script(flat)
    scalar = tir.parse(_vec("    for i in range(12):\n        o[i] = x[i]"))
    assert devectorize(scalar) is scalar


@pytest.mark.parametrize("body, message", [
    ("    o[0:3:2] = x[T.Ramp(0, 2, 2)]", "constant length of at least 2 lanes"),
    ("    for i in range(2):\n        o[i:i * 2] = x[T.Ramp(0, 1, 4)]", "constant length"),
    ("    o[0] = x[T.Ramp(0, 1, 1)]", "at least 2"),
    ("    o[0:4] = x[T.Ramp(0, 1, 3)]", "storing a float32x3 value into float32x4"),
    ("    o[0] = T.Broadcast(x[T.Ramp(0, 1, 2)], 2)", "must be a scalar"),
])
def test_malformed_vector_code_is_a_parse_error(body, message):
    with pytest.raises(tir.ParseError, match=message):
        tir.parse(_vec(body))


def test_analyze_refuses_vector_code_and_says_why():
    import opinfo

    func = tir.parse(_vec('''    for i in range(3):
        o[i * 4:i * 4 + 4] = x[T.Ramp(i * 4, 1, 4)]'''))
    info = opinfo.analyze(func)
    assert info.ops == () and "vector code" in info.refused


# ---------------------------------------------------------------------------- thread launches

THREADED = {  # TVM 0.27's output for a schedule binding loops to blockIdx/threadIdx, through its pipeline
    "s22_threads_nn_softmax": ((6, 6), "float32", lambda x: np.exp(x - x.max(1, keepdims=True))
                               / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)),
    "s22_threads_clip": ((5, 3, 7), "int32", lambda x: np.clip(x, 0, 1)),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(THREADED))
def test_thread_launches_read_print_back_and_run_as_loops(name, engine):
    """``with T.launch_thread("blockIdx.x", n) as bx:`` and ``tx = T.launch_thread(...)``: each
    thread's body runs in turn (the threads share nothing here)."""
    (_, func), = tir.parse((FIXTURES / f"{name}.py").read_text()).prim_funcs()
    text = tir.to_script(func)
    assert "T.launch_thread(" in text and tir.to_script(tir.parse(text)) == text
    tir.verify(func)
    shape, dtype, reference = THREADED[name]
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(dtype) if dtype == "float32" else rng.integers(-2, 3, shape).astype(dtype)
    np.testing.assert_allclose(tir.run(func, x, engine=engine), reference(x), rtol=1e-5, atol=1e-6)


def test_threads_sharing_memory_are_refused_not_run_wrongly():
    import opinfo

    func = tir.parse(_vec('''    with T.launch_thread("blockIdx.x", 1) as bx:
        tx = T.launch_thread("threadIdx.x", 12)
        s = T.alloc_shared((12,))
        s[tx] = x[tx]
        o[tx] = s[11 - tx]'''))
    from tir.interp_data import InterpError

    with pytest.raises(InterpError, match="share buffer 's'.*cooperative thread code"):
        tir.run(func, np.zeros(12, dtype="float32"))
    assert "thread launches" in opinfo.analyze(func).refused


def test_show_outlines_lowered_allocations_and_thread_launches(capsys):
    from opinfo.cli import main

    assert main(["show", str(FIXTURES / "s22_threads_nn_softmax.py")]) == 0
    out = capsys.readouterr().out
    assert "launch blockIdx.x blockIdx_x<9>" in out and "    launch threadIdx.x threadIdx_x<4>" in out
    assert main(["show", str(FIXTURES / "s22_vectorized_broadcast_to.py")]) == 0
    assert "alloc T_broadcast_to_local: float32x4[8] (local)" in capsys.readouterr().out

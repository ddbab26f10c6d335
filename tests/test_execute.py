"""tir.run and the graph executor: call_tir, call_dps_packed registries, tuples, symbolic shapes."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import tir
from tir.graph_exec import GraphExecutor
from tir.interp_data import InterpError

ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])

MODULE = """
n = TypeVar("n")
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(var_x: T.handle, var_y: T.handle, var_z: T.handle):
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(4)), "float32")
        y = T.match_buffer(var_y, (n, T.int64(4)), "float32")
        z = T.match_buffer(var_z, (n, T.int64(4)), "float32")
        for i, j in T.grid(n, T.int64(4)):
            with T.block("z"):
                vi, vj = T.axis.remap("SS", [i, j])
                z[vi, vj] = x[vi, vj] + y[vi, vj]

    @T.prim_func(private=True)
    def split_sum(var_x: T.handle, var_a: T.handle, var_b: T.handle):
        n = T.int64()
        x = T.match_buffer(var_x, (n, T.int64(4)), "float32")
        a = T.match_buffer(var_a, (n,), "float32")
        b = T.match_buffer(var_b, (T.int64(4),), "float32")
        for i, j in T.grid(n, T.int64(4)):
            with T.block("a"):
                vi, vj = T.axis.remap("SR", [i, j])
                with T.init():
                    a[vi] = T.float32(0.0)
                a[vi] = a[vi] + x[vi, vj]
        for j, i in T.grid(T.int64(4), n):
            with T.block("b"):
                vj, vi = T.axis.remap("SR", [j, i])
                with T.init():
                    b[vj] = T.float32(0.0)
                b[vj] = b[vj] + x[vi, vj]

    @R.function
    def inner(x: R.Tensor((n, 4), dtype="float32")) -> R.Tensor((n, 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, x), out_sty=R.Tensor((n, 4), dtype="float32"))
            R.output(lv)
        return lv

    @R.function
    def main(x: R.Tensor((n, 4), dtype="float32"), y: R.Tensor((n, 4), dtype="float32")):
        cls = Module
        with R.dataflow():
            lv = R.call_tir(cls.add, (x, y), out_sty=R.Tensor((n, 4), dtype="float32"))
            lv1 = cls.inner(lv)
            lv2 = R.call_tir(cls.split_sum, (lv1,), out_sty=[R.Tensor((n,), dtype="float32"), R.Tensor((4,), dtype="float32")])
            lv3 = lv2[1]
            lv4 = R.call_dps_packed("ext.scale", (lv3,), out_ty=R.Tensor((4,), dtype="float32"))
            gv = (lv2[0], lv4)
            R.output(gv)
        return gv
"""


def _module():
    return tir.parse(MODULE.replace("out_sty=", "out_ty="))


def scale(x, out):
    """An external function in destination-passing style."""
    out[...] = 10 * x


@pytest.mark.parametrize("engine", ENGINES)
def test_graph_main_with_tuples_nested_calls_and_externals(engine):
    mod = _module()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4)).astype(np.float32)
    y = rng.standard_normal((5, 4)).astype(np.float32)
    first, second = tir.run(mod, x, y, engine=engine, registry={"ext.scale": scale})
    s = 2 * (x + y)
    np.testing.assert_allclose(first, s.sum(1), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second, 10 * s.sum(0), rtol=1e-5, atol=1e-4)


def test_external_returning_its_output():
    mod = _module()
    x = np.ones((2, 4), np.float32)
    _, second = tir.run(mod, x, x, registry={"ext.scale": lambda v, out: v * 3})
    assert second.tolist() == [24.0] * 4  # 3 * sum over 2 rows of 2 * (1 + 1)


def test_missing_external_is_named():
    mod = _module()
    x = np.ones((2, 4), np.float32)
    with pytest.raises(InterpError, match="ext.scale"):
        tir.run(mod, x, x)


def test_symbolic_shapes_must_agree():
    mod = _module()
    with pytest.raises(InterpError, match="shape"):
        tir.run(mod, np.ones((2, 4), np.float32), np.ones((3, 4), np.float32), registry={"ext.scale": scale})


def test_executor_caches_compiled_functions():
    mod = _module()
    ex = GraphExecutor(mod, registry={"ext.scale": scale})
    x = np.ones((3, 4), np.float32)
    ex.run(x, x)
    runners = dict(ex._runners)
    ex.run(x, x)
    assert ex._runners == runners and set(runners) == {"add", "split_sum"}


@pytest.mark.parametrize("engine", ENGINES)
def test_run_prim_func_allocates_the_last_buffer(engine):
    f = tir.topi.lower("nn.conv2d", [((2, 3, 8, 8), "float32"), ((4, 3, 3, 3), "float32")], padding=[1] * 4)
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    out = tir.run(f, x, w, engine=engine)
    xp = np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)])
    ref = np.zeros((2, 4, 8, 8), np.float32)
    for dy in range(3):
        for dx in range(3):
            ref += np.einsum("nchw,oc->nohw", xp[:, :, dy:dy + 8, dx:dx + 8], w[:, :, dy, dx])
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4)


def test_unknown_engine():
    f = tir.topi.lower("exp", [((3,), "float32")])
    with pytest.raises(ValueError, match="engine"):
        tir.run(f, np.zeros(3, np.float32), engine="gpu")

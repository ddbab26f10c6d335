"""Intrinsics TVM's build computes from others (tir.intrinsics.LEGALIZED: tanh, tan, sinh,
cosh, atanh, exp10, rsqrt, sigmoid), operation by operation in the call's dtype, and float16
libm functions computed in float and rounded once: both engines give TVM 0.27's numbers
exactly. The fixture holds TVM's float16 outputs (an llvm build of ``o[i] = T.op(x[i])``)."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

import tir
from tests.fixture_util import FIXTURES
from tir import dtype as dt
from tir import expr as E
from tir.intrinsics import LEGALIZED, legalized

MEASURED = json.loads((FIXTURES / "s21_float16_intrinsics_tvm.json").read_text())
ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])


def _func(op: str, dtype: str, n: int):
    return tir.parse(f'''
# from tvm.script import tir as T
@T.prim_func
def f(x: T.Buffer(({n},), "{dtype}"), o: T.Buffer(({n},), "{dtype}")):
    for i in range({n}):
        with T.block("o"):
            v = T.axis.spatial({n}, i)
            o[v] = T.{op}(x[v])
''')


@pytest.mark.parametrize("op", sorted(MEASURED))
def test_float16_intrinsics_give_tvms_numbers(op):
    x = np.array(MEASURED[op]["x"], dtype="float16")
    want = np.array(MEASURED[op]["tvm"], dtype="float16")
    func = _func(op, "float16", len(x))
    for engine in ENGINES:
        np.testing.assert_array_equal(tir.run(func, x, engine=engine), want, err_msg=engine)


@pytest.mark.parametrize("op", sorted(LEGALIZED))
def test_float32_legalized_intrinsics_stay_close_to_numpy(op):
    special = {"rsqrt": lambda v: 1 / np.sqrt(v), "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
               "exp10": lambda v: np.power(10.0, v), "atanh": np.arctanh}
    ref = special[op] if op in special else getattr(np, op)
    lo, hi = {"rsqrt": (0.1, 5), "atanh": (-0.95, 0.95), "exp10": (-3, 3), "tan": (-1.4, 1.4)}.get(op, (-4, 4))
    x = np.random.default_rng(0).uniform(lo, hi, 200).astype("float32")
    for engine in ENGINES:
        np.testing.assert_allclose(tir.run(_func(op, "float32", 200), x, engine=engine), ref(x.astype("float64")),
                                   rtol=2e-5, atol=1e-6, err_msg=engine)


def test_only_one_float_argument_is_expanded():
    x = E.Var("x", dt.float32)
    assert legalized(E.Call(x.dtype, "exp", (x,))) is None
    tanh = legalized(E.Call(x.dtype, "tanh", (x,)))
    assert isinstance(tanh, E.Select) and legalized(E.Call(x.dtype, "tanh", (x,))) is tanh  # cached


BF16 = json.loads((FIXTURES / "s21_bfloat16_tvm.json").read_text())


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(BF16))
def test_bfloat16_computes_in_float_and_rounds_at_the_store(case, engine):
    """TVM's build computes bfloat16 arithmetic, constants and intrinsics in float and rounds
    where a value is stored (or cast): ``x * y + x`` rounds once, ``T.bfloat16(0.1)`` is
    float's 0.1, exp10's ln 10 a float constant. The fixture holds TVM 0.27's numbers."""
    c = BF16[case]
    text = f'''
# from tvm.script import tir as T
@T.prim_func
def f(x: T.Buffer((40,), "bfloat16"), y: T.Buffer((40,), "bfloat16"), o: T.Buffer((40,), "bfloat16")):
    for i in range(40):
        with T.block("o"):
            v = T.axis.spatial(40, i)
            o[v] = {c["expr"]}
'''
    x, y = np.array(c["x"], dtype="float32"), np.array(c["y"], dtype="float32")
    got = np.asarray(tir.run(tir.parse(text), x, y, engine=engine), dtype="float32")
    np.testing.assert_array_equal(got, np.array(c["tvm"], dtype="float32"))


BF16_SUM = json.loads((FIXTURES / "s22_bfloat16_sum_tvm.json").read_text())


@pytest.mark.parametrize("engine", ENGINES)
def test_bfloat16_reduction_rounds_every_step(engine):
    """A bfloat16 sum stores (and so rounds) its accumulator at every step, as TVM's build
    does; the fixture is TVM 0.27's output for 8 rows of 64 random values."""
    x = np.array(BF16_SUM["x"], dtype="float32")
    got = np.asarray(tir.run(tir.parse(BF16_SUM["text"]), x, engine=engine), dtype="float32")
    np.testing.assert_array_equal(got, np.array(BF16_SUM["tvm"], dtype="float32"))


@pytest.mark.parametrize("engine", ENGINES)
def test_bfloat16_casts_round_to_nearest_even(engine):
    """float32 -> bfloat16 keeps the top 16 bits rounded to nearest, ties to even; NaN and
    infinities pass; the largest float32 values round to infinity."""
    f = tir.parse('''
# from tvm.script import tir as T
@T.prim_func
def f(x: T.Buffer((8,), "float32"), o: T.Buffer((8,), "bfloat16")):
    for i in range(8):
        with T.block("o"):
            v = T.axis.spatial(8, i)
            o[v] = T.Cast("bfloat16", x[v])
''')
    bits = np.array([0x3F808000, 0x3F818000, 0x3F808001, 0x7F7FFFFF, 0xFF800000, 0x7FC00000,
                     0x00000001, 0xBF80FFFF], dtype=np.uint32)
    got = np.asarray(tir.run(f, bits.view(np.float32), engine=engine), dtype=np.float32).view(np.uint32)
    want = [0x3F800000, 0x3F820000, 0x3F810000, 0x7F800000, 0xFF800000, 0x7FC00000, 0x0, 0xBF810000]
    assert [hex(b) for b in got] == [hex(w) for w in want]

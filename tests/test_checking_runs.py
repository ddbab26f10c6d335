"""How opinfo's checking runs differ from ``tir.run``: max/min keep a NaN (an accumulator
left uninitialised shows), while ``tir.run`` keeps TVM's ``select(a > b, a, b)``."""
import numpy as np

import tir
from opinfo.recognize.running import poisoned, run
from tir.interp_expr import max_of, min_of, nan_propagating_minmax

# a row max whose init stores at row 0 for every row (a schedule gone wrong): rows 1.. start
# from whatever the output held
ROW_MAX = '''
@T.prim_func
def row_max(x: T.Buffer((3, 4), "float32"), y: T.Buffer((3,), "float32")):
    for i, k in T.grid(3, 4):
        with T.block("y"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                y[0] = T.float32(-3.4e38)
            y[vi] = T.max(y[vi], x[vi, vk])
'''


def _func():
    return tir.parse(ROW_MAX)


def test_tvm_max_drops_a_nan_first_operand():
    a, b = np.float32(np.nan), np.float32(1.0)
    assert max_of(a, b) == 1.0 and min_of(a, b) == 1.0
    with nan_propagating_minmax():
        assert np.isnan(max_of(a, b)) and np.isnan(min_of(a, b))
    assert max_of(a, b) == 1.0  # the context ends


def test_checking_run_shows_an_uninitialised_max_accumulator():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    got = run(_func(), [x, poisoned((3,), "float32")])
    assert got[0] == 3.0 and np.isnan(got[1:]).all()


def test_tir_run_keeps_tvm_semantics():
    x = np.arange(12, dtype="float32").reshape(3, 4)
    out = np.full((3,), np.nan, dtype="float32")
    tir.interpret(_func(), x, out)
    # TVM's max drops the NaN the rows start from: the uninitialised rows look right
    np.testing.assert_array_equal(out, [3.0, 7.0, 11.0])

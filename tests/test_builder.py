"""tir.builder: compute-style construction of PrimFuncs in TVM's printed forms."""
import numpy as np

import tir
from tir.builder import Builder, max_, sum_


def test_reduction_block_has_init_and_reads():
    b = Builder()
    a = b.placeholder((4, 8), "float32", "A")
    k = b.reduce_axis(8, "k")
    c = b.compute("C", (4,), lambda i: sum_(a[i, k.var] * a[i, k.var], k))
    func = b.build([a], [c])
    (block,) = func.blocks()
    assert block.name == "C" and block.init is not None
    assert [iv.kind for iv in block.iter_vars] == [tir.IterKind.SPATIAL, tir.IterKind.REDUCE]
    assert [r.buffer for r in block.reads] == [a]
    assert isinstance(block.init.value, tir.FloatImm) and block.init.value.value == 0.0
    x = np.random.default_rng(0).standard_normal((4, 8)).astype("float32")
    np.testing.assert_allclose(tir.run(func, x), (x * x).sum(axis=1), rtol=1e-5)


def test_max_init_is_lowest_float32_and_names_are_unique():
    b = Builder()
    a = b.placeholder((3, 5), "float32", "A")
    k = b.reduce_axis(5)
    m = b.compute("T", (3,), lambda i: max_(a[i, k.var], k))
    out = b.compute("T", (3,), lambda i: m[i] * 2.0)
    func = b.build([a], [out])
    names = [blk.name for blk in func.blocks()]
    assert names == ["T", "T_1"]
    first = next(func.blocks())
    assert first.init.value == tir.min_value("float32")
    assert list(func.root_block.alloc_buffers) == [m]


def test_round_trips_through_the_printer_and_parser():
    b = Builder()
    a = b.placeholder((2, 3), "float32", "A")
    out = b.compute("B", (2, 3), lambda i, j: tir.max_(a[i, j], tir.const(0.0)))
    func = b.build([a], [out])
    text = tir.to_script(func)
    tir.assert_structural_equal(tir.parse(text), func)

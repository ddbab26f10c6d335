"""A graph function declaring shape variables in its body (``s = T.int64()``, bound by a
later ``R.match_cast``), as TVM prints a data-dependent output shape
(``dynamic_strided_slice``: real TVM 0.27 output)."""
from __future__ import annotations

import numpy as np
import pytest

import opinfo
import tir
from tir.parser import ParseError

from tests.fixture_util import FIXTURES


def test_shape_variables_declared_in_main_parse():
    mod = tir.parse((FIXTURES / "s19_dynamic_strided_slice.py").read_text())
    kinds = {name: info.kind for name, info in opinfo.analyze_module(mod).items()}
    assert kinds == {"shape_func": "elemwise", "dynamic_strided_slice": "opaque"}  # TVM's kinds
    assert len(mod.main.bindings) == 4


def test_shape_variables_declared_in_a_dataflow_block_parse():
    text = (FIXTURES / "s19_dynamic_strided_slice.py").read_text()
    moved = text.replace("        s = T.int64()\n        s_1 = T.int64()\n        with R.dataflow():\n",
                         "        with R.dataflow():\n            s = T.int64()\n            s_1 = T.int64()\n")
    assert moved != text
    assert len(tir.parse(moved).main.bindings) == 4


def test_a_call_with_arguments_is_still_an_error():
    text = (FIXTURES / "s19_dynamic_strided_slice.py").read_text().replace("s = T.int64()", "s = T.int64(3, 4)")
    with pytest.raises(ParseError, match="T.int64"):
        tir.parse(text)


@pytest.mark.parametrize("begin, end, strides", [([1, 2], [5, 7], [2, 2]), ([4, 7], [0, 1], [-2, -3]),
                                                 ([-5, 0], [6, 8], [1, 3])])
def test_a_data_dependent_shape_runs(begin, end, strides):
    # R.tensor_to_shape + R.match_cast bind the output extents from shape_func's result
    from tir.graph_exec import GraphExecutor

    mod = tir.parse((FIXTURES / "s19_dynamic_strided_slice.py").read_text())
    x = np.arange(48, dtype="float32").reshape(6, 8)
    args = [np.array(v, dtype="int64") for v in (begin, end, strides)]
    out = GraphExecutor(mod).run(x, *args)
    want = x[slice(begin[0], end[0], strides[0]), slice(begin[1], end[1], strides[1])]
    np.testing.assert_array_equal(out, want)


def test_a_shape_that_does_not_match_is_an_error():
    from tir.graph_exec import GraphExecutor
    from tir.interp import InterpError

    text = (FIXTURES / "s19_dynamic_strided_slice.py").read_text().replace(
        "R.match_cast(lv1, R.Shape([s, s_1]))", "R.match_cast(lv1, R.Shape([s, 2]))")
    x = np.arange(48, dtype="float32").reshape(6, 8)
    with pytest.raises(InterpError, match="does not match"):
        GraphExecutor(tir.parse(text)).run(x, *[np.array(v, dtype="int64") for v in ([1, 2], [5, 7], [2, 2])])

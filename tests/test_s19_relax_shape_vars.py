"""A graph function declaring shape variables in its body (``s = T.int64()``, bound by a
later ``R.match_cast``), as TVM prints a data-dependent output shape
(``dynamic_strided_slice``: real TVM 0.27 output)."""
from __future__ import annotations

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


def test_a_call_with_arguments_is_still_an_error():
    text = (FIXTURES / "s19_dynamic_strided_slice.py").read_text().replace("s = T.int64()", "s = T.int64(3, 4)")
    with pytest.raises(ParseError, match="T.int64"):
        tir.parse(text)

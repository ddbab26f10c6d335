"""tools/fuzz_soundness.relowered_differs, which tools/relower_audit.py and the fuzzer's
check of changed answers use: an answer is built again with ``tir.topi`` and run against
the function it names."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import attrs
import numpy as np

import opinfo
from tests.fixture_util import fixture_func

_SPEC = importlib.util.spec_from_file_location(
    "fuzz_soundness", Path(__file__).resolve().parents[1] / "tools" / "fuzz_soundness.py")
fuzz = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(fuzz)


def _op(name):
    func = fixture_func(name)
    (op,) = opinfo.analyze(func).ops
    return func, op


def test_a_right_answer_is_confirmed():
    func, op = _op("s18_strided_slice_offset")
    assert fuzz.relowered_differs(func, op, np.random.default_rng(0)) is False


def test_a_wrong_attribute_is_caught():
    func, op = _op("s18_strided_slice_offset")
    wrong = attrs.evolve(op, attrs={**dict(op.attrs), "begin": (2,), "end": (4,)})
    assert fuzz.relowered_differs(func, wrong, np.random.default_rng(0)) is True


def test_an_answer_the_library_cannot_build_is_unchecked():
    func, op = _op("s18_repeat")
    odd = attrs.evolve(op, attrs={**dict(op.attrs), "axis": "not an axis"})
    assert fuzz.relowered_differs(func, odd, np.random.default_rng(0)) is None

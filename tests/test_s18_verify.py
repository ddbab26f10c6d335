"""Confirming an answer by building it again: :func:`opinfo.verify_op` and
``opinfo analyze --verify`` (the op lowered afresh with ``tir.topi`` from the answer alone,
run against the PrimFunc on random inputs)."""
from __future__ import annotations

import json

import attrs
import numpy as np
import pytest

import opinfo
import tir
from opinfo.cli import main as cli_main
from opinfo.cli.analyze import _verified
from tir import topi

from tests.fixture_util import FIXTURES, fixture_func


def _named(name):
    func = fixture_func(name)
    info = opinfo.analyze(func)
    (op,) = info.ops
    return func, info, op


def test_a_right_answer_is_confirmed():
    func, _, op = _named("s18_strided_slice_offset")
    assert opinfo.verify_op(func, op) is True


def test_a_wrong_attribute_is_refuted():
    func, _, op = _named("s18_strided_slice_offset")
    assert opinfo.verify_op(func, attrs.evolve(op, attrs={**dict(op.attrs), "begin": (2,), "end": (4,)})) is False


def test_an_answer_the_library_cannot_build_is_unchecked():
    func, _, op = _named("s18_strided_slice_offset")
    assert opinfo.verify_op(func, attrs.evolve(op, attrs={**dict(op.attrs), "axes": "no axes"})) is None
    func, _, op = _named("s18_repeat")  # an op the lowering library does not build
    assert opinfo.verify_op(func, op) is None


@pytest.mark.parametrize("op, inputs, attrs_", [
    ("nn.conv2d", [((1, 4, 7, 7), "float32"), ((6, 2, 3, 3), "float32")],
     dict(strides=[2, 1], padding=[1, 0, 1, 1], dilation=[1, 1], groups=2, data_layout="NCHW", kernel_layout="OIHW")),
    ("nn.softmax", [((3, 5), "float32")], dict(axis=0)),
    ("sum", [((4, 3, 2), "float32")], dict(axis=[1], keepdims=False)),
    ("add", [((4, 3), "float16"), ((3,), "float16")], {}),
])
def test_lowered_ops_confirm_themselves(op, inputs, attrs_):
    func = topi.lower(op, inputs, **attrs_)
    (found,) = opinfo.analyze(func).ops
    assert opinfo.verify_op(func, found, np.random.default_rng(3)) is True


def test_a_refuted_op_is_withdrawn_from_the_record():
    func, info, op = _named("s18_strided_slice_offset")
    wrong = attrs.evolve(info, ops=(attrs.evolve(op, attrs={**dict(op.attrs), "begin": (4,), "end": (6,)}),))
    rec = wrong.to_json()
    _verified(rec, func, wrong)
    assert rec["ops"] == [] and rec["refuted"][0]["attrs"]["begin"] == [4]


def test_cli_verify_marks_each_op(capsys):
    path = str(FIXTURES / "s18_strided_slice_offset.py")
    assert cli_main(["analyze", "--verify", "--json", path]) == 0
    (fn,) = json.loads(capsys.readouterr().out)["functions"]
    assert [(o["op"], o["verified"]) for o in fn["ops"]] == [("strided_slice", True)] and "refuted" not in fn
    assert cli_main(["analyze", "--verify", path]) == 0
    assert "[verified]" in capsys.readouterr().out


def test_a_fused_kernel_is_left_unchecked():
    from opinfo.verify import verify

    func = tir.parse((FIXTURES / "s18_repeat.py").read_text()).prim_funcs()[0][1]
    info = opinfo.analyze(func)
    two = attrs.evolve(info, ops=info.ops * 2)
    assert verify(func, two) == [None, None]

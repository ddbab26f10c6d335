"""An op named over operands it cannot take. A fuzz mutant of a fused permute_dims + matmul
read ``lv[i, k] * lv[k, j]`` of a (2, 6) buffer (a 2 x 2 block of it) and was named a matmul
of ``lv`` by itself: the matmul recognizer read indices, never extents, and verification
took the lowering library's refusal to build such a matmul for "cannot check". Now

- the matmul and convolution recognizers refuse an operand axis read at a variable whose
  constant extent differs from the buffer's (a symbolic extent may take the value: TVM
  legalizes a matmul of an ``(n,)`` vector by a ``(3, 4)`` matrix trusting ``n`` = 3);
- ``tir.topi`` raises :class:`tir.topi.ShapeError` (an ``OpError``) where static extents rule
  the op out whatever its other attributes, and verification of a function of static shapes
  takes that for a refutation (an op the library does not lower for some attributes stays
  "cannot check");
- over symbolic shapes, an output axis of constant extent wrong by the same extent at two
  bindings refutes even when another axis follows the binding.

The functions here are lowered with the library and their signatures edited: one input
buffer made larger than what the loops read."""
from __future__ import annotations

import re

import pytest

import tir
import tir.topi
from opinfo.api import analyze

from tests.fixture_util import fixture_func

ENLARGE = re.compile(r"(\w+): T\.Buffer\(\(T\.int64\((\d+)\)")


def _enlarged(op: str, inputs, param: int, by: int = 1, **attrs) -> "tir.PrimFunc":
    """``op`` lowered at ``inputs`` with the first extent of input ``param`` made larger in the
    signature only (the loops still read the original extent)."""
    text = tir.to_script(tir.topi.lower(op, inputs, **attrs))
    head, rest = text.split("):\n", 1)
    found = list(ENLARGE.finditer(head))[param]
    head = head[:found.start(2)] + str(int(found.group(2)) + by) + head[found.end(2):]
    return tir.parse(head + "):\n" + rest)


def _names(func) -> list:
    return [op.name for op in analyze(func).ops]


@pytest.mark.parametrize("op, inputs, param, attrs", [
    ("matmul", [((4, 3), "float32"), ((3, 5), "float32")], 0, {}),
    ("matmul", [((4, 3), "float32"), ((3, 5), "float32")], 1, {}),
    ("stack", [((3, 4), "float32"), ((3, 4), "float32")], 1, {"axis": 0}),
    ("concat", [((3, 4), "float32"), ((2, 4), "float32")], 1, {"axis": 0}),
    ("nn.nll_loss", [((4, 5), "float32"), ((4,), "int64"), ((5,), "float32")], 2, {"reduction": "none"}),
    ("nn.conv2d", [((1, 4, 6, 6), "float32"), ((8, 4, 3, 3), "float32")], 0, {}),
])
def test_an_operand_larger_than_what_the_op_reads_is_refused(op, inputs, param, attrs):
    plain = tir.topi.lower(op, inputs, **attrs)
    assert _names(plain) == [op]
    assert _names(_enlarged(op, inputs, param, **attrs)) == []


def test_shape_errors_are_raised_only_for_static_extents_that_differ():
    with pytest.raises(tir.topi.ShapeError):
        tir.topi.lower("matmul", [((2, 6), "float32"), ((2, 6), "float32")])
    with pytest.raises(tir.topi.ShapeError):
        tir.topi.lower("add", [((2, 6), "float32"), ((3, 6), "float32")])
    n = tir.SizeVar("n", "int64")
    with pytest.raises(tir.topi.OpError) as got:
        tir.topi.lower("matmul", [((n,), "float32"), ((3, 4), "float32")])
    assert not isinstance(got.value, tir.topi.ShapeError)  # n may be 3
    with pytest.raises(tir.topi.OpError) as got:  # not lowered, yet a valid op
        tir.topi.lower("nn.conv2d", [((1, 2, 6, 6, 4), "float32"), ((2, 1, 3, 3, 4, 4), "float32")],
                       data_layout="NCHW4c", kernel_layout="OIHW4i4o", groups=2)
    assert not isinstance(got.value, tir.topi.ShapeError)


def test_a_symbolic_vector_trusted_to_fit_is_still_a_matmul():
    # TVM 0.27's legalization (fixture s44_*, a generated case): x (n,), y (3, 4), k < 3
    func = fixture_func("s44_matmul_symbolic_vector")
    assert str(func.buffers[0].shape[0]) == "n" and "x[v_k]" in tir.to_script(func)
    assert _names(func) == ["matmul"]


def test_a_packed_grouped_convolution_over_a_larger_batch_is_refused():
    # TVM 0.27's NCHW4c/OIHW4i4o re-layout of a grouped conv2d (fixture s44_*, a generated
    # case); the library does not lower grouped packed convolutions, so only the recognizer's
    # own check of the batch extent stands between this and a wrong name
    name = "s44_conv2d_packed_grouped"
    (op,) = analyze(fixture_func(name)).ops
    assert op.name == "nn.conv2d" and op.attrs["data_layout"] == "NCHW4c" and op.attrs["groups"] == 2
    old = 'x: T.Buffer((T.int64(2), T.int64(4), T.int64(9), T.int64(7), T.int64(4)), "float32")'

    def edit(text):
        assert text.count(old) == 1
        return text.replace(old, old.replace("T.int64(2), T.int64(4)", "T.int64(3), T.int64(4)", 1))
    assert analyze(fixture_func(name, edit)).ops == ()


def test_scales_for_other_channels_are_refused_over_a_symbolic_batch():
    # TVM 0.27's batch_norm of an (n, 7) input (fixture s44_*, a generated case): no binding of
    # n is run (verification would guess one); lowered at the function's own shapes, a gamma
    # of 6 for 7 channels rules the op out
    name = "s44_batch_norm_symbolic"
    (op,) = analyze(fixture_func(name)).ops
    assert op.name == "nn.batch_norm"
    old = 'y1: T.Buffer((T.int64(7),), "float32")'

    def edit(text):
        assert text.count(old) == 1
        return text.replace(old, 'y1: T.Buffer((T.int64(6),), "float32")')
    info = analyze(fixture_func(name, edit))
    assert info.ops == () and "cannot take the function's operands" in info.refused


@pytest.mark.parametrize("op, inputs, attrs", [
    ("argmax", [((8, 3), "float32")], {"axis": 0, "keepdims": True}),
    ("argmin", [((8, 3), "float32")], {"axis": 0, "keepdims": False}),
])
def test_a_tuple_reduction_reading_past_its_operand_is_refused(op, inputs, attrs):
    # its update computes in let bindings, whose loads the unguarded-read check now reads
    # (and a Select's condition is always evaluated)
    assert _names(tir.topi.lower(op, inputs, **attrs)) == [op]
    assert _names(_enlarged(op, inputs, 0, by=-1, **attrs)) == []


def test_a_float_tensor_read_as_indices_is_refused():
    # a fuzz mutant of TVM 0.27's gather_elements read x[x[i]] (float data as its own indices):
    # no gather takes a float index tensor
    text = tir.to_script(tir.topi.lower("gather_elements", [((5,), "float32"), ((5,), "int64")], axis=0))
    assert _names(tir.parse(text)) == ["gather_elements"]
    old = "T_gather[v_ax0] = x[x1[v_ax0]]"
    assert text.count(old) == 1
    mutant = text.replace(old, "T_gather[v_ax0] = x[x[v_ax0]]")  # the store only, as the fuzzer did
    info = analyze(tir.parse(mutant))
    assert info.ops == () and "cannot take the function's operands" in info.refused

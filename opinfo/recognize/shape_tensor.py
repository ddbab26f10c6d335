"""``shape_to_tensor``: a shape value materialised as a 1-D int64 tensor.

Relax lowers ``shape_to_tensor(R.shape([d0, .., dk]))`` to a function whose only parameter
is its output, of k + 1 int64 elements, written by one block TVM tags ``shape_to_tensor``
with ``if_then_else(i == 0, d0, if_then_else(i == 1, d1, ..))``. TVM's ONNX frontend emits
it where a network reads a shape at run time (a Gather from a Shape, the extent of an axis
for negative-index normalisation).

A data-free 1-D int64 function could as well be another creation op (``arange``, an
integer ``full``), whose blocks TVM names differently: the tag is required, and so is the
reading: every element written, independently of what the output held before, each
element a literal of the function and not negative (a shape's extents).
"""
from __future__ import annotations

import re

import numpy as np

from tir.expr import IntImm
from tir.function import PrimFunc
from tir.functor import post_order_visit

from ..info import OpInfo, Operand
from .running import run

TAG = re.compile(r"shape_to_tensor\d*\Z")


def _int_literals(func: PrimFunc) -> set:
    found = set()

    def visit(n):
        if isinstance(n, IntImm):
            found.add(int(n.value))
    post_order_visit(func.body, visit)
    return found


def recognize_shape_to_tensor(func: PrimFunc) -> "OpInfo | None":
    if len(func.params) != 1 or len(func.buffers) != 1:
        return None
    out = func.buffers[0]
    if str(out.dtype) != "int64" or len(out.shape) != 1 or not isinstance(out.shape[0], IntImm):
        return None
    n = int(out.shape[0].value)
    blocks = list(func.blocks())
    if n < 1 or len(blocks) != 1 or not TAG.match(blocks[0].name) or blocks[0].reads:
        return None
    got = [run(func, [np.full((n,), fill, dtype=np.int64)]) for fill in (-7, 11)]
    if any(g is None for g in got) or not np.array_equal(got[0], got[1]):
        return None
    lits = _int_literals(func)
    if any(int(v) not in lits or v < 0 for v in got[0]):
        return None  # a literal of the function each, and an extent: not negative
    return OpInfo("shape_to_tensor", {}, (), Operand("output", out.name, 0), blocks=(blocks[0].name,))

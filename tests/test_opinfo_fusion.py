"""opinfo.fusion: which op graphs TVM's FuseOps makes into one function.

Graphs are lists of FuseNodes in dataflow order: parameters (external) first, then ops
of TVM pattern kinds. The expectations follow relay's GraphPartitioner as Relax's FuseOps
runs it (an edge carries its consumer's kind).
"""
import pytest

from opinfo.fusion import FuseNode, one_group
from opinfo.kind import BROADCAST as B, COMM_REDUCE as R, ELEMWISE as E, INJECTIVE as I, OPAQUE as X
from opinfo.kind import OUT_EWISE_FUSABLE as O

P = FuseNode(X, (), True)


def op(kind, *inputs):
    return FuseNode(kind, inputs)


@pytest.mark.parametrize("name,nodes,fused", [
    ("conv -> add(bias) -> relu", [P, P, P, op(O, 0, 1), op(E, 3, 2), op(E, 4)], True),
    ("add -> conv: nothing joins an anchor's input", [P, P, P, op(E, 0, 1), op(O, 3, 2)], False),
    ("exp -> sum", [P, op(E, 0), op(R, 1)], True),
    ("exp -> matvec (comm_reduce)", [P, P, op(E, 0), op(R, 2, 1)], True),
    ("sum -> exp: a reduction joins no consumer", [P, op(R, 0), op(E, 1)], False),
    ("conv -> relu -> sum: two complex groups", [P, P, op(O, 0, 1), op(E, 2), op(R, 3)], False),
    ("transpose -> exp", [P, op(I, 0), op(E, 1)], True),
    ("exp -> transpose", [P, op(E, 0), op(I, 1)], True),
    ("transpose -> sum", [P, op(I, 0), op(R, 1)], False),
    ("conv -> transpose", [P, P, op(O, 0, 1), op(I, 2)], False),
    ("conv -> add -> transpose", [P, P, P, op(O, 0, 1), op(E, 3, 2), op(I, 4)], False),
    ("conv -> add(exp(bias))", [P, P, P, op(O, 0, 1), op(E, 2), op(E, 3, 4)], True),
    ("conv -> add(expand_dims(bias))", [P, P, P, op(O, 0, 1), op(B, 2), op(E, 3, 4)], True),
    ("conv -> add(transpose(bias))", [P, P, P, op(O, 0, 1), op(I, 2), op(E, 3, 4)], False),
    ("matmul -> softmax", [P, P, op(O, 0, 1), op(O, 2)], False),
    ("matmul -> softmax -> matmul", [P, P, P, op(O, 0, 1), op(O, 3), op(O, 4, 2)], False),
    ("exp -> (relu, sigmoid) -> add", [P, op(E, 0), op(E, 1), op(E, 1), op(E, 2, 3)], True),
    ("take -> exp: opaque joins nothing", [P, P, op(X, 0, 1), op(E, 2)], False),
    ("softmax -> relu", [P, op(O, 0), op(E, 1)], True),
    ("relu -> relu -> relu", [P, op(E, 0), op(E, 1), op(E, 2)], True),
])
def test_one_group(name, nodes, fused):
    assert one_group(nodes) is fused, name


def test_single_op_is_one_group():
    assert one_group([P, op(O, 0)])

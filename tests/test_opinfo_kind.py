"""Pattern kinds where TVM's PatternKindAnalyzer is known to be wrong: opinfo keeps TVM's
answer (``kind`` is the value the rest of TVM will use for fusion) and still recovers the op.

1. A matmul whose update is written ``C = A * B + C`` (accumulator second) is not seen as
   a multiply-add by TVM's ``IsFMA`` check, so TVM calls it ``comm_reduce`` instead of
   ``out_ewise_fusable``.
2. A block with two stores at different indices is ``opaque`` to TVM even when each store
   is elementwise.
"""
import tir
from opinfo.api import analyze

MATMUL = """
@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 3), "float32"), C: T.Buffer((4, 3), "float32")):
    for i, j, k in T.grid(4, 3, 8):
        with T.block("matmul"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = {update}
"""

TWO_STORES = """
@T.prim_func
def main(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32"), C: T.Buffer((4, 1), "float32")):
    for i in range(4):
        with T.block("two"):
            vi = T.axis.remap("S", [i])
            B[vi] = A[vi] + T.float32(1)
            C[vi, 0] = A[vi] * T.float32(2)
"""


def _func(text):
    return tir.parse("from tvm.script import tir as T\n" + text)


def test_matmul_written_acc_first_is_out_ewise_fusable():
    f = _func(MATMUL.format(update="C[vi, vj] + A[vi, vk] * B[vk, vj]"))
    info = analyze(f)
    assert info.kind == "out_ewise_fusable"
    assert [o.name for o in info.ops] == ["matmul"]


def test_commuted_matmul_keeps_tvms_comm_reduce():
    f = _func(MATMUL.format(update="A[vi, vk] * B[vk, vj] + C[vi, vj]"))
    info = analyze(f)
    assert info.kind == "comm_reduce"  # TVM's answer; semantically out_ewise_fusable
    assert [o.name for o in info.ops] == ["matmul"]


def test_block_with_two_stores_keeps_tvms_opaque():
    info = analyze(_func(TWO_STORES))
    assert info.kind == "opaque"  # TVM's answer; each store alone is elementwise
    assert info.ops == ()  # several stores in one block: not one op, so no guess either


def test_one_elementwise_store_is_elemwise():
    text = TWO_STORES.replace('''            B[vi] = A[vi] + T.float32(1)
            C[vi, 0] = A[vi] * T.float32(2)''', '''            B[vi] = A[vi] + T.float32(1)''')
    assert analyze(_func(text)).kind == "elemwise"

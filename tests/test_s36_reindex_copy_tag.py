"""A copy block named after an arithmetic op's compute (``T_multiply``: TVM folded ``x * 1``)
is that op; ``reindex``'s copy of such a block (``T_multiply_reindex``) carries the same tag
but is a copy. When it copies a parameter rather than what the op computed (found by
tools/fuzz_soundness.py on a reindex-scheduled multiply), naming it ``multiply`` would be a
confident wrong answer."""
import numpy as np

import opinfo
import tir

HEADER = "# from tvm.script import tirx as T\n\n"


def _func(copy_name: str, copied: str):
    return tir.parse(HEADER + f'''@T.prim_func
def f(x: T.Buffer((3, 4), "float32"), y: T.Buffer((3, 4), "float32"), out: T.Buffer((3, 4), "float32")):
    tmp = T.sblock_alloc_buffer((3, 4))
    for i, j in T.grid(3, 4):
        with T.sblock("T_multiply"):
            vi, vj = T.axis.remap("SS", [i, j])
            tmp[vi, vj] = x[vi, vj] * y[vi, vj]
    for i, j in T.grid(3, 4):
        with T.sblock("{copy_name}"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = {copied}[vi, vj]
''')


def _run(func):
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(2, 3, 4)).astype("float32")
    return x, y, tir.run(func, x, y)


def test_reindex_copy_of_the_product_is_the_multiply():
    func = _func("T_multiply_reindex", "tmp")
    (op,) = opinfo.analyze(func).ops
    assert op.name == "multiply" and [o.buffer for o in op.operands] == ["x", "y"]
    x, y, out = _run(func)
    np.testing.assert_allclose(out, x * y, rtol=1e-6)


def test_reindex_copy_of_a_parameter_is_not_a_folded_multiply():
    func = _func("T_multiply_reindex", "y")
    x, y, out = _run(func)
    np.testing.assert_array_equal(out, y)  # the product is dead: the function copies y
    assert all(op.name != "multiply" for op in opinfo.analyze(func).ops)


def test_a_copy_under_the_op_tag_itself_is_still_the_folded_op():
    func = tir.parse(HEADER + '''@T.prim_func
def f(x: T.Buffer((3, 4), "float32"), out: T.Buffer((3, 4), "float32")):
    for i, j in T.grid(3, 4):
        with T.sblock("T_multiply"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = x[vi, vj]
''')
    (op,) = opinfo.analyze(func).ops
    assert op.name == "multiply" and [o.buffer for o in op.operands] == ["x"]


def test_verify_op_builds_a_scalar_constant_operand():
    """The folded op's constant is part of the answer, and checked: ``x * 1`` is the copy,
    ``x * 2`` and ``1 / x`` are not."""
    import attrs

    from opinfo.verify import verify_op

    func = tir.parse(HEADER + '''@T.prim_func
def f(x: T.Buffer((3, 4), "float32"), out: T.Buffer((3, 4), "float32")):
    for i, j in T.grid(3, 4):
        with T.sblock("T_multiply"):
            vi, vj = T.axis.remap("SS", [i, j])
            out[vi, vj] = x[vi, vj]
''')
    (op,) = opinfo.analyze(func).ops
    assert op.constants == (("rhs", 1.0),)
    assert verify_op(func, op) is True
    assert verify_op(func, attrs.evolve(op, constants=(("rhs", 2.0),))) is False
    assert verify_op(func, attrs.evolve(op, name="divide", constants=(("lhs", 1.0),))) is False

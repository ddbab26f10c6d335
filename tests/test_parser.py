"""tir.parse: the corpus, both dialects, literal typing, symbolic shapes, and clear errors."""
from __future__ import annotations

import pytest

import tir
from tir import dtype as dt
from tir import relax as rx
from corpus_util import CORPUS, corpus_files

ADD_TIRX = '''
# from tvm.script import tirx as T
@T.prim_func(private=True, s_tir=True)
def add(x: T.Buffer((T.int64(8),), "float32"), y: T.Buffer((T.int64(8),), "float32"), out: T.Buffer((T.int64(8),), "float32")):
    T.func_attr({"tir.noalias": True})
    # with T.sblock("root"):
    tmp = T.sblock_alloc_buffer((T.int64(8),))
    for i0, i1 in T.grid(T.int64(4), T.int64(2)):
        with T.sblock("tmp"):
            v = T.axis.spatial(T.int64(8), i0 * T.int64(2) + i1)
            T.reads(x[v], y[v])
            T.writes(tmp[v])
            tmp[v] = x[v] + y[v]
    for i in range(T.int64(8)):
        with T.sblock("out"):
            v = T.axis.spatial(T.int64(8), i)
            T.reads(tmp[v])
            T.writes(out[v])
            out[v] = tmp[v] * T.float32(2.0)
'''

ADD_TIR = (ADD_TIRX.replace("T.sblock_alloc_buffer", "T.alloc_buffer").replace("T.sblock", "T.block")
           .replace(", s_tir=True", ""))


def test_every_corpus_file_parses():
    files = corpus_files()
    if not files:
        pytest.skip(f"corpus not found at {CORPUS}")
    for path in files:
        node = tir.parse(path.read_text())
        assert isinstance(node, tir.IRModule), path
        assert node.prim_funcs(), path


def test_resnet50_has_its_functions_and_main():
    path = CORPUS / "models" / "resnet50.py"
    if not path.exists():
        pytest.skip("corpus not found")
    mod = tir.parse(path.read_text())
    assert len(mod.prim_funcs()) == 67
    assert sum(isinstance(b.value, rx.CallTIR) for b in mod.main.bindings) > 200


def test_lone_prim_func_and_dialects_agree():
    f = tir.parse(ADD_TIRX)
    assert isinstance(f, tir.PrimFunc)
    assert f.name is None  # private
    assert [b.name for b in f.blocks()] == ["tmp", "out"]
    assert [b.name for b in f.root_block.alloc_buffers] == ["tmp"]
    tir.assert_structural_equal(f, tir.parse(ADD_TIR))


def test_public_prim_func_gets_global_symbol():
    f = tir.parse(ADD_TIR.replace("(private=True)", ""))
    assert f.name == "add" and list(f.attrs) == ["tir.noalias", "global_symbol"]


def test_literals_take_the_dtype_of_the_other_operand():
    f = tir.parse(ADD_TIRX.replace("i0 * T.int64(2) + i1", "i0 * 2 + i1"))
    binding = f.body.block.body.seq[0].body.body.iter_values[0]
    assert binding.dtype == dt.int64 and binding.a.b == tir.IntImm(dt.int64, 2)
    tir.assert_structural_equal(f, tir.parse(ADD_TIRX))


def test_remap_reduce_init_let_and_select():
    text = '''
@T.prim_func
def f(A: T.Buffer((4, 8), "float32"), B: T.Buffer((4,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("red"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, 0:8])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            t: T.let[T.float32] = T.Select(A[vi, vk] > 0.0, A[vi, vk], -A[vi, vk])
            B[vi] = B[vi] + T.exp(t)
'''
    f = tir.parse(text)
    (blk,) = f.blocks()
    assert [iv.kind for iv in blk.iter_vars] == [tir.IterKind.SPATIAL, tir.IterKind.REDUCE]
    assert blk.iter_vars[1].dom.extent == tir.IntImm(dt.int32, 8)  # T.grid(4, 8): int32 like TVM
    assert blk.reads[0].region[1].extent == tir.IntImm(dt.int64, 8)
    assert isinstance(blk.init, tir.BufferStore) and isinstance(blk.body, tir.LetStmt)
    tir.verify(f)


def test_symbolic_shapes_handle_params_and_relax_string_dims():
    text = '''
@I.ir_module
class Module:
    @T.prim_func(private=True)
    def f(a: T.handle, b: T.handle):
        n = T.int64()
        A = T.match_buffer(a, (n, 4))
        B = T.match_buffer(b, (n, 4))
        for i, j in T.grid(n, T.int64(4)):
            with T.block("copy"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj]

    @R.function
    def main(x: R.Tensor(("n", 4), dtype="float32")) -> R.Tensor(("n", 4), dtype="float32"):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.f, (x,), out_ty=R.Tensor(("n", 4), dtype="float32"))
            R.output(y)
        return y
'''
    mod = tir.parse(text)
    f = mod["f"]
    A = f.buffers[0]
    assert A.data is f.params[0] and isinstance(A.shape[0], tir.Var)
    n = mod.main.params[0].type.shape[0]
    assert isinstance(n, tir.Var) and mod.main.ret_type.shape[0] is n
    tir.verify(mod)


@pytest.mark.parametrize("text, line, fragment", [
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = B[0]\n", 3, "undefined name 'B'"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0, 1] = T.float32(0)\n", 3, "rank 1"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = T.exp(1.0, 2.0)\n", 3, "takes 1 argument"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = T.frobnicate(1.0)\n", 3, "unknown function"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = (\n", 3, "syntax"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    try:\n        pass\n    finally:\n        pass\n", 3, "unsupported statement"),
    ("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = T.int64(1)\n", 3, "int64 value into float32"),
    ("@T.prim_func\ndef f(A):\n    pass\n", 2, "needs a type"),
    ("x = 1\n", 1, "expected"),
])
def test_bad_input_raises_parse_error_with_position(text, line, fragment):
    with pytest.raises(tir.ParseError) as info:
        tir.parse(text)
    assert info.value.line == line
    assert fragment in info.value.message


def test_unknown_module_reference_is_reported():
    text = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((4,), dtype="float32")):
        cls = Module
        with R.dataflow():
            y = R.call_tir(cls.missing, (x,), out_ty=R.Tensor((4,), dtype="float32"))
            R.output(y)
        return y
'''
    with pytest.raises(tir.ParseError, match="no function 'missing'"):
        tir.parse(text)

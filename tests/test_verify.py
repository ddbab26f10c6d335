"""tir.verify: the corpus is well formed; each kind of defect is reported with its place."""
from __future__ import annotations

import attrs
import pytest

import tir
from tir import dtype as dt
from tir import relax as rx
from corpus_util import CORPUS, corpus_files

Z = tir.const(0, "int64")
FOUR = tir.const(4, "int64")


def _loop(var, body):
    return tir.For(var, Z, FOUR, tir.ForKind.SERIAL, body)


def test_every_corpus_file_verifies():
    files = corpus_files()
    if not files:
        pytest.skip(f"corpus not found at {CORPUS}")
    for path in files:
        tir.verify(tir.parse(path.read_text()))


def test_loop_variable_used_outside_its_loop():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", dt.int64)
    body = tir.seq(_loop(i, tir.BufferStore(A, A[i], (i,))), tir.BufferStore(A, A[i], (i,)))
    with pytest.raises(tir.VerifyError, match="'i' is used outside"):
        tir.verify(tir.prim_func([A], body, func_attrs={"global_symbol": "f"}))


def test_buffer_not_defined():
    A = tir.decl_buffer((4,), "float32", "A")
    tmp = tir.decl_buffer((4,), "float32", "tmp")
    i = tir.Var("i", dt.int64)
    with pytest.raises(tir.VerifyError, match="function 'f'.*buffer 'tmp'"):
        tir.verify(tir.prim_func([A], _loop(i, tir.BufferStore(A, tmp[i], (i,))), func_attrs={"global_symbol": "f"}))


def test_store_dtype_mismatch():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", dt.int64)
    with pytest.raises(tir.VerifyError, match="int64 value into float32 buffer 'A'"):
        tir.verify(tir.prim_func([A], _loop(i, tir.BufferStore(A, i, (i,)))))


def test_variable_bound_twice():
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", dt.int64)
    body = tir.seq(_loop(i, tir.BufferStore(A, A[i], (i,))), _loop(i, tir.BufferStore(A, A[i], (i,))))
    with pytest.raises(tir.VerifyError, match="bound twice"):
        tir.verify(tir.prim_func([A], body))


def _block_func(binding_dtype="int64", region_rank=1):
    A = tir.decl_buffer((4,), "float32", "A")
    i = tir.Var("i", dt.int64)
    v = tir.Var("v", dt.int64)
    iv = tir.IterVar(v, tir.Range(Z, FOUR), tir.IterKind.SPATIAL)
    region = tir.BufferRegion(A, (tir.Range(v, tir.const(1, "int64")),) * region_rank)
    block = tir.Block("b", (iv,), (region,), (region,), tir.BufferStore(A, A[v], (v,)))
    binding = i if binding_dtype == "int64" else tir.Cast(dt.int32, i)
    realize = tir.BlockRealize((binding,), tir.IntImm(dt.bool_, 1), block)
    return tir.prim_func([A], _loop(i, realize))


def test_block_checks():
    tir.verify(_block_func())
    with pytest.raises(tir.VerifyError, match="block 'b'.*bound to a int32"):
        tir.verify(_block_func(binding_dtype="int32"))
    with pytest.raises(tir.VerifyError, match="block 'b'.*rank 1.*2 indices"):
        tir.verify(_block_func(region_rank=2))


def test_graph_checks():
    mod = tir.parse((CORPUS / "ops" / "add_1_1.py").read_text()) if (CORPUS / "ops" / "add_1_1.py").exists() else None
    if mod is None:
        pytest.skip("corpus not found")
    main = mod.main
    block = main.blocks[0]
    call = block.bindings[0].value
    short = attrs.evolve(call, args=call.args[:1])
    broken = attrs.evolve(block, bindings=(rx.Binding(block.bindings[0].var, short),) + block.bindings[1:])
    with pytest.raises(tir.VerifyError, match="takes 3 buffers"):
        tir.verify(mod.with_function("main", attrs.evolve(main, blocks=(broken,))))
    stray = rx.RVar("ghost")
    with pytest.raises(tir.VerifyError, match="'ghost' is used before"):
        tir.verify(mod.with_function("main", attrs.evolve(main, ret=stray)))

"""Reduction nests that run a block instance more than once (a block computed under a loop
it does not depend on, a binding ``(i * 3 + j) // 2``): TVM runs them iteration by
iteration, and an instance met again at its init point starts again. Both engines must give
those numbers (they used to combine every repeat into one sum: found on a TVM-scheduled
instance_norm and group_norm, whose TVM build gives the walk's numbers)."""
from __future__ import annotations

import shutil

import numpy as np
import pytest

import tir
from tir.interp import interpret
from tir.loop_nest import collect_nest
from tir.nest_instances import instances_distinct

ENGINES = ["interp"] + (["c"] if shutil.which("gcc") else [])

REPEATED = """
@T.prim_func
def f(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
    for r, i, k in T.grid(3, 4, 6):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk]
"""
"""Loop ``r`` feeds nothing: each row's sum is computed three times, from its init each time
(the same numbers as once: the engines may run it either way)."""

INTERLEAVED = """
@T.prim_func
def f(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
    for i, k, r in T.grid(4, 6, 2):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk]
"""
"""``r`` inside the reduction: the init runs twice at k = 0, every later step adds twice."""

COARSE = """
@T.prim_func
def f(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
    for io, k, ii in T.grid(4, 6, 2):
        with T.block("C"):
            vi = T.axis.spatial(4, (io * 2 + ii) // 2)
            vk = T.axis.reduce(6, k)
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk]
"""
"""Two iterations bind each row (``// 2``), inside the reduction: as INTERLEAVED."""


def walk_semantics(text, a):
    """TVM's numbers: the plain scalar walk, re-implemented for these three forms."""
    if text is not REPEATED:
        return a[:, 0] + 2 * a[:, 1:].sum(axis=1)
    return a.sum(axis=1)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text", [REPEATED, INTERLEAVED, COARSE], ids=["repeated", "interleaved", "coarse"])
def test_engines_give_the_walks_numbers(text, engine):
    f = tir.parse(text)
    a = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    out = np.full(4, 5.0, np.float32)
    if engine == "interp":
        interpret(f, a, out)
    else:
        tir.build(f)(a, out)
    walked = np.full(4, 5.0, np.float32)
    interpret(f, a, walked, vectorize=False)
    np.testing.assert_allclose(out, walked, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, walk_semantics(text, a), rtol=1e-5, atol=1e-6)


SPLIT_FUSED = """
@T.prim_func
def f(A: T.Buffer((4, 6), "float32"), C: T.Buffer((4,), "float32")):
    for fused, ko, ki in T.grid(4, 2, 3):
        with T.block("C"):
            vi = T.axis.spatial(4, fused % 4)
            vk = T.axis.reduce(6, ko * 3 + ki)
            with T.init():
                C[vi] = T.float32(0.0)
            C[vi] = C[vi] + A[vi, vk]
"""


@pytest.mark.parametrize("text,want", [(SPLIT_FUSED, True), (REPEATED, False), (INTERLEAVED, False),
                                       (COARSE, False)])
def test_instances_distinct_reads_the_bindings(text, want):
    f = tir.parse(text)
    loop = next(s for s in [f.body, getattr(f.body, "block", None) and f.body.block.body] if s is not None
                and type(s).__name__ == "For")
    nest = collect_nest(loop)
    assert nest is not None and instances_distinct(nest) is want

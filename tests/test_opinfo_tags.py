"""Compute tags read through the block renaming of printing and schedule primitives."""
from __future__ import annotations

import random

import pytest
import tir

import opinfo
from opinfo.tags import tag
from schedule_more import PRIMITIVES


@pytest.mark.parametrize("name, want", [
    ("T_einsum", "T_einsum"), ("T_einsum_update", "T_einsum"), ("T_einsum_init", "T_einsum"),
    ("T_split_sections_2", "T_split_sections"), ("x_red_rf", "x_red"), ("compute_o", "compute"),
    ("adaptive_pool_sum_1", "adaptive_pool_sum"), ("conv2d_nchw", "conv2d_nchw")])
def test_tag(name, want):
    assert tag(name) == want


def test_tag_after_cache_write():
    """A copy op whose name only its tag tells (squeeze vs reshape) keeps it when its output
    is computed into a ``_local`` cache and copied out: the cache copy is not a tag."""
    func = tir.topi.lower("squeeze", [((1, 7), "float32")], axis=[0])
    before = opinfo.analyze(func).ops
    cached = PRIMITIVES["cache_write"](func, random.Random(0))
    assert len(list(cached.blocks())) == 2
    assert [o.name for o in before] == ["squeeze"]
    assert opinfo.analyze(cached).ops == before


def test_foreign_tag_after_decompose_reduction():
    """einsum lowers to matmul's loops; its tag makes opinfo abstain, also once the
    reduction is decomposed into ``T_einsum_init`` and ``T_einsum_update``."""
    func = tir.topi.lower("matmul", [((4, 8), "float32"), ((8, 6), "float32")])
    renamed = tir.functor.transform(func, lambda n: None, lambda n: _rename(n, "T_einsum"))
    assert opinfo.analyze(renamed).ops == ()
    decomposed = PRIMITIVES["decompose_reduction"](renamed, random.Random(0))
    assert {b.name for b in decomposed.blocks()} == {"T_einsum_init", "T_einsum_update"}
    assert opinfo.analyze(decomposed).ops == ()
    assert [o.name for o in opinfo.analyze(PRIMITIVES["decompose_reduction"](func, random.Random(0))).ops] == ["matmul"]


def _rename(node, name):
    import attrs
    from tir.stmt import Block

    if isinstance(node, Block) and node.name != "root":
        return attrs.evolve(node, name=name)
    return None

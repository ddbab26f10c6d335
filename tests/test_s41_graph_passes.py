"""Graph-level passes on large mains: each kernel analysed once per flow, outlining linear in
the bindings, and Map copies that share what is already frozen."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from byoc import memoized, partition, summary
from opinfo import analyze_in_network
from tir.node import Map
from tir.topi.examples import resnet_block_example

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from graph_scaling import side_by_side  # noqa: E402


def _counting():
    calls: list = []

    def analyze(func):
        calls.append(func)
        return analyze_in_network(func)

    return analyze, calls


def test_partition_and_summary_analyse_each_kernel_once():
    pytest.importorskip("onnx")
    mod = resnet_block_example()
    raw, calls = _counting()
    an = memoized(raw)
    part = partition(mod, "onnxruntime", analyze=an, codegen=False)
    summary(part, an)
    assert len(calls) == len({id(f) for f in calls})
    assert len(calls) <= len(mod.prim_funcs())
    assert memoized(an) is an  # wrapping twice does not stack caches


def test_side_by_side_network_partitions_into_twice_the_regions():
    pytest.importorskip("onnx")
    mod = resnet_block_example()
    an = memoized()
    one = summary(partition(mod, "onnxruntime", analyze=an, codegen=False), an)
    two = summary(partition(side_by_side(mod), "onnxruntime", analyze=an, codegen=False), an)
    assert len(one["regions"]) > 0
    assert len(two["regions"]) == 2 * len(one["regions"])
    assert sorted(len(r["ops"]) for r in two["regions"]) == sorted(2 * [len(r["ops"]) for r in one["regions"]])
    assert len(two["kept"]) == 2 * len(one["kept"])


def test_map_copies_share_frozen_values_and_never_mutate():
    m = Map({"a": [1, 2], "b": {"c": [3]}})
    assert m["a"] == (1, 2) and isinstance(m["b"], Map)
    same = Map(m)
    assert same == m and hash(same) == hash(m)
    grown = m.set("d", [4, 5])
    assert grown["d"] == (4, 5) and "d" not in m
    assert grown.without("a") == Map({"b": {"c": [3]}, "d": [4, 5]})
    assert m == Map({"a": (1, 2), "b": Map({"c": (3,)})})


def test_functions_named_like_their_module_survive_the_module_import():
    import importlib
    import types

    import byoc
    import layout

    importlib.import_module("byoc.pipeline")  # imports byoc.match, byoc.merge_composite, ...
    importlib.import_module("layout.planner")
    for pkg, name in ((byoc, "match"), (byoc, "merge_composite"), (byoc, "annotate_target"),
                      (byoc, "partition_graph"), (byoc, "run_codegen"), (layout, "layout")):
        for _ in range(2):  # the first access imported the module too
            assert callable(getattr(pkg, name)) and not isinstance(getattr(pkg, name), types.ModuleType), (pkg, name)
    import tir

    assert isinstance(tir.topi, types.ModuleType)  # a submodule without a same-named attribute stays itself

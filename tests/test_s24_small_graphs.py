"""A small graph (``main`` calling a few distinct kernels: an op lowered on its own, the
kernels FuseOps leaves for a handful of ops) is read as a whole, and it is no network: the
importers' conventions (a pool's ceil_mode, resize's rounding_method) are not its own."""
from __future__ import annotations

import json
import subprocess
import sys
from math import erf
from pathlib import Path

import numpy as np

import tir
from opinfo.api import analyze_module
from opinfo.graph_context import NETWORK_CALLS, is_network
from tests.fixture_util import FIXTURES
from tir.topi.graph import GraphBuilder

ROOT = Path(__file__).resolve().parents[1]


def _relu_pool(pool_twice: bool = False):
    """relu then a max pool whose ceil_mode the loops leave open: padded after by one, or
    not padded and ceil_mode (TVM pads by stride - 1 more then), the same loops."""
    g = GraphBuilder()
    x = g.input("x", (1, 2, 8, 8))
    y = g.relu(x)
    outs = [g.max_pool2d(y, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 1, 1])]
    if pool_twice:
        outs.append(g.max_pool2d(y, pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 1, 1]))
    return g.build(*outs)


def _names(infos):
    return {name: [o.name for o in info.ops] for name, info in infos.items()}


def test_is_network():
    assert not is_network([1]) and not is_network([1, 1, 1])
    assert is_network([1, 2])  # a kernel shared by two call sites: a layer repeated
    assert is_network([1] * NETWORK_CALLS) and not is_network([1] * (NETWORK_CALLS - 1))


def test_a_kernel_that_abstains_withholds_the_others():
    mod = _relu_pool()
    infos = analyze_module(mod)
    assert len(infos) == 2 and all(info.ops == () for info in infos.values())
    (relu,) = [info for info in infos.values() if info.withheld]
    assert [o.name for o in relu.withheld] == ["nn.relu"]
    (pool,) = [info for info in infos.values() if not info.withheld]
    assert [o.name for o in pool.undecided] == ["nn.max_pool2d"]  # ceil_mode left open
    assert relu.to_json()["withheld"][0]["op"] == "nn.relu" and relu.to_json()["ops"] == []


def test_in_a_network_each_kernel_stands_alone():
    """The pool called twice: a network; ceil_mode takes the importers' convention and
    relu keeps its answer."""
    infos = analyze_module(_relu_pool(pool_twice=True))
    names = sorted(n for ops in _names(infos).values() for n in ops)
    assert names == ["nn.max_pool2d", "nn.relu"]
    (pool,) = [info for info in infos.values() if info.ops and info.ops[0].name == "nn.max_pool2d"]
    assert pool.ops[0].attrs["ceil_mode"] is False and "ceil_mode" in pool.ops[0].assumed


def test_a_small_graph_read_whole_is_reported_whole():
    g = GraphBuilder()
    x = g.input("x", (2, 6))
    w = g.input("w", (6, 4))
    y = g.softmax(g.relu(g.matmul(x, w)), axis=-1)
    infos = analyze_module(g.build(y))
    assert sorted(n for ops in _names(infos).values() for n in ops) == ["matmul", "nn.relu", "nn.softmax"]
    assert not any(info.withheld for info in infos.values())


def test_resize_in_a_small_graph_keeps_relax_default_rounding():
    """Inside a network the ONNX importer's nearest_mode is reported for a linear resize; a
    graph of two kernels is no network: Relax's default ``round`` stands."""
    g = GraphBuilder()
    x = g.input("x", (1, 2, 4, 4))
    y = g.call("image.resize2d", g.relu(x), size=[8, 8], layout="NCHW", method="linear",
               coordinate_transformation_mode="half_pixel", rounding_method="round")
    infos = analyze_module(g.build(y))
    (resize,) = [o for info in infos.values() for o in info.ops if o.name == "image.resize2d"]
    assert resize.attrs["rounding_method"] == "round" and not resize.assumed


def test_withheld_kernels_still_run(tmp_path):
    """Withholding is about the report only: the module runs as before."""
    mod = _relu_pool()
    x = np.random.default_rng(0).standard_normal((1, 2, 8, 8)).astype("float32")
    got = tir.run(mod, x)
    want = np.maximum(x, 0).reshape(1, 2, 4, 2, 4, 2).max(axis=(3, 5))
    np.testing.assert_allclose(got, want)


def test_cli_says_withheld(tmp_path):
    path = tmp_path / "small_graph.py"
    path.write_text(tir.to_script(_relu_pool()))
    run = lambda *a: subprocess.run([sys.executable, "-m", "opinfo", "analyze", str(path), *a],
                                    capture_output=True, text=True, cwd=ROOT)
    table = run()
    assert table.returncode == 0, table.stderr
    assert "(withheld: nn.relu" in table.stdout and "withheld: not reported" in table.stdout
    (rec,) = [json.loads(line) for line in run("--json").stdout.splitlines()]
    assert all(fn["ops"] == [] for fn in rec["functions"])
    assert [fn.get("withheld", [{}])[0].get("op") for fn in rec["functions"]].count("nn.relu") == 1


def test_a_graph_names_sum_where_collapse_sum_to_lowers_the_same():
    """sum with keepdims then divide: FuseOps leaves two kernels. The sum alone abstains
    (collapse_sum_to computes the same); in a graph of several kernels it is the forward op,
    and the graph is read whole. Its ceil_mode-like attribute conventions stay a network's."""
    g = GraphBuilder()
    x = g.input("x", (2, 5))
    s = g.sum(x, axis=[1], keepdims=True)
    infos = analyze_module(g.build(g.divide(x, s)))
    ops = [o for info in infos.values() for o in info.ops]
    assert sorted(o.name for o in ops) == ["divide", "sum"]
    (total,) = [o for o in ops if o.name == "sum"]
    assert total.assumed == ("op",) and list(total.attrs["axis"]) == [1] and total.attrs["keepdims"] is True
    alone = GraphBuilder()
    y = alone.input("x", (2, 5))
    (info,) = analyze_module(alone.build(alone.sum(y, axis=[1], keepdims=True))).values()
    assert info.ops == () and [o.name for o in info.undecided] == ["sum"]


def test_a_product_written_by_its_own_block_is_multiply_then_sum():
    """x[i, k] * x1[k] summed over k is what matmul computes, but TVM's matmul is one block:
    FuseTIR's kernel of multiply then sum keeps the product's block, so the loops show the
    two ops (it was read as matmul before). The fixture is TVM 0.27's fused kernel."""
    mod = tir.parse((FIXTURES / "s24_fused_multiply_sum.py").read_text())
    infos = analyze_module(mod)
    ops = infos["fused_multiply_sum"].ops
    assert [o.name for o in ops] == ["multiply", "sum"]
    assert list(ops[1].attrs["axis"]) == [1] and ops[1].attrs["keepdims"] is False
    assert [o.name for o in infos["erf"].ops] == ["erf"]
    rng = np.random.default_rng(1)
    x, x1 = rng.standard_normal((3, 5)).astype("float32"), rng.standard_normal(5).astype("float32")
    want = np.array([erf(v) for v in (x * x1).sum(axis=1)], dtype="float32")
    np.testing.assert_allclose(tir.run(mod, x, x1), want, rtol=1e-5, atol=1e-6)


def test_size_is_one_op_of_its_two_kernels():
    # R.size(x) legalizes to shape_of, a shape_to_tensor kernel and a prod over it (TVM 0.27)
    mod = tir.parse((FIXTURES / "s25_size_graph.py").read_text())
    infos = analyze_module(mod)
    assert [op.name for info in infos.values() for op in info.ops] == ["size"]
    assert infos["prod"].ops[0].attrs == {}
    (shape,) = [name for name in infos if name != "prod"]
    assert infos[shape].part_of == "prod" and infos[shape].to_json()["part_of"] == "prod"


def test_size_table_names_the_kernel_that_holds_the_op(capsys):
    from opinfo.cli import main

    assert main(["analyze", str(FIXTURES / "s25_size_graph.py")]) == 0
    out = capsys.readouterr().out
    assert "(part of the op of prod)" in out and "not recognized" not in out


def test_a_shape_product_of_another_use_is_not_size():
    # the shape tensor also returned: the product is of a tensor main uses elsewhere
    text = (FIXTURES / "s25_size_graph.py").read_text()
    old_bind, old_ret = 'gv: R.Tensor((), dtype="int64") = lv_1', '-> R.Tensor((), dtype="int64"):'
    assert old_bind in text and old_ret in text
    text = text.replace(old_bind, "gv = (lv_1, lv1)")
    text = text.replace(old_ret, '-> R.Tuple(R.Tensor((), dtype="int64"), R.Tensor((2,), dtype="int64")):')
    infos = analyze_module(tir.parse(text))
    assert "size" not in [op.name for info in infos.values() for op in info.ops]

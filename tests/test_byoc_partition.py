"""byoc passes: composites, targets, regions without cycles, partitioning, codegen, execution."""
from pathlib import Path

import numpy as np
import pytest

import tir
from tir import relax as R
from tir.topi.graph import GraphBuilder

pytest.importorskip("onnxruntime")

import byoc  # noqa: E402
from byoc.onnx_backend import OnnxRuntimeBackend  # noqa: E402
from opinfo.info import FuncInfo  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def _inputs(mod, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal([int(d) for d in p.type.shape]).astype("float32") for p in mod.main.params]


def _small():
    g = GraphBuilder()
    x = g.input("x", (1, 4, 8, 8))
    w = g.input("w", (8, 4, 3, 3))
    b = g.input("b", (1, 8, 1, 1))
    y = g.relu(g.add(g.conv2d(x, w, padding=[1, 1, 1, 1]), b))
    return g.build(g.sigmoid(g.conv2d(y, g.input("w2", (8, 8, 1, 1)))))


def _same_numbers(a, b, tol=1e-4):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def test_each_pass_keeps_the_module_runnable():
    mod = _small()
    args = _inputs(mod)
    ref = tir.run(mod, *args)
    be = OnnxRuntimeBackend()
    step = byoc.merge_composite(mod, be.patterns())
    composites = [n for n, f in step.graph_funcs() if "Composite" in f.attrs]
    assert len(composites) == 2
    _same_numbers(tir.run(step, *args), ref)
    step = byoc.annotate_target(step, be)
    assert all(step[n].attrs.get("Target") == "onnxruntime" for n in composites)
    step = byoc.merge_compiler_regions(step)
    assert {step[n].attrs["Region"] for n in composites} == {"onnxruntime_0"}
    step = byoc.partition_graph(step)
    region = step["onnxruntime_0"]
    assert dict(region.attrs) == {"Compiler": "onnxruntime", "global_symbol": "onnxruntime_0"}
    _same_numbers(tir.run(step, *args), ref)
    step = byoc.run_codegen(step)
    assert any(isinstance(b.value, R.CallDPSPacked) for b in step.main.bindings)
    assert "onnxruntime_0" in step.attrs["external_mods"]
    _same_numbers(tir.run(step, *args), ref)


def _diamond():
    """a = relu(x); b = round(a) (no ONNX converter: ONNX rounds half to even); c = add(a, b)."""
    g = GraphBuilder()
    x = g.input("x", (2, 3))
    a = g.relu(x)
    b = g.round(a)
    return g.build(g.exp(g.add(a, b)))


def test_regions_do_not_merge_through_an_unsupported_op():
    mod = _diamond()
    part = byoc.partition(mod, "onnxruntime")
    info = byoc.summary(part)
    assert len(info["regions"]) == 2
    assert [list(k["ops"]) for k in info["kept"]] == [["round"]]
    assert "no ONNX converter" in info["kept"][0]["reason"]
    args = _inputs(mod)
    _same_numbers(tir.run(part, *args), tir.run(mod, *args))


def test_nothing_is_offloaded_on_an_abstained_recognition():
    from opinfo import analyze

    mod = _small()

    def abstain_on_relu(func):
        info = analyze(func)
        if any(op.name == "nn.relu" for op in info.ops):
            return FuncInfo(info.name, info.kind, ())
        return info

    part = byoc.partition(mod, "onnxruntime", analyze=abstain_on_relu)
    info = byoc.summary(part, analyze=abstain_on_relu)
    offloaded = [op["op"] for r in info["regions"] for op in r["ops"]]
    assert "nn.relu" not in offloaded and offloaded.count("nn.conv2d") == 2
    assert any("did not recognise" in k["reason"] for k in info["kept"])
    args = _inputs(mod)
    _same_numbers(tir.run(part, *args), tir.run(mod, *args))


def test_only_selected_patterns_with_pattern_names():
    part = byoc.partition(_small(), "onnxruntime", patterns=["conv_bn_act"])
    ops = [op["op"] for r in byoc.summary(part)["regions"] for op in r["ops"]]
    assert "sigmoid" in ops  # conv -> sigmoid is a conv_bn_act chain
    with pytest.raises(KeyError, match="no pattern"):
        byoc.partition(_small(), "onnxruntime", patterns=["nope"])


def test_printed_module_rebuilds_its_external_modules():
    mod = _small()
    part = byoc.partition(mod, "onnxruntime")
    text = tir.to_script(byoc.strip_externals(part))
    again = tir.parse(text)
    ext = byoc.load_externals(again)
    args = _inputs(mod)
    _same_numbers(tir.run(again, *args, registry=ext), tir.run(mod, *args))


def test_partitioned_module_prints_without_stripping_its_externals():
    part = byoc.partition(_small(), "onnxruntime")
    assert "external_mods" in part.attrs
    text = tir.to_script(part)
    assert "'external_mods' holds compiled objects and is not printed" in text
    assert tir.structural_equal(tir.parse(text), tir.parse(tir.to_script(byoc.strip_externals(part))))


UNLOWERED = """
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((5, 8), dtype="float32")) -> R.Tensor((5, 8), dtype="float32"):
        with R.dataflow():
            lv: R.Tensor((5, 8), dtype="float32") = R.sort(x, axis=-1, descending=False)
            gv: R.Tensor((5, 8), dtype="float32") = lv
            R.output(gv)
        return gv
"""


def test_unlowered_relax_call_is_listed_as_kept():
    part = byoc.partition(tir.parse(UNLOWERED), "onnxruntime")
    (kept,) = byoc.summary(part)["kept"]
    assert kept["func"] == "R.sort" and kept["ops"] == ["sort"] and "not lowered" in kept["reason"]


def test_c_backend_region_is_one_compiled_function():
    import shutil

    if shutil.which("gcc") is None:
        pytest.skip("no gcc")
    mod = _small()
    part = byoc.partition(mod, "c")
    ext = part.attrs["external_mods"]
    assert list(ext) == ["c_0"] and "void byoc_c_0(void** args)" in ext["c_0"].source
    args = _inputs(mod)
    _same_numbers(tir.run(part, *args), tir.run(mod, *args))


def test_resnet50_every_conv_offloaded_and_same_result():
    import shutil

    path = CORPUS / "models" / "resnet50.py"
    if not path.exists():
        pytest.skip("corpus not available")
    if shutil.which("gcc") is None:
        pytest.skip("no gcc for the C engine")
    mod = tir.parse(path.read_text())
    part = byoc.partition(mod, "onnxruntime")
    info = byoc.summary(part)
    n_conv = sum(1 for r in info["regions"] for op in r["ops"] if op["op"] == "nn.conv2d")
    n_bn = sum(1 for r in info["regions"] for op in r["ops"] if op["op"] == "nn.batch_norm")
    assert n_conv == 53 and n_bn == 53
    assert all("nn.conv2d" not in k["ops"] for k in info["kept"])
    rng = np.random.default_rng(0)
    args = []
    for p in mod.main.params:
        shape = tuple(int(d) for d in p.type.shape)
        if not p.type.dtype.is_float:
            args.append(np.ones(shape, p.type.dtype.numpy))
        elif len(shape) >= 2 and p is not mod.main.params[0]:
            args.append((rng.standard_normal(shape) / np.sqrt(np.prod(shape[1:]))).astype("float32"))
        elif p.name.endswith(("_riv_0", "_s_0")):
            args.append(rng.uniform(0.5, 1.0, shape).astype("float32"))
        else:
            args.append((rng.standard_normal(shape) * 0.1).astype("float32"))
    _same_numbers(tir.run(part, *args, engine="c"), tir.run(mod, *args, engine="c"), tol=1e-4)


@pytest.mark.parametrize("case", ["fused_conv2d_add_relu_1", "nn_conv2d_1_0", "matmul_1_0"])
def test_corpus_cases_offloaded_give_tvm_numbers(case):
    ops = CORPUS / "ops"
    if not (ops / f"{case}.py").exists():
        pytest.skip("corpus case not available")
    mod = tir.parse((ops / f"{case}.py").read_text())
    part = byoc.partition(mod, "onnxruntime")
    if not byoc.summary(part)["regions"]:
        pytest.skip(f"{case}: not recognised by opinfo here")
    data = np.load(ops / f"{case}.npz")
    out = tir.run(part, *[data[f"arr_{i}"] for i in range(len(mod.main.params))])
    _same_numbers(out, data["out"])

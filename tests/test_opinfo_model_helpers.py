"""Forms TVM's Relax ONNX frontend adds around a model's ops (synthetic ONNX graphs built by
tools/tvm_oracle/gen_graphs.py): a layer norm's ``x + 1e-6`` (an add, no leakyrelu of slope
0.9999995), the scalar ``where``/``isnan`` of a Clip's bounds (rank 0), and an analysis that
fails on one function (reported for its file; the other files are analysed)."""
from __future__ import annotations

import json

from tir.parser import parse
from opinfo.api import analyze
from opinfo.cli import analyze as cli_analyze

_ADD_EPS = """
@T.prim_func
def add(x: T.Buffer((2, 5, 1), "float32"), y: T.Buffer((2, 5, 1), "float32")):
    for a, b, c in T.grid(2, 5, 1):
        with T.block("T_add"):
            va, vb, vc = T.axis.remap("SSS", [a, b, c])
            y[va, vb, vc] = x[va, vb, vc] + T.float32(9.9999999747524271e-07)
"""

_LEAKY = """
@T.prim_func
def leaky_relu(x: T.Buffer((2, 5), "float32"), y: T.Buffer((2, 5), "float32")):
    for a, b in T.grid(2, 5):
        with T.block("compute"):
            va, vb = T.axis.remap("SS", [a, b])
            y[va, vb] = T.Select(T.float32(0.0) < x[va, vb], x[va, vb], x[va, vb] * T.float32(0.1))
"""

_SCALAR_WHERE = """
@T.prim_func
def where(c: T.Buffer((), "bool"), a: T.Buffer((), "float32"), b: T.Buffer((), "float32"), y: T.Buffer((), "float32")):
    with T.block("T_where"):
        vi = T.axis.spatial(1, 0)
        y[()] = T.Select(T.int64(0) < T.Cast("int64", c[()]), a[()], b[()])
"""


def _named(text):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(parse(text)).ops]


def test_a_small_constant_added_is_add_not_leakyrelu():
    assert _named(_ADD_EPS) == [("add", {})]
    assert _named(_LEAKY) == [("nn.leakyrelu", {"alpha": 0.1})]


def test_scalar_where_is_where():
    assert _named(_SCALAR_WHERE) == [("where", {})]


def test_an_analysis_error_is_reported_for_its_file(tmp_path, monkeypatch, capsys):
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(_ADD_EPS)
    bad.write_text(_LEAKY)
    import opinfo.api

    real = opinfo.api.analyze

    def failing(func, name=None, context=None, **kwargs):
        if func.name == "leaky_relu":
            raise RuntimeError("boom")
        return real(func, name, context, **kwargs)

    monkeypatch.setattr(opinfo.api, "analyze", failing)
    recs = {r["file"]: r for r in (cli_analyze.analyze_file(str(p)) for p in (bad, good))}
    assert "internal error" in recs[str(bad)]["error"] and "boom" in recs[str(bad)]["error"]
    assert recs[str(good)]["functions"][0]["ops"][0]["op"] == "add"
    json.dumps(recs[str(bad)])


_MAX0 = """
@T.prim_func
def f(x: T.Buffer((2, 6), "float32"), y: T.Buffer((2, 6), "float32")):
    for a, b in T.grid(2, 6):
        with T.block("{tag}"):
            va, vb = T.axis.remap("SS", [a, b])
            y[va, vb] = T.max(x[va, vb], T.float32(0.0))
"""


def test_max_with_zero_is_named_by_its_tag():
    # relu's block is TVM's "compute", maximum(x, 0.0)'s is "T_maximum": the same values
    assert _named(_MAX0.format(tag="compute")) == [("nn.relu", {})]
    info = analyze(parse(_MAX0.format(tag="T_maximum")))
    assert [(o.name, o.to_json()["attrs"], [r.role for r in o.operands]) for o in info.ops] == \
        [("maximum", {}, ["lhs"])]


_REVERSE = """
@T.prim_func
def f(x: T.Buffer((6, 6, 8), "float32"), y: T.Buffer((6, 6, 8), "float32")):
    for a, b, c in T.grid(6, 6, 8):
        with T.block("{tag}"):
            va, vb, vc = T.axis.remap("SSS", [a, b, c])
            y[va, vb, vc] = x[va, 5 - vb, vc]
"""


def test_a_whole_reversing_slice_is_not_called_flip():
    # strided_slice(begin=5, end=-7, strides=-1) is flip's loop; its end is not seen
    assert _named(_REVERSE.format(tag="T_reverse_sequence")) == [("flip", {"axis": 1})]
    assert _named(_REVERSE.format(tag="T_strided_slice_with_axes")) == []


_ONE_PIXEL = """
@T.prim_func
def f(x: T.Buffer((1, 4, 1, 1), "float32"), y: T.Buffer((1, 4, 2, 2), "float32")):
    for a, b, c, d in T.grid(1, 4, 2, 2):
        with T.block("{tag}"):
            va, vb, vc, vd = T.axis.remap("SSSS", [a, b, c, d])
            y[va, vb, vc, vd] = x[va, vb, 0, 0]
"""


def test_a_resize_of_one_pixel_is_not_called_broadcast_to():
    # TVM simplifies resize2d of a 1x1 image to a broadcast; its method is not in the loops
    assert _named(_ONE_PIXEL.format(tag="T_broadcast_to")) == [("broadcast_to", {"shape": [1, 4, 2, 2]})]
    assert _named(_ONE_PIXEL.format(tag="resize")) == []


_SCALED = """
@T.prim_func
def f(x: T.Buffer((2, 6), "float32"), y: T.Buffer((2, 6), "float32")):
    for a, b in T.grid(2, 6):
        with T.block("{tag}"):
            va, vb = T.axis.remap("SS", [a, b])
            y[va, vb] = {value}
"""


def test_scalar_arithmetic_is_named_by_its_tag():
    neg = "T.float32(-1.0) * x[va, vb]"
    assert _named(_SCALED.format(tag="compute", value=neg)) == [("negative", {})]
    assert _named(_SCALED.format(tag="T_multiply", value=neg)) == [("multiply", {})]
    sq = "T.pow(x[va, vb], T.float32(2.0))"
    assert _named(_SCALED.format(tag="T_power", value=sq)) == [("power", {})]
    # x * x is square's own form (TVM names its block T_multiply too): no constant, kept
    assert _named(_SCALED.format(tag="T_multiply", value="x[va, vb] * x[va, vb]")) == [("square", {})]

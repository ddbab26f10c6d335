"""opinfo recognition: round trips through tir.topi and agreement with the TVM corpus."""
import json
from pathlib import Path

import pytest

import tir
from opinfo.api import analyze

CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus"


def _ops(func):
    return [(o.name, o.to_json()["attrs"]) for o in analyze(func).ops]


@pytest.mark.parametrize("op,attrs", [
    ("exp", {}), ("nn.gelu", {}), ("nn.silu", {}), ("nn.leakyrelu", {"alpha": 0.2}),
    ("clip", {"min": -1.0, "max": 6.0}),
])
def test_unary_round_trip(op, attrs):
    f = tir.topi.lower(op, [((4, 3), "float32")], **attrs)
    name, got = _ops(f)[0]
    assert name == op and all(got[k] == pytest.approx(v) for k, v in attrs.items())


@pytest.mark.parametrize("op", ["add", "subtract", "multiply", "maximum", "power", "less"])
def test_binary_round_trip(op):
    f = tir.topi.lower(op, [((4, 3), "float32"), ((3,), "float32")])
    assert _ops(f)[0][0] == op


@pytest.mark.parametrize("op,attrs", [
    ("sum", {"axis": [1], "keepdims": False}), ("mean", {"axis": [0, 2], "keepdims": True}),
    ("variance", {"axis": [1], "keepdims": False}), ("argmax", {"axis": 1, "keepdims": False}),
])
def test_reduce_round_trip(op, attrs):
    f = tir.topi.lower(op, [((4, 3, 5), "float32")], **attrs)
    assert _ops(f) == [(op, attrs)]


def test_conv2d_round_trip():
    attrs = dict(strides=[2, 1], padding=[1, 0, 2, 1], dilation=[1, 2], groups=2)
    f = tir.topi.lower("nn.conv2d", [((1, 8, 10, 10), "float32"), ((4, 4, 3, 3), "float32")], **attrs)
    name, got = _ops(f)[0]
    assert name == "nn.conv2d"
    assert {k: got[k] for k in attrs} == attrs


def test_corpus_kinds_match_tvm():
    idx = CORPUS / "ops" / "index.json"
    if not idx.exists():
        pytest.skip("corpus not available")
    cases = json.loads(idx.read_text())["cases"]
    for case in cases[::5]:
        mod = tir.parse((CORPUS / "ops" / f"{case['id']}.py").read_text())
        for name, kind in case["tvm_kind"].items():
            assert analyze(mod[name], name).kind == kind, case["id"]

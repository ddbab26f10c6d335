"""nn.attention recognised as one op from the whole PrimFunc TVM legalizes it to."""
from __future__ import annotations

from pathlib import Path

import pytest

import opinfo
import tir

FIXTURES = Path(__file__).parent / "fixtures"


def _analyze(text: str):
    return opinfo.analyze(tir.parse(text))


def _text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_plain_attention_default_scale():
    info = _analyze(_text("attention_plain.py"))
    (op,) = info.ops
    assert op.name == "nn.attention"
    assert dict(op.attrs) == {"scale": None, "causal_mask": None, "window_size": None}
    assert [(o.role, o.param) for o in op.operands] == [("query", 0), ("key", 1), ("value", 2)]
    assert info.kind == "out_ewise_fusable"


def test_bottom_right_mask_and_explicit_scale():
    (op,) = _analyze(_text("attention_bottom_right.py")).ops
    assert dict(op.attrs) == {"scale": 0.5, "causal_mask": "BottomRight", "window_size": None}


def test_scale_is_read_from_the_ir():
    text = _text("attention_bottom_right.py")
    assert text.count("T.float32(0.5)") == 1
    (op,) = _analyze(text.replace("T.float32(0.5)", "T.float32(0.25)")).ops
    assert op.attrs["scale"] == 0.25


@pytest.mark.parametrize("edit", [
    ("T.exp(", "T.exp2("),                         # not a softmax any more
    ("T.sqrt(T.float32(4.0))", "T.sqrt(T.float32(5.0))"),  # default scale needs sqrt(head_dim)
])
def test_anything_else_abstains(edit):
    text = _text("attention_plain.py")
    assert edit[0] in text
    assert _analyze(text.replace(*edit)).ops == ()


def test_json_record():
    (op,) = _analyze(_text("attention_plain.py")).ops
    assert op.to_json()["attrs"] == {"scale": None, "causal_mask": None, "window_size": None}

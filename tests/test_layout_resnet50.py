"""Planning the corpus ResNet-50 to NHWC (plan and re-analysis only; the numeric check runs
in benchmarks/plan_resnet50.py, about 20 s with the C engine)."""
from pathlib import Path

import pytest

import tir
from layout.planner import plan
from opinfo import analyze_module

MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "models" / "resnet50.py"


@pytest.fixture(scope="module")
def planned():
    if not MODEL.exists():
        pytest.skip("corpus not available")
    mod = tir.parse(MODEL.read_text())
    return mod, *plan(mod, {"nn.conv2d": ("NHWC", "OHWI"), "nn.max_pool2d": "NHWC"})


def test_every_conv_and_recognized_pool_is_nhwc(planned):
    mod, new, summary = planned
    used = {b.value.func.name for b in new.main.bindings if hasattr(b.value, "func")}
    seen = 0
    infos = analyze_module(new)  # the planned network's main is the context (its pools' ceil_mode)
    for name in used:
        for op in infos[name].ops:
            if op.name in ("nn.conv2d", "nn.max_pool2d", "nn.avg_pool2d"):
                seen += 1
                assert (op.attrs.get("data_layout") or op.attrs.get("layout")) == "NHWC", name
    assert seen >= 24  # 23 distinct convolutions and the average pool at least


def test_at_most_four_activation_transforms(planned):
    _, _, summary = planned
    acts = summary.activation_transforms()
    assert len(acts) <= 4, [t.to_json() for t in acts]
    weights = [t for t in summary.transforms if t.kind == "weight"]
    assert len(weights) == 53 and all(t.foldable for t in weights)


def test_signature_and_output_type_kept(planned):
    mod, new, _ = planned
    assert [p.name for p in new.main.params] == [p.name for p in mod.main.params]
    assert new.main.ret_type == mod.main.ret_type

"""``opinfo analyze --dot``: the op graph with offloaded regions and layout transforms marked."""
import subprocess
import sys
from pathlib import Path

import pytest

import tir
from tir.topi.examples import resnet_block_example

ROOT = Path(__file__).resolve().parents[1]


def opinfo(*args):
    return subprocess.run([sys.executable, "-m", "opinfo", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def example(tmp_path_factory):
    path = tmp_path_factory.mktemp("dot") / "net.py"
    path.write_text(tir.to_script(resnet_block_example()))
    return path


def test_dot_of_a_lowered_module_has_one_node_per_call(example):
    p = opinfo("analyze", str(example), "--dot")
    assert p.returncode == 0, p.stderr
    text = p.stdout
    assert text.startswith("digraph") and text.rstrip().endswith("}")
    assert text.count("->") >= 16
    assert "nn.conv2d" in text and "nn.max_pool2d" in text
    assert "cluster" not in text


def test_dot_marks_layout_transforms_and_offloaded_regions(example, tmp_path):
    planned, offloaded = tmp_path / "nhwc.py", tmp_path / "c.py"
    assert opinfo("plan", str(example), "--layout", "nn.conv2d=NHWC:OHWI", "-o", str(planned)).returncode == 0
    text = opinfo("analyze", str(planned), "--dot").stdout
    assert "shape=diamond" in text and "permute_dims" in text
    assert opinfo("byoc", str(example), "--backend", "c", "-o", str(offloaded)).returncode == 0
    text = opinfo("analyze", str(offloaded), "--dot").stdout
    assert "subgraph cluster_0" in text and "(c)" in text


def test_dot_of_an_unreadable_file_exits_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@I.ir_module\nclass Module:\n    x = (\n")
    p = opinfo("analyze", str(bad), "--dot")
    assert p.returncode == 2 and str(bad) in p.stderr

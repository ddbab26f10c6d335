"""``opinfo plan`` as a user runs it (subprocess), including bad input."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

import tir
from tir.topi.examples import resnet_block_example

ROOT = Path(__file__).resolve().parents[1]


def _opinfo(*args):
    return subprocess.run([sys.executable, "-m", "opinfo", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("plan") / "model.py"
    path.write_text(tir.to_script(resnet_block_example()))
    return path


def test_plan_writes_module_and_summary(model, tmp_path):
    out = tmp_path / "planned.py"
    r = _opinfo("plan", str(model), "--layout", "nn.conv2d=NHWC:OHWI", "--layout", "nn.max_pool2d=NHWC",
                "-o", str(out))
    assert r.returncode == 0, r.stderr
    assert "converted" in r.stdout and "transforms inserted" in r.stdout and "left in their layout" in r.stdout
    planned = tir.parse(out.read_text())
    assert any(name.startswith("layout_transform") for name in planned.functions)
    a = _opinfo("analyze", str(out), "--json")
    assert a.returncode == 0, a.stderr
    funcs = json.loads(a.stdout.splitlines()[0])["functions"]
    convs = [op for f in funcs for op in f["ops"] if op["op"] == "nn.conv2d"]
    assert convs and all(op["attrs"]["data_layout"] == "NHWC" for op in convs)


def test_plan_json_summary(model):
    r = _opinfo("plan", str(model), "--layout", "nn.conv2d=NHWC", "--json")
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert set(summary) == {"converted", "transforms", "unchanged"}
    assert all("func" in rec and "op" in rec for rec in summary["converted"] + summary["unchanged"])
    assert all({"from", "to", "kind", "reason", "foldable"} <= set(t) for t in summary["transforms"])


@pytest.mark.parametrize("args,message", [
    (["--layout", "nn.conv2d=NHXC"], "not have the same axes"),
    (["--layout", "nn.conv2d=NC-HW"], "unexpected"),
    (["--layout", "nn.conv2d"], "OP=DATA"),
    ([], "at least one --layout"),
])
def test_plan_bad_layouts_exit_2(model, args, message):
    r = _opinfo("plan", str(model), *args)
    if r.returncode == 0:  # a layout that parses but fits no op is reported, not an error
        assert "not have the same axes" in r.stdout and message in r.stdout
        return
    assert r.returncode == 2 and message in r.stderr, r.stderr


def test_plan_refuses_to_overwrite_input(model):
    r = _opinfo("plan", str(model), "--layout", "nn.conv2d=NHWC", "-o", str(model))
    assert r.returncode == 2 and "overwrite" in r.stderr


def test_plan_bad_file_exits_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@I.ir_module\nclass Module:\n    def main(:\n")
    r = _opinfo("plan", str(bad), "--layout", "nn.conv2d=NHWC")
    assert r.returncode == 2 and str(bad) in r.stderr
    r = _opinfo("plan", str(tmp_path / "missing.py"), "--layout", "nn.conv2d=NHWC")
    assert r.returncode == 2 and "cannot read" in r.stderr

"""``opinfo demo`` end to end through the command line."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def opinfo(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "opinfo", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_demo_tells_the_whole_story_and_agrees():
    pytest.importorskip("onnxruntime")
    p = opinfo("demo")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    for step in ("Lowered module", "Recovered ops", "Layout plan", "BYOC", "Run on random inputs"):
        assert step in out
    assert "nn.conv2d(strides=[1, 1], padding=[1, 1, 1, 1]" in out
    assert "data_layout=NHWC" in out
    assert "all agree to 0.0001: yes" in out


def test_demo_with_the_c_backend_on_a_model_file(tmp_path):
    import tir
    from tir.topi.examples import resnet_block_example

    path = tmp_path / "net.py"
    path.write_text(tir.to_script(resnet_block_example()))
    p = opinfo("demo", "--model", str(path), "--backend", "c")
    assert p.returncode == 0, p.stderr
    assert "offload to c" in p.stdout
    assert "all agree to 0.0001: yes" in p.stdout


def test_demo_bad_model_path_exits_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(A: T.Buffer((4,), 'float32'):\n    pass\n")
    p = opinfo("demo", "--model", str(bad))
    assert p.returncode == 2
    assert str(bad) in p.stderr
    p = opinfo("demo", "--model", str(tmp_path / "missing.py"))
    assert p.returncode == 2 and "cannot read" in p.stderr

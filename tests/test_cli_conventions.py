"""CLI conventions of every subcommand, through a subprocess: --help with examples, bad
input exits 2 with a message naming the file, --version, and the ``opinfo`` script behaving
like ``python -m opinfo``."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = ["show", "run", "analyze", "plan", "byoc", "demo"]


def opinfo(*args, exe=None):
    cmd = [exe] if exe else [sys.executable, "-m", "opinfo"]
    return subprocess.run([*cmd, *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_examples(command):
    p = opinfo(command, "--help")
    assert p.returncode == 0
    assert "examples:" in p.stdout and f"opinfo {command}" in p.stdout


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    path = tmp_path_factory.mktemp("bad") / "broken.py"
    path.write_text("@I.ir_module\nclass Module:\n    @T.prim_func\n    def f(A: T.Buffer((4,), \"float32\")):\n"
                    "        A[0] = B[0]\n")
    return path


@pytest.mark.parametrize("args", [
    ["show", "{bad}"],
    ["run", "{bad}", "--inputs", "{npz}", "--output", "{out}"],
    ["analyze", "{bad}"],
    ["plan", "{bad}", "--layout", "nn.conv2d=NHWC:OHWI"],
    ["byoc", "{bad}", "--backend", "c"],
    ["demo", "--model", "{bad}"],
])
def test_bad_input_exits_2_naming_the_file(args, broken, tmp_path):
    import numpy as np

    npz = tmp_path / "in.npz"
    np.savez(npz, np.zeros(4, "float32"))
    filled = [a.format(bad=broken, npz=npz, out=tmp_path / "out.npz") for a in args]
    p = opinfo(*filled)
    assert p.returncode == 2, p.stdout + p.stderr
    text = p.stderr + p.stdout
    assert f"{broken}:5:" in text and "undefined name 'B'" in text
    assert "Traceback" not in p.stderr
    assert not (tmp_path / "out.npz").exists()


def test_no_command_prints_help_and_exits_2():
    p = opinfo()
    assert p.returncode == 2 and "COMMAND" in p.stdout


def test_version_and_script_match_module():
    p = opinfo("--version")
    assert p.returncode == 0 and p.stdout.startswith("opinfo ")
    script = Path(sys.executable).parent / "opinfo"
    if not script.exists():
        pytest.skip("the opinfo script is not installed next to this python")
    q = opinfo("--version", exe=str(script))
    assert q.returncode == 0 and q.stdout == p.stdout
    assert opinfo("analyze", "--help", exe=str(script)).stdout == opinfo("analyze", "--help").stdout.replace(
        "python -m opinfo", "opinfo")

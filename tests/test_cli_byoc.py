"""``opinfo byoc``: summary (text and JSON), the written module, and ``opinfo run`` on it."""
import json

import numpy as np
import pytest

import tir
from tir.topi.graph import GraphBuilder

pytest.importorskip("onnxruntime")

from opinfo.cli import main  # noqa: E402


def _write_model(tmp_path):
    g = GraphBuilder()
    x = g.input("x", (1, 3, 8, 8))
    w = g.input("w", (4, 3, 3, 3))
    y = g.relu(g.conv2d(x, w, strides=[2, 2], padding=[0, 1, 1, 0]))
    mod = g.build(g.round(y))
    path = tmp_path / "model.py"
    path.write_text(tir.to_script(mod))
    return path


def test_json_summary_lists_regions_and_kept_ops(tmp_path, capsys):
    path = _write_model(tmp_path)
    out = tmp_path / "part.py"
    assert main(["byoc", str(path), "--backend", "onnxruntime", "-o", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    [region] = report["regions"]
    assert region["backend"] == "onnxruntime" and region["symbol"] == "onnxruntime_0"
    assert [op["op"] for op in region["ops"]] == ["nn.conv2d", "nn.relu"]
    assert region["ops"][0]["attrs"]["padding"] == [0, 1, 1, 0]
    [kept] = report["kept"]
    assert kept["ops"] == ["round"] and kept["reason"]
    assert "R.call_dps_packed" in out.read_text()


def test_written_module_runs_with_opinfo_run(tmp_path, capsys):
    path = _write_model(tmp_path)
    out = tmp_path / "part.py"
    assert main(["byoc", str(path), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "region onnxruntime_0" in text and "kept" in text
    rng = np.random.default_rng(0)
    np.savez(tmp_path / "in.npz", rng.standard_normal((1, 3, 8, 8)).astype("float32"),
             rng.standard_normal((4, 3, 3, 3)).astype("float32"))
    assert main(["run", str(out), "--inputs", str(tmp_path / "in.npz"), "--output", str(tmp_path / "a.npz")]) == 0
    assert main(["run", str(path), "--inputs", str(tmp_path / "in.npz"), "--output", str(tmp_path / "b.npz")]) == 0
    a, b = np.load(tmp_path / "a.npz")["out"], np.load(tmp_path / "b.npz")["out"]
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_bad_input_and_overwrite_exit_2(tmp_path, capsys):
    path = _write_model(tmp_path)
    assert main(["byoc", str(path), "-o", str(path)]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    bad = tmp_path / "bad.py"
    bad.write_text("this is not tvmscript(\n")
    assert main(["byoc", str(bad)]) == 2
    assert str(bad) in capsys.readouterr().err
    assert main(["byoc", str(path), "--pattern", "nope"]) == 2
    assert "no pattern" in capsys.readouterr().err

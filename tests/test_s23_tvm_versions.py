"""Modules as TVM 0.25 prints them: the same ``tirx``/``T.sblock`` TIR as 0.26 and 0.27, but
``main`` gives each call's output type as ``out_sinfo=`` (``out_ty=`` since 0.26). The fixture
is TVM 0.25.0's LegalizeOps output of add -> softmax(axis=-1) -> sum(axis=[1])."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import opinfo
import tir
from tests.fixture_util import FIXTURES

TEXT = (FIXTURES / "s23_tvm025_module.py").read_text()


def _numpy(x, w):
    z = x + w
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).sum(axis=1)


def test_tvm025_module_is_read_and_its_ops_recovered():
    assert TEXT.count("out_sinfo=") == 3
    infos = opinfo.analyze_module(tir.parse(TEXT))
    got = {name: [(op.name, dict(op.attrs)) for op in info.ops] for name, info in infos.items()}
    assert got["add"] == [("add", {})]
    assert got["softmax"] == [("nn.softmax", {"axis": 1})]
    assert [name for name, _ in got["sum"]] == ["sum"]
    assert list(got["sum"][0][1]["axis"]) == [1] and got["sum"][0][1]["keepdims"] is False


@pytest.mark.parametrize("engine", ["interp", "c"])
def test_tvm025_module_runs(engine):
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(2, 3)).astype("float32"), rng.normal(size=(2, 3)).astype("float32")
    got = tir.run(tir.parse(TEXT), x, w, engine=engine)
    np.testing.assert_allclose(got, _numpy(x, w), rtol=1e-5)


def test_printed_back_in_the_current_form_and_read_again():
    mod = tir.parse(TEXT)
    text = tir.to_script(mod)
    assert "out_sinfo" not in text and text.count("out_ty=") == 3
    assert tir.structural_equal(tir.parse(text), mod)


def test_both_spellings_at_once_is_an_error_naming_the_call():
    bad = TEXT.replace('(x, w), out_sinfo=R.Tensor((2, 3), dtype="float32"))',
                       '(x, w), out_sinfo=R.Tensor((2, 3), dtype="float32"), out_ty=R.Tensor((2, 3), dtype="float32"))')
    assert bad != TEXT
    with pytest.raises(tir.ParseError, match=r"\d+:\d+: R.call_tir: the output type is given twice"):
        tir.parse(bad)


def test_missing_output_type_names_both_spellings():
    bad = TEXT.replace(', out_sinfo=R.Tensor((2,), dtype="float32"))', ")")
    with pytest.raises(tir.ParseError, match=r"needs out_ty=R.Tensor\(...\) \(out_sinfo= in TVM before"):
        tir.parse(bad)


def test_cli_analyze_reads_it(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(TEXT)
    out = subprocess.run([sys.executable, "-m", "opinfo", "analyze", str(path)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "nn.softmax" in out.stdout and "axis=1" in out.stdout

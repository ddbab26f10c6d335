"""``opinfo show``: summary, --script round trip, --json, and a bad file (exit 2, PATH:line:col)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import tir
from corpus_util import CORPUS

ROOT = Path(__file__).resolve().parents[1]
CASE = CORPUS / "ops" / "nn_conv1d_transpose_1_1.py"


def _show(*args):
    return subprocess.run([sys.executable, "-m", "opinfo", "show", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)


def _need_corpus():
    if not CASE.exists():
        pytest.skip(f"corpus not found at {CORPUS}")


def test_summary_lists_functions_buffers_blocks_and_loops():
    _need_corpus()
    out = _show(CASE)
    assert out.returncode == 0, out.stderr
    assert "prim_func conv1d_transpose(x: float32[2, 8, 8]" in out.stdout
    assert "block compute [v_b:S<2>, v_c:S<12>, v_w:S<8>, v_dc:R<8>, v_dw:R<3>] (with init)" in out.stdout
    assert "graph function main" in out.stdout and "1 calls" in out.stdout


def test_script_reprints_in_either_dialect(tmp_path):
    _need_corpus()
    for dialect in ("tir", "tirx"):
        out = _show(CASE, "--script", "--dialect", dialect)
        assert out.returncode == 0, out.stderr
        assert f"from tvm.script import {dialect} as T" in out.stdout
        tir.assert_structural_equal(tir.parse(out.stdout), tir.parse(CASE.read_text()))


def test_json_summary():
    _need_corpus()
    out = _show(CASE, "--json")
    data = json.loads(out.stdout)
    prim = data["functions"][0]
    assert prim["kind"] == "prim_func" and prim["params"][0]["shape"] == [2, 8, 8]
    assert [b["name"] for b in prim["blocks"]] == ["data_dilate", "kernel", "compute"]


def test_bad_file_reports_position_and_exits_2(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(A: T.Buffer((4,), \"float32\")):\n    A[0] = B[0]\n")
    out = _show(bad)
    assert out.returncode == 2
    assert out.stderr.strip() == f"{bad}:3:12: undefined name 'B'"
    missing = _show(tmp_path / "missing.py")
    assert missing.returncode == 2 and "cannot read" in missing.stderr

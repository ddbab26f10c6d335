"""``python -m opinfo run``: outputs, engines, and bad input (exit 2, no output file)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"

PRIM = """
@T.prim_func
def twice(A: T.Buffer((T.int64(3),), "float32"), B: T.Buffer((T.int64(3),), "float32")):
    for i in range(T.int64(3)):
        with T.block("B"):
            vi = T.axis.spatial(T.int64(3), i)
            B[vi] = A[vi] * T.float32(2.0)
"""


def opinfo_run(*args):
    return subprocess.run([sys.executable, "-m", "opinfo", "run", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def prim(tmp_path):
    path = tmp_path / "twice.py"
    path.write_text(PRIM)
    return path


@pytest.mark.parametrize("engine", ["interp"] + (["c"] if shutil.which("gcc") else []))
def test_runs_only_prim_func(prim, tmp_path, engine):
    fin, fout = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(fin, np.array([1, 2, 3], np.float32))
    p = opinfo_run(prim, "--inputs", fin, "--output", fout, "--engine", engine)
    assert p.returncode == 0, p.stderr
    assert np.load(fout)["out"].tolist() == [2, 4, 6]


def test_wrong_shape_is_exit_2_without_output(prim, tmp_path):
    fin, fout = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(fin, np.zeros(4, np.float32))
    p = opinfo_run(prim, "--inputs", fin, "--output", fout)
    assert p.returncode == 2
    assert "'A'" in p.stderr and "shape" in p.stderr
    assert not fout.exists()


def test_missing_input_count_and_file(prim, tmp_path):
    fin, fout = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(fin)
    p = opinfo_run(prim, "--inputs", fin, "--output", fout)
    assert p.returncode == 2 and "1 input" in p.stderr
    p = opinfo_run(prim, "--inputs", tmp_path / "nope.npz", "--output", fout)
    assert p.returncode == 2 and "nope.npz" in p.stderr
    assert not fout.exists()


def test_inputs_that_are_not_an_npz_archive(prim, tmp_path):
    fout = tmp_path / "out.npz"
    empty, npy = tmp_path / "empty.npz", tmp_path / "one.npy"
    empty.write_bytes(b"")
    np.save(npy, np.zeros(3, np.float32))
    for path, says in ((empty, "cannot read inputs"), (npy, "not an .npz archive")):
        p = opinfo_run(prim, "--inputs", path, "--output", fout)
        assert p.returncode == 2 and says in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert not fout.exists()


def test_wrong_dtype_and_parse_error(prim, tmp_path):
    fin, fout = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(fin, np.zeros(3, np.int32))
    p = opinfo_run(prim, "--inputs", fin, "--output", fout)
    assert p.returncode == 2 and "dtype" in p.stderr
    bad = tmp_path / "bad.py"
    bad.write_text("@T.prim_func\ndef f(:\n")
    p = opinfo_run(bad, "--inputs", fin, "--output", fout)
    assert p.returncode == 2 and "bad.py:" in p.stderr
    assert not fout.exists()


def test_corpus_case_matches_tvm(tmp_path):
    case = CORPUS / "ops" / "nn_conv2d_1_0.py"
    if not case.exists():
        pytest.skip("shared corpus not available")
    data = np.load(case.with_suffix(".npz"))
    fin, fout = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(fin, data["arr_0"], data["arr_1"])
    p = opinfo_run(case, "--inputs", fin, "--output", fout)
    assert p.returncode == 0, p.stderr
    np.testing.assert_allclose(np.load(fout)["out"], data["out"], rtol=1e-4, atol=1e-4)

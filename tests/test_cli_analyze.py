"""``opinfo analyze``: a corpus file, a folder, the ``--json`` schema, and a bad file among
good ones (an error record with its position, a non-zero exit, the others still analysed)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from corpus_util import CORPUS

ROOT = Path(__file__).resolve().parents[1]
OPS = CORPUS / "ops"
CASES = ["nn_conv2d_1_0", "nn_max_pool2d_1_1", "add_1_1"]
KINDS = {"elemwise", "broadcast", "injective", "comm_reduce", "out_ewise_fusable", "opaque"}


def _analyze(*args):
    return subprocess.run([sys.executable, "-m", "opinfo", "analyze", *map(str, args)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


@pytest.fixture
def folder(tmp_path):
    if not OPS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    for case in CASES:
        shutil.copy(OPS / f"{case}.py", tmp_path / f"{case}.py")
    (tmp_path / "notes.txt").write_text("not TVMScript, and not a .py file")
    return tmp_path


def _records(stdout: str) -> list:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_one_file_as_a_table(folder):
    out = _analyze(folder / "nn_conv2d_1_0.py")
    assert out.returncode == 0, out.stderr
    assert "nn_conv2d_1_0.py" in out.stdout
    assert "out_ewise_fusable" in out.stdout and "nn.conv2d(strides=[1, 3]" in out.stdout


def _check_schema(rec: dict):
    assert set(rec) == {"file", "functions"}
    for fn in rec["functions"]:
        assert {"name", "kind", "ops"} <= set(fn) and fn["kind"] in KINDS
        for op in fn["ops"]:
            assert isinstance(op["op"], str) and isinstance(op["attrs"], dict)
            assert all({"role", "buffer", "param"} <= set(o) for o in op["operands"])


def test_folder_as_json_lines(folder):
    out = _analyze(folder, "--json")
    assert out.returncode == 0, out.stderr
    recs = _records(out.stdout)
    assert sorted(Path(r["file"]).stem for r in recs) == sorted(CASES)  # .py files only
    for rec in recs:
        _check_schema(rec)
    by_case = {Path(r["file"]).stem: r for r in recs}
    (pool,) = by_case["nn_max_pool2d_1_1"]["functions"][0]["ops"]
    assert pool["op"] == "nn.max_pool2d" and pool["attrs"]["layout"] == "NCHW4c"
    assert pool["operands"] == [{"role": "data", "buffer": "x", "param": 0}]


def test_bad_file_gives_an_error_record_and_the_others_are_analysed(folder):
    bad = folder / "broken.py"
    bad.write_text("@T.prim_func\ndef main(x: T.Buffer((4,), \"float32\")):\n    for i in range(4:\n")
    out = _analyze(folder / "add_1_1.py", bad, folder / "nn_conv2d_1_0.py", "--json")
    assert out.returncode != 0
    recs = _records(out.stdout)
    assert [Path(r["file"]).name for r in recs] == ["add_1_1.py", "broken.py", "nn_conv2d_1_0.py"]
    err = recs[1]
    assert set(err) == {"file", "error"} and err["error"].split(":")[0].isdigit()
    assert "Traceback" not in out.stderr
    assert recs[0]["functions"][0]["ops"] and recs[2]["functions"][0]["ops"]


def test_bad_file_in_the_table(folder):
    bad = folder / "empty.py"
    bad.write_text("")
    out = _analyze(bad, folder / "add_1_1.py")
    assert out.returncode != 0
    assert f"{bad}:" in out.stderr and "add_1_1.py" in out.stdout


def test_missing_file_in_the_table(folder):
    out = _analyze(folder / "absent.py", folder / "add_1_1.py")
    assert out.returncode == 2
    assert f"{folder / 'absent.py'}: cannot read: " in out.stderr and "add_1_1.py" in out.stdout


def test_assumed_attributes_are_starred_in_the_table():
    from opinfo.cli.analyze import table

    op = {"op": "nn.max_pool2d", "attrs": {"pool_size": [3, 3], "padding": [1, 1, 1, 1], "ceil_mode": False},
          "operands": [], "assumed": ["ceil_mode", "padding"]}
    text = table({"file": "m.py", "functions": [{"name": "pool", "kind": "out_ewise_fusable", "ops": [op]}]})
    assert "pool_size=[3, 3], padding*=[1, 1, 1, 1], ceil_mode*=False" in text
    assert "convention of framework importers" in text
    plain = dict(op, assumed=[])
    text = table({"file": "m.py", "functions": [{"name": "pool", "kind": "out_ewise_fusable", "ops": [plain]}]})
    assert "*" not in text


def test_undecided_reading_is_shown_but_not_an_answer():
    from opinfo.cli.analyze import table

    op = {"op": "sum", "attrs": {"axis": [0, 1], "keepdims": False}, "operands": [], "assumed": ["op"]}
    rec = {"file": "m.py", "functions": [{"name": "sum", "kind": "comm_reduce", "ops": [], "undecided": [op]}]}
    text = table(rec)
    assert "(undecided: sum*(axis=[0, 1], keepdims=False))" in text and "not reported" in text
    assert "(not recognized)" in table({"file": "m.py", "functions": [dict(rec["functions"][0], undecided=[])]})


def test_refused_function_shows_its_reason():
    from opinfo.cli.analyze import table

    fn = {"name": "f", "kind": "elemwise", "ops": [], "refused": "storage is read before anything writes it"}
    assert "(refused: storage is read before anything writes it)" in table({"file": "m.py", "functions": [fn]})


def test_jobs_default_to_the_usable_cpus_for_many_files():
    from opinfo.cli.analyze import AUTO_JOBS_FILES, MAX_AUTO_JOBS, auto_jobs

    assert auto_jobs(3, 1) == 3  # asked for: as asked
    assert auto_jobs(0, AUTO_JOBS_FILES - 1) == 1  # a few files: one process
    many = auto_jobs(0, 100)
    assert 1 <= many <= MAX_AUTO_JOBS
    assert auto_jobs(0, AUTO_JOBS_FILES) <= AUTO_JOBS_FILES


def test_records_keep_the_order_of_the_files_in_processes(tmp_path):
    if not OPS.is_dir():
        pytest.skip(f"corpus not found at {CORPUS}")
    names = sorted(p.stem for p in OPS.glob("*.py"))[:10]
    for name in names:
        shutil.copy(OPS / f"{name}.py", tmp_path / f"{name}.py")
    one = _analyze(tmp_path, "--json", "--jobs", "1")
    two = _analyze(tmp_path, "--json", "--jobs", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert [Path(r["file"]).stem for r in _records(two.stdout)] == names
    assert _records(one.stdout) == _records(two.stdout)


def test_a_warning_goes_with_the_answer(tmp_path):
    """A function TVM's build computes something else than its loops (a consumer reading what
    an earlier iteration of a loop stored, TVM allocating the buffer inside that loop): the
    op as written, and the warning, in the table and in the JSON."""
    from opinfo.api import WARNINGS

    src = ROOT / "tests" / "fixtures" / "s17_selu_reads_previous_iteration.py"
    out = _analyze(src)
    assert out.returncode == 0, out.stderr
    warning = WARNINGS["stale"].format(buffer="T_subtract", loops="ax3_1, ax2, ax3_0_0")
    assert "nn.selu" in out.stdout and f"warning: {warning}" in out.stdout
    (rec,) = _records(_analyze(src, "--json").stdout)
    (fn,) = rec["functions"]
    assert [op["op"] for op in fn["ops"]] == ["nn.selu"] and fn["warnings"] == [warning]
    plain = _records(_analyze(ROOT / "tests" / "fixtures" / "h54_softmax.py", "--json").stdout)[0]
    assert all("warnings" not in f for f in plain["functions"])

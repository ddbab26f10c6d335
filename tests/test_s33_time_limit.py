"""A wall-clock limit on one PrimFunc's analysis (opinfo.time_limit, ``--time-limit``)."""
from __future__ import annotations

import json
import time

import pytest

import tir
from opinfo import analyze
from opinfo.api import REFUSALS
from opinfo.cli import main
from opinfo.time_limit import TimeLimitExceeded, limited


def _conv():
    return tir.topi.lower("nn.conv2d", [((1, 4, 9, 9), "float32"), ((8, 4, 3, 3), "float32")],
                          strides=(2, 2), padding=(1, 1, 1, 1))


def test_limit_interrupts_and_is_not_swallowed_by_except_exception():
    started = time.monotonic()
    with pytest.raises(TimeLimitExceeded):
        with limited(0.05):
            while True:
                try:
                    sum(range(1000))
                except Exception:  # what recognizers do on forms they reject
                    pass
    assert time.monotonic() - started < 5


def test_no_limit_and_nesting_run_the_body():
    for seconds in (None, 0, -1):
        with limited(seconds):
            done = True
        assert done
    with limited(10):
        with limited(0.001):  # inner limits run under the outer one
            time.sleep(0.02)
        inner_done = True
    assert inner_done


def test_analyze_past_its_limit_abstains_with_kind_and_reason():
    func = _conv()
    full = analyze(func)
    assert [op.name for op in full.ops] == ["nn.conv2d"]
    cut = analyze(func, time_limit=1e-4)
    assert cut.ops == () and cut.kind == full.kind
    assert cut.refused == REFUSALS["time_limit"].format(seconds=1e-4)
    again = analyze(func, time_limit=120)  # the interrupted run left no half-filled state behind
    assert again.ops == full.ops


def test_cli_time_limit(tmp_path, capsys):
    path = tmp_path / "conv.py"
    path.write_text(tir.to_script(_conv()))
    assert main(["analyze", str(path), "--json", "--time-limit", "0.0001"]) == 0
    (fn,) = json.loads(capsys.readouterr().out)["functions"]
    assert fn["ops"] == [] and "time limit" in fn["refused"]
    assert main(["analyze", str(path), "--json", "--time-limit", "0"]) == 0
    (fn,) = json.loads(capsys.readouterr().out)["functions"]
    assert [o["op"] for o in fn["ops"]] == ["nn.conv2d"]

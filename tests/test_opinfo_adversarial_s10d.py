"""Confident wrongs tools/fuzz_soundness.py found at the end of session 10 (one-statement
mutants of real TVM output; fixtures are copies of ../shared/corpus/ops and /work/gen files)."""
from __future__ import annotations

import re

import tir
import opinfo

from tests.fixture_util import FIXTURES


def _names(name: str, old: str = "", new: str = "", nth: int = 0) -> list:
    """The op names of every PrimFunc of fixture ``name`` with the ``nth`` ``old`` made ``new``."""
    text = (FIXTURES / f"{name}.py").read_text()
    if old:
        at = [m.start() for m in re.finditer(re.escape(old), text)]
        assert len(at) > nth
        text = text[:at[nth]] + new + text[at[nth] + len(old):]
    mod = tir.parse(text)
    return [[op.name for op in info.ops] for info in opinfo.analyze_module(mod).values()]


def test_fixtures_are_named():
    assert _names("h54_fused_exp_sum") == [["exp", "sum"]]
    assert _names("s10d_variance") == [["variance"]]


def test_sum_of_an_intermediate_cut_short_abstains():
    # the sum over 7 of the 8 exp values the first block computes
    assert _names("h54_fused_exp_sum", "T.grid(T.int64(4), T.int64(1), T.int64(8))",
                  "T.grid(T.int64(4), T.int64(1), T.int64(7))") == [[]]


def test_reduction_variable_left_unused_abstains():
    # the mean's sum reads x[k0, 0, k2] for every k1: each term counted four times
    old = "x_red[v_ax0, v_ax1, v_ax2] = x_red[v_ax0, v_ax1, v_ax2] + x[v_k0, v_k1, v_k2]"
    assert _names("s10d_variance", old, old.replace("x[v_k0, v_k1, v_k2]", "x[v_k0, v_ax2, v_k2]")) == [[]]


def test_grid_sample_with_a_changed_reflection_fold_abstains():
    """On a 2x2 output four random grids never met the point where the fold's period
    matters; small outputs now get more runs."""
    assert _names("s10d_grid_sample") == [["image.grid_sample"]]
    # the fifth fold: floordiv(.., 4) * 4 -> floordiv(.., 5) * 4
    assert _names("s10d_grid_sample", "T.int64(4)) * T.int64(4))", "T.int64(5)) * T.int64(4))", nth=4) == [[]]

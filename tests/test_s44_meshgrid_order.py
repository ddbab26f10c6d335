"""meshgrid's outputs written in another order than the parameters'. TVM 0.27's cache_read of
the last input with compute_at under its output's loops (fixture s44_*, a generated case)
moves that output's block first; the outputs are independent copies and the order of their
blocks says nothing about the op."""
from __future__ import annotations

import numpy as np

import tir
from opinfo.api import analyze

from tests.fixture_util import FIXTURES, fixture_func

NAME = "s44_meshgrid_compute_at"


def test_outputs_written_out_of_order_are_named():
    func = fixture_func(NAME)
    text = tir.to_script(func)
    assert text.index('"T_meshgrid_2"') < text.index('"T_meshgrid"')
    (op,) = analyze(func).ops
    assert op.name == "meshgrid" and dict(op.attrs) == {"indexing": "ij"}


def test_what_it_computes_is_numpys_meshgrid():
    module = tir.parse((FIXTURES / f"{NAME}.py").read_text())
    rng = np.random.default_rng(1)
    ins = [rng.uniform(-1, 1, [n]).astype("float32") for n in (2, 3, 4)]
    outs = tir.run(module, *ins)  # its Relax main returns the three outputs
    assert all(np.array_equal(o, m) for o, m in zip(outs, np.meshgrid(*ins, indexing="ij")))


def test_an_output_copying_the_wrong_input_is_refused():
    def edit(text):
        old = "T_meshgrid_2[v_ax0, v_ax1, v_ax2] = y2_shared[v_ax2]"
        assert text.count(old) == 1
        return text.replace(old, "T_meshgrid_2[v_ax0, v_ax1, v_ax2] = y2_shared[v_ax1]")
    assert analyze(fixture_func(NAME, edit)).ops == ()

"""Recognizers that read a function by running it (adaptive pools, fills, scatters, ...) run
it with the storage it allocates starting as junk (:data:`opinfo.recognize.running.SCRATCH_JUNK`).
A mutant of TVM 0.27's adaptive_avg_pool3d over a batch ``n`` (fixture s44_*, a generated
case) that declares the batch variable of its window-sum block a reduction variable runs the
block's init only at batch 0: every other batch row sums onto storage nothing wrote. The
uninitialised-read check cannot enumerate its windows (loops of data-dependent extent), and
the run read the zeros a fresh allocation held as the init's zeros: it was named."""
from __future__ import annotations

import numpy as np

import tir
from opinfo.api import analyze
from opinfo.verify import run_copies

from tests.fixture_util import fixture_func

NAME = "s44_adaptive_avg_pool3d_symbolic"
SPATIAL = 'T.axis.remap("SSSSSRR", [ax0, ax1, ax2, ax3, ax4, rv1, rv2])'
BATCH_REDUCED = 'T.axis.remap("RSSSSRR", [ax0, ax1, ax2, ax3, ax4, rv1, rv2])'


def _mutant():
    def edit(text):
        assert text.count(SPATIAL) == 1
        return text.replace(SPATIAL, BATCH_REDUCED)
    return fixture_func(NAME, edit)


def test_the_function_as_tvm_wrote_it_is_named():
    (op,) = analyze(fixture_func(NAME)).ops
    assert op.name == "nn.adaptive_avg_pool3d" and list(op.attrs["output_size"]) == [2, 4, 4]


def test_an_init_that_runs_at_one_batch_row_is_refused():
    assert analyze(_mutant()).ops == ()


def test_the_mutant_reads_what_storage_held():
    # at n = 2 the second batch row starts from whatever the allocation held
    func, mutant = fixture_func(NAME), _mutant()
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (2, 8, 7, 4, 8)).astype("float32")
    out = np.zeros((2, 8, 2, 4, 4), "float32")
    want = run_copies(func, [x, out], scratch_fill=7.0)[-1]
    got = run_copies(mutant, [x, out], scratch_fill=7.0)[-1]
    assert np.allclose(got[0], want[0]) and not np.allclose(got[1], want[1])
    assert tir.to_script(mutant)

"""Copies whose iterations run past an end of an axis of their buffer, as TVM 0.27 printed
them after ``reindex_cache_read`` / ``cache_read`` with split loops (session 28's s9 corpus),
judged on row-major storage as TVM's code runs them (:func:`opinfo.coverage.out_of_bounds_writes`):

- ``x_shared[0, 5, j]`` of a buffer of shape (1, 5, 11) lies past its whole storage: the
  copy changes nothing there, even though the pad block in the same loop nest reads the
  buffer (before, only copies nothing else in their statement touches were let pass);
- a transposed copy ``S[j, k, i] = P[i, j, k]`` run to ``k = 7`` of 7 stores ``P[i, j + 1, 0]``
  at ``S[j + 1, 0, i]``, where that element belongs (:func:`opinfo.coverage.strays_repeat_copy`);
  built by TVM 0.27 for llvm, both functions give the named ops' numbers exactly;
- a transposed cache of ``x`` whose stray store puts ``x[5, 0, j]`` (past ``x``) on
  ``x_local[1, 0, j]``, a row the op reads afterwards, is refused.

The uninitialised-read gate now counts a copy's stores inside its buffer and judges the
buffer (it left buffers with any store past an end unjudged): the pool with its copy moved
after the pad block that reads it is refused by it."""
from __future__ import annotations

import tir
from opinfo.coverage import out_of_bounds_writes
from opinfo.intermediate_check import uninitialised_reads
from tests.fixture_util import fixture_func, fixture_ops, replaced

POOL = "s31_avg_pool1d_copy_past_storage"
NORM = "s31_batch_norm_transposed_copy_strays_repeat"
POWER = "s31_power_transposed_copy_strays_garbage"


def test_copy_past_storage_beside_its_reader():
    assert not out_of_bounds_writes(fixture_func(POOL))
    assert fixture_ops(POOL) == [("nn.avg_pool1d", {
        "pool_size": (3,), "strides": (2,), "dilation": (2,), "padding": (1, 0), "ceil_mode": True,
        "count_include_pad": True, "layout": "NCW", "out_layout": "NCW"})]


def test_transposed_copy_whose_strays_repeat_it():
    assert not out_of_bounds_writes(fixture_func(NORM))
    assert fixture_ops(NORM) == [("nn.batch_norm", {"axis": 0, "epsilon": 0.1, "center": True, "scale": True})]


def test_transposed_copy_whose_strays_overwrite_a_live_row():
    assert out_of_bounds_writes(fixture_func(POWER))
    assert fixture_ops(POWER) == []


def _copy_after_its_reader(text: str) -> str:
    start = text.index('            for ax1_0, ax1_1, ax2 in T.grid(T.int64(3), T.int64(2), T.int64(11)):\n'
                       '                with T.block("x_shared")')
    middle = text.index('            for ax1_0, ax1_1, ax2 in T.grid(T.int64(3), T.int64(2), T.int64(11)):\n'
                        '                with T.block("pad_temp")')
    end = text.index('            for ax1_0, ax1_1, ax2, rv0 in')
    return text[:start] + text[middle:end] + text[start:middle] + text[end:]


def test_copy_after_its_reader_is_uninitialised():
    (_, func), = tir.parse(_copy_after_its_reader(replaced(POOL, "", ""))).prim_funcs()
    assert uninitialised_reads(func)
    assert not uninitialised_reads(fixture_func(POOL))

"""Copies of whole tiles that run past the end of their buffers (TVM 0.27 ``read_at`` /
``write_at`` after random schedules; fixtures: its output, ``s29b_*``).

- a ``read_at`` tile with a halo (``S[v0, v1 + w] = P[v0, v1 + w]``, w in 9 over 6 columns)
  feeding a ``reindex`` copy is read through before the ``reindex`` copy is dropped;
- a ``write_at`` copy (one index tuple on both sides, buffers of one shape) whose iterations
  pass the end of the buffers -- constant (``v0 + w`` over 7 x 4 rows of 6) or symbolic
  (``(n + 3) // 4 * 4`` of ``n``) -- is a whole-buffer cache copy: past the end it changes
  nothing inside either buffer;
- a reader loading past the end of such a copy's buffer (a symbolic input of which 6
  elements are read) loads past the same end of the source when reading through.
"""
from __future__ import annotations

import numpy as np
import pytest

import tir
from opinfo.api import analyze_module
from tests.fixture_util import fixture_ops, replaced


def _module_ops(name: str, old: str = "", new: str = "") -> list:
    infos = analyze_module(tir.parse(replaced(name, old, new)))
    return [(op.name, dict(op.attrs)) for info in infos.values() for op in info.ops]


@pytest.mark.parametrize("name, op", [
    ("s29b_nn_gelu_2902_0", "nn.gelu"),
    ("s29b_nn_gelu_2902_1", "nn.gelu"),
    ("s29b_nn_selu_2902_1", "nn.selu"),
])
def test_elementwise_through_past_end_copies(name, op):
    with np.errstate(all="ignore"):
        assert [n for n, _ in fixture_ops(name)] == [op]


def test_variance_through_a_write_at_copy_with_a_halo():
    with np.errstate(all="ignore"):
        assert fixture_ops("s29b_variance_2902_0") == [("variance", {"axis": (1,), "keepdims": True})]


def test_a_write_at_copy_that_skips_a_row_is_no_whole_copy():
    # the write_at copy's tiles start at rows 0..6 step 1 over 4 rows: starting them at even
    # rows only (0, 2, ..., 12) still covers the buffer; starting them at 2 leaves rows 0, 1 unset
    old = "v0 + T.Cast(\"int64\", ax0_1), T.Cast(\"int64\", ax1)] = T_multiply_red_shared[v0 + T.Cast"
    new = "v0 + T.int64(2) + T.Cast(\"int64\", ax0_1), T.Cast(\"int64\", ax1)] = T_multiply_red_shared[v0 + T.int64(2) + T.Cast"
    with np.errstate(all="ignore"):
        assert fixture_ops("s29b_variance_2902_0", old, new) == []


def test_broadcast_reading_a_symbolic_input_through_its_cache():
    with np.errstate(all="ignore"):
        assert fixture_ops("s29b_broadcast_to_2902_1") == [("broadcast_to", {"shape": (2, 6)})]


def test_a_cache_copying_fewer_elements_than_read_is_not_read_through():
    # the cache holds x[0..4] only while column 5 is read: reading x there would be a guess
    with np.errstate(all="ignore"):
        assert fixture_ops("s29b_broadcast_to_2902_1", "for ax0_1 in range(6):", "for ax0_1 in range(5):") == []


"""Mutants found by the s10 differential fuzzer, third round (one statement of a TVM-printed
function changed; opinfo's answer unchanged while the interpreter computes something else).
Each must abstain; each unmutated fixture is still named.

Findings fixed with these tests:

- a reduction loop cut short under ``T.axis.remap`` shrinks the block's domain with it, so
  every check saw a consistent but smaller reduction (argmax over 1 of 2, a matrix-vector
  product over 31 of 32, a batch matmul over 6 of 7, a grouped conv3d over 2 of 3 kernel
  rows). :func:`opinfo.realize_check.misrealized` now refutes a reduction variable that
  alone indexes an axis of a parameter longer than its domain, with no bare use of the
  same extent.
- argmax/argmin bind their Selects with ``let``: :mod:`opinfo.intermediate_check` gave up
  on such stores, so a reduction whose spatial loop was cut short left accumulator rows
  unset that the final copy read. A ``let`` it cannot evaluate no longer stops the check,
  and the loads of the ``let`` values count as the store's loads.
- a blockized outer block whose grid was cut short writes part of the output through its
  inner block, which stores at the outer block's variables: :func:`opinfo.coverage.
  partial_writes` now knows the domains of the enclosing blocks' variables.
"""
from __future__ import annotations

import pytest

import opinfo
from tests.fixture_util import fixture_func


def _names(func) -> list:
    return [op.name for op in opinfo.analyze(func).ops]


def _replace(old, new):
    def edit(text):
        assert old in text, old
        return text.replace(old, new, 1)
    return edit


MUTANTS = {
    "argmax: reduction loop over 1 of 2": (
        "s10c_argmax", "argmax",
        "for ax0, ax1, k1 in T.grid(T.int64(4), T.int64(2), T.int64(2)):",
        "for ax0, ax1, k1 in T.grid(T.int64(4), T.int64(2), T.int64(1)):"),
    "argmin: spatial loop over 1 of 2 (accumulator row unset)": (
        "s10c_argmin", "argmin",
        "for ax0, k0 in T.grid(T.int64(2), T.int64(4)):",
        "for ax0, k0 in T.grid(T.int64(1), T.int64(4)):"),
    "matrix-vector: reduction over 31 of 32": (
        "s10c_matvec", "matmul",
        "for i0, k in T.grid(T.int64(16), T.int64(32)):",
        "for i0, k in T.grid(T.int64(16), T.int64(31)):"),
    "batch matmul: reduction over 6 of 7": (
        "s10c_batch_matmul", "matmul",
        "for i0, i1, i2, k in T.grid(T.int64(4), T.int64(2), T.int64(6), T.int64(7)):",
        "for i0, i1, i2, k in T.grid(T.int64(4), T.int64(2), T.int64(6), T.int64(6)):"),
    "grouped conv3d: kernel rows 2 of 3": (
        "s10c_group_conv3d", "nn.conv3d",
        "T.int64(3), T.int64(3), T.int64(8), T.int64(3), T.int64(1), T.int64(2)):",
        "T.int64(3), T.int64(3), T.int64(8), T.int64(2), T.int64(1), T.int64(2)):"),
    "grouped conv3d: in-channels 7 of 8": (
        "s10c_group_conv3d", "nn.conv3d",
        "T.int64(3), T.int64(3), T.int64(8), T.int64(3), T.int64(1), T.int64(2)):",
        "T.int64(3), T.int64(3), T.int64(7), T.int64(3), T.int64(1), T.int64(2)):"),
    "blockized abs: outer grid 4 of 5 rows": (
        "s10c_blockize_abs", "abs",
        "for i0, i1, i2 in T.grid(T.int64(2), T.int64(5), T.int64(8)):",
        "for i0, i1, i2 in T.grid(T.int64(2), T.int64(4), T.int64(8)):"),
}


@pytest.mark.parametrize("case", sorted({v[:2] for v in MUTANTS.values()}))
def test_fixture_named(case):
    name, op = case
    assert op in _names(fixture_func(name))


@pytest.mark.parametrize("label", sorted(MUTANTS))
def test_mutant_abstains(label):
    name, _, old, new = MUTANTS[label]
    assert _names(fixture_func(name, _replace(old, new))) == []

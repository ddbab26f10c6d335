"""Predicates of symbolic schedules met on fresh TVM corpora (fixtures ``s15_*`` copied from
real TVM output: ``pad_einsum``, ``fuse``, ``split`` by the unpadded extents, thread binding
and ``loop_partition`` on a batch of symbolic size ``n``):

- a fused loop over ``54 * ((3 * n + 9) // 10)`` bound to threads is read through its digits
  (``f % 2``, ``f % 54 // 18``, ``f // 54``): split into a symbolic loop and a loop of 54
  (:func:`opinfo.predicate_enum._split_scaled`) the constants of the fuse stop counting as
  periods of ``n``, so the coverage is enumerated at few enough sizes;
- a reduction padded by ``pad_einsum`` whose split loops stop at the unpadded extent
  (``k_0 * 3 + (k_1_0 * 3 + k_1_1) < n``, or a binding that never passes it,
  ``f % 6 // 2`` for an extent of 3) is restored (:func:`opinfo.pad_einsum._split_stops`).

Each is checked against mutants that drop or repeat points: those abstain.
"""
from __future__ import annotations


import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tir import dtype as dt
from tir.expr import Add, FloorDiv, FloorMod, IntImm, Mul, Var
from tir.functor import substitute, transform
from opinfo.predicate_enum import _digit_of
from opinfo.probe import evaluate

from tests.fixture_util import FIXTURES, fixture_func, fixture_ops
import opinfo
import tir


def _ops_all(name: str, old: str, new: str) -> list:
    """fixture_ops with *every* occurrence of ``old`` made ``new`` (loop_partition repeats
    a block's predicate once per partition)."""
    text = (FIXTURES / f"{name}.py").read_text()
    assert old in text, old
    (_, func), = tir.parse(text.replace(old, new)).prim_funcs()
    return [(op.name, dict(op.attrs)) for op in opinfo.analyze(func).ops]


SIN = "s15_pad_einsum_thread_split_sin_symbolic"
LOGICAL_NOT = "s15_nested_ceil_split_logical_not_symbolic"
LESS_EQUAL = "s15_thread_split_less_equal_symbolic"
SOFTMAX = "s15_pad_einsum_softmax_symbolic"
LOG_SOFTMAX = "s15_pad_einsum_log_softmax_resplit"


def test_thread_split_of_a_padded_symbolic_elementwise_op():
    assert fixture_ops(SIN) == [("sin", {})]
    # the last element of every row of n * 3 left out
    assert _ops_all(SIN, " < n * T.int64(3) and", " < n * T.int64(3) - T.int64(1) and") == []
    # a digit over 8 of 9 values: column 8 never written
    assert _ops_all(SIN, "% T.int64(18) // T.int64(2))", "% T.int64(16) // T.int64(2))") == []


def test_nested_ceil_splits_of_a_symbolic_fused_loop():
    assert fixture_ops(LOGICAL_NOT) == [("logical_not", {})]
    assert _ops_all(LOGICAL_NOT, " < n * T.int64(5) and", " < n * T.int64(5) - T.int64(2) and") == []


def test_symbolic_divisor_fused_loop_is_enumerated():
    assert fixture_ops(LESS_EQUAL) == [("less_equal", {})]
    assert fixture_ops(LESS_EQUAL, "< n * T.int64(36))", "< n * T.int64(36) - T.int64(1))") == []


def test_padded_reduction_stopping_at_a_symbolic_extent():
    assert fixture_ops(SOFTMAX) == [("nn.softmax", {"axis": 0})]
    # the maximum taken over n - 1 elements
    assert fixture_ops(SOFTMAX, "k_0 * T.int64(3) + (k_1_0 * T.int64(3) + k_1_1) < n)",
                       "k_0 * T.int64(3) + (k_1_0 * T.int64(3) + k_1_1) < n - T.int64(1))") == []


def test_padded_reduction_whose_binding_never_reaches_the_padding():
    assert fixture_ops(LOG_SOFTMAX) == [("nn.log_softmax", {"axis": 1})]
    # the sum's binding reaches the padded (non-neutral) element 3
    assert _ops_all(LOG_SOFTMAX, "% T.int64(6) // T.int64(2))", "% T.int64(8) // T.int64(2))") == []


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.integers(1, 4), st.data())
def test_digits_of_a_split_loop_are_exact(c, k, data):
    """``f`` over ``c * k`` written ``h * c + l``: every floor division and remainder of ``f``
    by constants, simplified by ``_digit_of``, keeps its value at every ``f``."""
    f, h, lo = Var("f", dt.int64), Var("h", dt.int64), Var("l", dt.int64)
    divisors = [d for d in range(1, 2 * c + 1)]
    d = data.draw(st.sampled_from(divisors))
    m = data.draw(st.sampled_from(divisors))
    i64 = lambda v: IntImm(dt.int64, v)  # noqa: E731
    exprs = [FloorDiv(f, i64(d)), FloorMod(f, i64(m)), FloorMod(FloorDiv(f, i64(d)), i64(m)),
             FloorDiv(FloorMod(f, i64(m)), i64(d)), Add(Mul(FloorDiv(f, i64(d)), i64(3)), FloorMod(f, i64(m)))]
    whole = Add(Mul(h, i64(c)), lo)
    for e in exprs:
        split = transform(substitute(e, {f: whole}), lambda n: _digit_of(n, h, lo, c))
        for fv in range(c * k):
            want = int(evaluate(e, {f: fv}))
            got = int(evaluate(split, {h: fv // c, lo: fv % c}))
            assert got == want, (e, fv)


def test_digits_drop_the_whole_loop_part():
    f, h, lo = Var("f", dt.int64), Var("h", dt.int64), Var("l", dt.int64)
    i64 = lambda v: IntImm(dt.int64, v)  # noqa: E731
    whole = Add(Mul(h, i64(54)), lo)
    for e, names in [(FloorMod(f, i64(2)), {"l"}), (FloorMod(FloorDiv(f, i64(18)), i64(3)), {"l"}),
                     (FloorDiv(f, i64(54)), {"h"})]:
        split = transform(substitute(e, {f: whole}), lambda n: _digit_of(n, h, lo, 54))
        found = set()
        tir.post_order_visit(split, lambda n: found.add(n.name) if isinstance(n, Var) else None)
        assert found == names, split


# ``pad_einsum`` of a matmul pads its reduction axis in both operands with 0: every padded
# iteration adds a product with a zero factor (opinfo.pad_einsum._zero_stops)

MATMUL_K = "s15_pad_einsum_matmul_reduction_only"
BATCH_MATMUL = "s15_pad_einsum_partitioned_batch_matmul"


def test_pad_einsum_of_a_matmul_reduction_axis():
    assert fixture_ops(MATMUL_K) == [("matmul", {})]
    # one operand padded with 0 is enough
    assert fixture_ops(MATMUL_K, "y[v0, v1], T.float32(0.0))", "y[v0, v1], T.float32(1.0))") == [("matmul", {})]
    # both padded with 1: the padded iterations add 1 each
    assert _ops_all(MATMUL_K, "], T.float32(0.0))", "], T.float32(1.0))") == []
    # a max of the padded products: a zero product is no neutral element of max
    assert fixture_ops(MATMUL_K, "matmul[v_i0, v_i1] + x_pad[v_i0, v_k] * y_pad[v_k, v_i1]",
                       "T.max(matmul[v_i0, v_i1], x_pad[v_i0, v_k] * y_pad[v_k, v_i1])") == []


def test_pad_einsum_of_a_partitioned_batch_matmul_resets_its_sum():
    # spatial axes padded and cropped, the reduction padded with 0 and partitioned at k = 3:
    # TVM 0.27 keeps the init in both copies, and the second runs it again at k = 3, so
    # the function sums k = 3, 4 only (TVM's own build computes that too): no matmul
    assert fixture_ops(BATCH_MATMUL) == []
    x, y = np.random.default_rng(0).normal(size=(2, 1, 6, 5)), np.random.default_rng(1).normal(size=(3, 5, 4))
    got = tir.run(fixture_func(BATCH_MATMUL), x.astype("float32"), y.astype("float32"))
    np.testing.assert_allclose(got, np.matmul(x[..., 3:], y[:, 3:]), rtol=1e-4, atol=1e-5)


# ``cache_index`` precomputes index expressions into buffers; once the consumer reads a cache
# of the data instead, the index blocks and their copies are dead (normalize.drop_dead_blocks)

def test_dead_index_blocks_of_cache_index_are_dropped():
    assert fixture_ops("s15_cache_index_dead_batch_flatten") == [("reshape", {"shape": (8, 378)})]
    # every block a cache copy: the tag is read from the names without scope suffixes
    assert fixture_ops("s15_cache_index_dead_reshape") == [("reshape", {"shape": (1512,)})]


def test_an_index_block_writing_the_output_is_not_dead():
    # the last dead copy stores its index into the output instead: a second writer of it
    text = (FIXTURES / "s15_cache_index_dead_batch_flatten.py").read_text()
    text = text.replace("T.writes(index_var_2[v0])", "T.writes(T_reshape[T.int64(0), v0])")
    text = text.replace("index_var_2[v0] = index_var_2_shared[v0]",
                        "T_reshape[T.int64(0), v0] = T.Cast(\"float32\", index_var_2_shared[v0])")
    (_, func), = tir.parse(text).prim_funcs()
    assert opinfo.analyze(func).ops == ()


def test_drop_dead_blocks_keeps_what_reaches_a_parameter():
    from opinfo.normalize import drop_dead_blocks

    func = fixture_func("s15_cache_index_dead_batch_flatten")
    kept = [b.name for b in drop_dead_blocks(func).blocks()]
    assert [n for n in kept if n.startswith("index")] == []
    assert {"x_local", "x_local_local", "T_reshape"} <= set(kept)
    # nothing dead: the same function back
    plain = fixture_func("s15_pad_einsum_matmul_reduction_only")
    assert drop_dead_blocks(plain) is plain

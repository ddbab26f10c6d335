"""The interpreter's loop distribution (tir/interp_distribute.py): sibling nests under
common loops (a compute_at schedule) run one after the other, each as one vectorised grid,
only where that computes what walking the loops does. Checked against the scalar walk
(``interpret(vectorize=False)``) on random producer/consumer programs, including producers
that leave elements unwritten (the consumer then reads storage before it is written: the
walk must be kept) and producers whose value changes per iteration (not distributable)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

import tir
import tir.interp_distribute as dist
from tir.interp import interpret

TEMPLATE = """
@T.prim_func
def f(x: T.Buffer(({I}, {K}), "float32"), out: T.Buffer(({I}, {J}), "float32")):
    p = T.alloc_buffer(({K},))
    for i in range({I}):
        for j in range({J}):
            for a in range({LO}, {HI}):
                with T.block("P"):
                    {PRODUCER}
            for k in range({R}):
                with T.block("C"):
                    {CONSUMER}
"""

PRODUCERS = {
    # the value reads the common loop i itself, not through a block variable
    "loop_var": "va = T.axis.spatial({K}, a)\n                    p[va] = x[0, va] + T.Cast(\"float32\", i)",
    # pure: the value depends on the element written only
    "pure": "va = T.axis.spatial({K}, a)\n                    p[va] = x[0, va] * T.float32(2)",
    # the value depends on the common loop i: each iteration overwrites with another value
    "per_iteration": ("va, vi = T.axis.remap(\"SS\", [a, i])\n"
                      "                    p[va] = x[vi, va] + T.float32(1)"),
}
CONSUMERS = {
    "reduce": ("vi, vj, vk = T.axis.remap(\"SSR\", [i, j, k])\n"
               "                    with T.init():\n"
               "                        out[vi, vj] = T.float32(0)\n"
               "                    out[vi, vj] = out[vi, vj] + p[(vk + vj) % {K}]"),
    "copy": ("vi, vj = T.axis.remap(\"SS\", [i, j])\n"
             "                    vk = T.axis.spatial({R}, k)\n"
             "                    out[vi, vj] = p[(vj + vk) % {K}] + T.float32(vk)"),
}


def _program(I, J, K, R, lo, hi, producer, consumer):
    fields = dict(I=I, J=J, K=K, R=R, LO=lo, HI=hi)
    fields["PRODUCER"] = PRODUCERS[producer].format(**fields)
    fields["CONSUMER"] = CONSUMERS[consumer].format(**fields)
    return tir.parse(TEMPLATE.format(**fields))


def _runs(func, x, monkeypatch=None):
    outs = []
    for vec in (True, False):
        out = np.full((func.buffer_map[func.params[1]].shape[0].value,
                       func.buffer_map[func.params[1]].shape[1].value), -1.0, dtype="float32")
        interpret(func, x.copy(), out, vectorize=vec, scratch_fill=7.0)
        outs.append(out)
    return outs


@settings(max_examples=40, deadline=None)
@given(I=st.integers(1, 3), J=st.integers(1, 3), K=st.integers(1, 5), R=st.integers(1, 4),
       cut=st.tuples(st.integers(0, 2), st.integers(0, 2)),
       producer=st.sampled_from(sorted(PRODUCERS)), consumer=st.sampled_from(sorted(CONSUMERS)))
def test_distribution_computes_what_the_walk_computes(I, J, K, R, cut, producer, consumer):
    lo, hi = min(cut[0], K - 1), max(K - cut[1], min(cut[0], K - 1) + 1)
    func = _program(I, J, K, R, lo, hi, producer, consumer)
    x = np.random.default_rng(I * 100 + K).integers(-3, 4, (I, K)).astype("float32")
    vec, walk = _runs(func, x)
    np.testing.assert_array_equal(vec, walk)


def test_a_covering_pure_producer_is_distributed(monkeypatch):
    used = []
    original = dist.run_distributed
    monkeypatch.setattr(dist, "run_distributed", lambda loop, ctx: used.append(original(loop, ctx)) or used[-1])
    func = _program(3, 2, 4, 4, 0, 4, "pure", "reduce")
    x = np.arange(12, dtype="float32").reshape(3, 4)
    vec, walk = _runs(func, x)
    np.testing.assert_array_equal(vec, walk)
    np.testing.assert_array_equal(vec, np.full((3, 2), 2 * x[0].sum()))
    assert used and all(used)


def test_reads_before_writes_and_per_iteration_values_keep_the_walk(monkeypatch):
    used = []
    original = dist.run_distributed
    monkeypatch.setattr(dist, "run_distributed", lambda loop, ctx: used.append(original(loop, ctx)) or used[-1])
    x = np.arange(12, dtype="float32").reshape(3, 4)
    # p[3] is never written: the consumer reads the junk the storage starts with
    func = _program(3, 2, 4, 4, 0, 3, "pure", "reduce")
    vec, walk = _runs(func, x)
    np.testing.assert_array_equal(vec, walk)
    assert 7.0 * 1 + 2 * x[0, :3].sum() == vec[0, 0]
    assert used and not any(used)
    used.clear()
    vec, walk = _runs(_program(3, 2, 4, 4, 0, 4, "per_iteration", "copy"), x)
    np.testing.assert_array_equal(vec, walk)
    assert used and not any(used)
    used.clear()
    vec, walk = _runs(_program(3, 2, 4, 4, 0, 4, "loop_var", "copy"), x)
    np.testing.assert_array_equal(vec, walk)
    # not over i, whose value the producer reads; over j (i fixed) it is pure
    assert used[0] is False and all(used[1:4])

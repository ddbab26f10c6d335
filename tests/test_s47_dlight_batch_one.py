"""dlight's Matmul rule over a batch of one: ``x`` of shape (1, m, k) (or (1, 1, m, k)) is
copied whole into its padded tile, ``x_reindex_pad_shared[v0, i, k] = x[v0, i, k]``, and the
output is written back at a constant, ``C[0, i, j] = C_reindex_pad_local[v0, i, j]``. The
padded buffers are laid out as the parameter each stands for (its unit axes kept, the one
reindex added dropped), after which the padded matmul reads back as the matmul.

Fixtures: TVM 0.27 Relax graphs legalized, fused (FuseOps + FuseTIR) and scheduled by
``dlight.ApplyDefaultSchedule`` with the CUDA pipeline's rules for target ``cuda``:
``matmul`` of (1, 5, 7) x (7, 6), of (1, 1, 5, 7) x (7, 6), of (1, 5, 7) x (1, 7, 6), and
``add(matmul((1, 3, 9), (9, 10)), bias (10,))``, and a batched matmul (3, 5, 7) x (3, 7, 6)
(dlight keeps its batch axis: no unit axis to drop; its write-back shares the tile's thread
loops under a ``T.where`` that keeps it inside the output)."""
from __future__ import annotations

import pytest

import tir
from opinfo import analyze, verify_op
from opinfo.normalize import as_lowered
from opinfo.reindex_pad import unreindex

from tests.fixture_util import FIXTURES


def _func(fixture):
    mod = tir.parse((FIXTURES / fixture).read_text())
    (func,) = [f for _, f in mod.prim_funcs()]
    return func


@pytest.mark.parametrize("fixture, lhs, rhs", [
    ("s47_dlight_matmul_batch1.py", (1, 5, 7), (7, 6)),
    ("s47_dlight_matmul_batch11.py", (1, 1, 5, 7), (7, 6)),
    ("s47_dlight_bmm_batch1.py", (1, 5, 7), (1, 7, 6)),
    ("s47_dlight_bmm_batch3.py", (3, 5, 7), (3, 7, 6)),
])
def test_batch_of_one_named_and_confirmed(fixture, lhs, rhs):
    func = _func(fixture)
    (op,) = analyze(func).ops
    assert op.name == "matmul"
    assert [o.param for o in op.operands] == [0, 1] and op.output.param == 2
    shapes = [tuple(int(e.value) for e in func.buffer_map[p].shape) for p in func.params[:2]]
    assert shapes == [lhs, rhs]
    assert verify_op(func, op) is True  # lowered afresh, run on the same inputs


def test_copies_take_their_sources_layout():
    func = unreindex(as_lowered(_func("s47_dlight_matmul_batch11.py")))
    shapes = {b.name: tuple(int(e.value) for e in b.shape) for b in func.root_block.alloc_buffers}
    # x0 is (1, 1, 5, 7): its tile keeps both unit axes; x1 (7, 6) is stored transposed
    # (j, k) by dlight and laid out (k, j) as x1 is; the accumulator as the output (1, 1, 5, 6)
    assert shapes == {"x0_reindex_pad_shared": (1, 1, 32, 16), "x1_reindex_pad_shared": (16, 64),
                      "matmul_reindex_pad_local": (1, 1, 32, 64)}


def test_batch_of_one_with_an_epilogue():
    ops = analyze(_func("s47_dlight_matmul_batch1_bias.py")).ops
    assert [op.name for op in ops] == ["matmul", "add"]
    matmul, add = ops
    assert [o.param for o in matmul.operands] == [0, 1] and matmul.output.param is None
    assert add.output.param == 3


def test_write_back_not_moved_past_the_output():
    """The write-back of a padded tile runs over the tile (3 x 32 x 64) under a ``T.where``
    keeping it inside the (3, 5, 6) output. Given loops of its own over its whole domain it
    would write past the output's end: :func:`opinfo.distribute.reads_within` counts an
    output as read whole by the caller, so the block is not moved."""
    from opinfo.normalize import normalize

    func = _func("s47_dlight_bmm_batch3.py")
    out = func.buffer_map[func.params[-1]]
    for block in normalize(func).blocks():
        store = block.body
        if getattr(store, "buffer", None) is not None and store.buffer.name == out.name and block.iter_vars:
            extents = [int(iv.dom.extent.value) for iv in block.iter_vars if iv.kind.name == "SPATIAL"]
            assert all(e <= int(s.value) for e, s in zip(extents, store.buffer.shape))


def test_epilogue_answer_confirmed_op_by_op():
    """The epilogue's restored intermediate (``matmul_intermediate``) is no buffer of the
    function as printed: ``verify_fused`` runs the ops on the normalized function, where it
    is, and both ops are confirmed -- and a wrong reading of the epilogue is refuted."""
    import attrs

    from opinfo.verify import verify_fused

    for fixture in ("s47_dlight_matmul_batch1_bias.py", "s46_dlight_matmul_add_epilogue.py"):
        func = _func(fixture)
        ops = analyze(func).ops
        assert verify_fused(func, ops) == [True, True]
        wrong = attrs.evolve(ops[1], name="subtract")
        assert verify_fused(func, [ops[0], wrong]) == [True, False]

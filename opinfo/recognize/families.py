"""The order in which structural recognizers are tried at the root of an expression."""
from __future__ import annotations

from tir.expr import BufferLoad

from . import (bool_xor, conv, conv_transpose, gather_nd, groupnorm, layernorm, matmul, movement, movement_dynamic,
               movement_extra, norm, outer, pool, prelu, reduce, resize, softmax, std, trilu)
from . import index_tensor, quantize, slice_scatter
from . import affine_grid, hamming, loss
from . import scalar_arith, scalar_compare
from . import concat_fused

ALL: list = [
    index_tensor.match_index_tensor,
    loss.match_nll_loss,
    loss.match_cross_entropy,
    hamming.match_hamming_window,
    affine_grid.match_affine_grid,
    movement.match_movement, movement_dynamic.match_dynamic_movement,
    movement_extra.match_repeat, movement_extra.match_pixel_shuffle, movement_extra.match_gather_elements,
    trilu.match_trilu, movement_extra.match_one_hot, prelu.match_prelu,
    quantize.match_quantize, quantize.match_dequantize, slice_scatter.match_slice_scatter,
    matmul.match_matmul, outer.match_outer,
    conv.match_conv,
    conv_transpose.match_conv_transpose,
    pool.match_max_pool,
    pool.match_avg_pool,
    norm.match_batch_norm,
    softmax.match_softmax, layernorm.match_layer_norm, groupnorm.match_group_norm,
    resize.match_resize2d, resize.match_resize3d,
    std.match_std, reduce.match_variance, reduce.match_mean, reduce.match_reduce, reduce.match_arg,
    bool_xor.match_bool_xor, gather_nd.match_gather_nd,
    scalar_compare.match_scalar_compare, scalar_arith.match_scalar_arith,
    movement.match_intermediate_movement, concat_fused.match_intermediate_concat,
]


SIDE_OUTPUTS = {"nn.batch_norm": ("moving_mean", "moving_var")}
"""The operands an op's extra outputs copy, in output order (inference batch_norm returns its
moving mean and variance unchanged)."""


def absorbed(stage, sem, dec, k: int = 0) -> bool:
    """The ``k``-th extra output only copies a parameter an earlier op already reads: for an
    op of :data:`SIDE_OUTPUTS`, the operand of the role it returns there (batch_norm's moving
    mean, then its moving variance), else any operand."""
    expr = stage.expr
    if not isinstance(expr, BufferLoad) or not sem.is_param(expr.buffer):
        return False
    if not all(i is j for i, j in zip(expr.indices, stage.indices)):
        return False
    side = [op for op in dec.ops if op.name in SIDE_OUTPUTS]
    if side:
        roles = SIDE_OUTPUTS[side[-1].name]
        want = [o.buffer for o in side[-1].operands if k < len(roles) and o.role == roles[k]]
        return want == [expr.buffer.name]
    used = {o.buffer for op in dec.ops for o in op.operands}
    return expr.buffer.name in used

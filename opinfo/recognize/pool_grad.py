"""``grad.max_pool2d_backward`` / ``grad.avg_pool2d_backward(output_grad, data, pool_size,
strides, padding, dilation, ceil_mode, count_include_pad, layout)``, read from the whole
function and confirmed by running it.

TVM 0.27 legalizes both to ``topi.nn.pool_grad`` (dilation 1 only): the gradient of input
element ``i`` sums, over the reduction ``(wh, ww)`` of extent ``ceil(k / s)`` per axis, the
output gradient at ``o = (i + before) // s - w`` under guards (block ``T_pool_grad``).
Max pooling guards with ``argmax[o] == ravel(i + before)``, where ``argmax`` (block
``maxpool_grad_argmax``) is the first maximum of each window of the data padded with the
lowest value (``pad_temp``; ties to the smaller flat index of the padded data); average
pooling divides by ``k_h * k_w`` (``count_include_pad``, a constant) or by the clipped
window size.

Read from the ``T_pool_grad`` block (schedules undone by :func:`.normalize.normalize`):
which axes are pooled (their index of ``output_grad`` moves with a reduction variable; H
before W, as the forward pools read layouts), the stride and before-padding per axis (that index is
``(v + before) // s``, evaluated over the axis), the window (``k`` within the reduction
extent times ``s``, settled by running; max pooling's is the extent of its argmax
reduction), and for max pooling the padded extents (ratios of
the flat index's coefficients). The function is then run on random data (and on data with
ties, and on magnitudes far from 1: all-negative data under a pad value, clamped gradients)
and compared with a numpy reference for every candidate; exactly one must agree.
TVM's max-pool gradient reads ``argmax``/``output_grad`` out of bounds where the guard
only bounds from below (undefined values, compared and discarded): it is run with every
load guarded to read 0 out of bounds, the op's meaning.

ceil_mode only grows the after-padding by ``s - 1`` (identical loops), and the average
gradient never shows its after-padding: the readings and the choice among them are
:mod:`.pool_readings`' (``choose``), conventions marked as ``assumed``.
"""
from __future__ import annotations

import itertools

import attrs

import numpy as np

from tir.expr import BufferLoad, Var, if_then_else, logical_and
from tir.functor import transform
from tir.function import PrimFunc
from tir.stmt import BlockRealize

from ..affine import const_of
from ..info import OpInfo, Operand
from ..loop_partition import merge_partitions
from ..normalize import normalize
from ..tags import tag
from .pool_grad_read import ARGMAX, GRAD, argmax_windows, grad_block, include_pad, layout_of, padded_extents, structure
from .pool_readings import Axis, Reading, choose
from .pool_ref import pool_grad_ref
from .running import poisoned, run, wide as _wide

MAX_WORK = 400_000
"""Data elements times window positions above which the function is not run."""
TRIALS = 3
WIDE_TRIALS = 2
"""Runs on values of widely spread magnitudes after the TRIALS plain ones."""


def _runnable(func: PrimFunc, guard_loads: bool) -> PrimFunc:
    """``func`` with each block run only inside its iteration domain (the ``T.where`` of a
    non-divisible split, which :func:`.normalize.normalize` drops as implied by it) and,
    with ``guard_loads``, every load reading 0 out of bounds (TVM's max-pool gradient
    reads past its buffers where the values are discarded)."""
    def post(n):
        if isinstance(n, BlockRealize):
            conds = [n.predicate]
            for iv, v in zip(n.block.iter_vars, n.iter_values):
                conds += [iv.dom.min <= v, v < iv.dom.min + iv.dom.extent]
            return attrs.evolve(n, predicate=logical_and(*conds))
        if not guard_loads or not isinstance(n, BufferLoad):
            return None
        conds = []
        for i, e in zip(n.indices, n.buffer.shape):
            conds += [0 <= i, i < e]
        return if_then_else(logical_and(*conds), n, 0)
    return attrs.evolve(func, body=transform(func.body, post))


def _window_cands(pairs, extent: int, size: int, out: int, padded) -> list:
    """(s, before, k) with the window ``k`` giving ``extent`` window positions per element
    (``ceil(k / s)``), the before-padding below the window (frameworks' pools) and some
    after-padding (``padded``, TVM's, when read) giving ``out`` windows."""
    def fits(s, b, k):
        afters = range(k + s - 1) if padded is None else (padded - size - b,)
        return any(pa >= 0 and (size + b + pa - k) // s + 1 == out for pa in afters)
    return [(s, b, k) for s, b in pairs for k in range((extent - 1) * s + 1, extent * s + 1)
            if b < k and fits(s, b, k)]


def _readings(axes: list, padded) -> list:
    """(ceil_mode, after-padding) readings TVM lowers to these loops: the padded extent
    (max pooling) or only the output extent (average) must follow."""
    out = []
    for ceil in (False, True):
        per = []
        for ax, pad in zip(axes, padded):
            grow = ax.stride - 1 if ceil else 0
            per.append([pa for pa in range(ax.kernel) if (pad is None or pa + grow == pad)
                        and (ax.size + ax.before + pa + grow - ax.kernel) // ax.stride + 1 == ax.out])
        out += [Reading(ceil, combo) for combo in itertools.product(*per)]
    return out


def recognize_pool_grad(func: PrimFunc) -> "OpInfo | None":
    """The 2-d pooling gradient ``func`` computes, or None (see the module doc)."""
    bufs = func.buffers
    # block names as lowered: loop_partition's copies (``T_pool_grad_ax30``) merged back
    names = {tag(b.name) for b in merge_partitions(func).blocks()}
    if len(bufs) != 3 or len(func.params) != 3 or GRAD not in names:
        return None
    dtype = str(bufs[1].dtype)
    if not bufs[1].dtype.is_float or any(str(b.dtype) != dtype for b in bufs):
        return None
    shape = tuple(const_of(e) for e in bufs[1].shape)
    if None in shape or tuple(const_of(e) for e in bufs[2].shape) != shape or len(bufs[0].shape) != len(shape):
        return None
    kind = "max" if ARGMAX in names else "avg"
    nf = normalize(func)
    block = grad_block(nf, kind) if nf is not None else None
    if block is None:
        return None
    x, _, out = nf.buffers
    st = structure(block, x, out, shape)
    if st is None:
        return None
    axes = st["axes"]
    layout = layout_of(axes, shape)
    gshape = [const_of(e) if const_of(e) is not None or d in axes else (shape[d] if isinstance(e, Var) else None)
              for d, e in enumerate(bufs[0].shape)]
    if layout is None or None in gshape or any(gshape[d] != shape[d] for d in range(len(shape)) if d not in axes):
        return None
    (pairs_h, ext_h), (pairs_w, ext_w) = st["cands"]
    if int(np.prod(shape)) * ext_h * ext_w > MAX_WORK:
        return None
    extents = (None, None)
    if kind == "max":
        found = padded_extents(block, st["vars"], axes, shape)
        if found is None or any(const_of(found[1].shape[a]) != gshape[a] for a in axes):
            return None
        extents, _, offset, coef = found
        windows = argmax_windows(nf, axes)  # the argmax's reduction is the window itself
        if windows is None:
            return None
    cands = list(itertools.product(
        *(_window_cands(p, e, shape[a], gshape[a], r) for p, e, a, r in zip((pairs_h, pairs_w), (ext_h, ext_w), axes, extents)),
        (False, True) if kind == "avg" else (False,)))
    if kind == "max":
        cands = [c for c in cands if (c[0][2], c[1][2]) == windows]
    if not cands or len(cands) > 64:
        return None
    runner = _runnable(nf, kind == "max")  # the average guards every load itself
    rng = np.random.default_rng(11)
    tol = 1e-5 if bufs[1].dtype.bits > 16 else 4e-3  # sums of at most a few float16 quotients
    for trial in range(TRIALS + WIDE_TRIALS):
        if trial < TRIALS:
            grad = (rng.integers(-8, 9, gshape) / 4).astype(dtype)  # exact in every float type
            data = (rng.standard_normal(shape) if trial < 2 else rng.integers(0, 3, shape)).astype(dtype)
        else:  # magnitudes far from 1: a clamp of the gradient, a pad value above the data
            grad = _wide(rng, gshape, dtype).astype(dtype)
            data = (_wide(rng, shape, dtype, sign=-1 if trial == TRIALS else None)).astype(dtype)
        got = run(runner, [grad, data, poisoned(shape, dtype)])
        if got is None:
            return None
        # error bound: tol relative to the sum of the magnitudes added into each element
        cands = [c for c in cands if np.all(np.abs(got - pool_grad_ref(kind, c, grad, data, axes))
                                            <= tol * (pool_grad_ref(kind, c, np.abs(grad), data, axes) + 1))]
        if not cands:
            return None
    if kind == "avg" and len(cands) == 2 and cands[0][:2] == cands[1][:2]:
        include = include_pad(block, x)  # no window reaches the padding: the divisor's form says
        cands = [c for c in cands if c[2] == include]
    if len(cands) != 1:
        return None
    (s_h, b_h, k_h), (s_w, b_w, k_w), include = cands[0]
    pool_axes = [Axis(shape[a], gshape[a], k, s, 1, b, None, None)
                 for a, (s, b, k) in zip(axes, ((s_h, b_h, k_h), (s_w, b_w, k_w)))]
    padded = (None, None)
    if kind == "max":
        if offset != b_h * coef[axes[0]] + b_w * coef[axes[1]]:
            return None  # the flat index is not that of the data padded by the before-padding
        padded = tuple(e - ax.size - ax.before for e, ax in zip(extents, pool_axes))
    reading, assumed = choose(pool_axes, _readings(pool_axes, padded))
    if reading is None:
        return None
    attrs = {"pool_size": [k_h, k_w], "strides": [s_h, s_w], "dilation": [1, 1],
             "padding": [b_h, b_w] + list(reading.after), "ceil_mode": reading.ceil,
             "count_include_pad": include, "layout": layout, "out_layout": layout}
    return OpInfo(f"grad.{kind}_pool2d_backward", attrs,
                  (Operand("output_grad", bufs[0].name, 0), Operand("data", bufs[1].name, 1)),
                  Operand("output", bufs[2].name, 2), assumed=assumed)

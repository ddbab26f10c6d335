"""Composite cases of the unknown-ops bench (see :mod:`unknown_ops`): Relax nn ops that
legalize to several blocks (attention, losses, instance_norm, training batch_norm,
adaptive pools, lrn), and chains of known ops that TVM's FuseOps never puts in one
function (so one PrimFunc holding them is one unknown op, not a fused kernel), next to
chains it does fuse (accepted as the fused op list)."""
from __future__ import annotations

import numpy as np

from tir import dtype as dt
from tir.builder import Builder, sum_
from tir.expr import Call, Select, const
from tir.function import PrimFunc
from tir.topi import lower, lower_into

from unknown_ops import F32, I64, Case, _ax


def _exp(v):
    return Call(dt.dtype(F32), "exp", (v,))


def _bmm(b, x, y, transpose_b: bool, name: str):
    """``topi.nn.batch_matmul``: ``sum_k x[b, i, k] * y[b, j, k]`` (NT) or ``y[b, k, j]`` (NN)."""
    n, m, k_ext = x.shape
    cols = y.shape[1] if transpose_b else y.shape[2]
    k = b.reduce_axis(k_ext, "k")

    def body(bb, i, j):
        other = y[bb, j, k.var] if transpose_b else y[bb, k.var, j]
        return sum_(x[bb, i, k.var] * other, k)

    return b.compute(name, (n, m, cols), body, names=["b", "i", "j"])


def _trilu_lower(b, x):
    return b.compute("trilu", x.shape, lambda *i: Select(i[-2] >= i[-1], x[i], const(0.0, F32)),
                     names=[f"i{d}" for d in range(len(x.shape))])


def attention(causal: bool) -> "PrimFunc":
    """``_te_attention`` of Relax's legalization (no bias): transposes, reshapes, q @ k^T,
    scale, softmax (or the causal masked softmax), @ v, reshape, transpose."""
    b = Builder()
    q, k, v = (b.placeholder((1, 4, 2, 8), F32, n) for n in ("q", "k", "v"))
    qt, kt, vt = (lower_into(b, "permute_dims", [t], axes=[0, 2, 1, 3]) for t in (q, k, v))
    qr, kr, vr = (lower_into(b, "reshape", [t], shape=[2, 4, 8]) for t in (qt, kt, vt))
    p = _bmm(b, qr, kr, True, "T_batch_matmul_NT")
    p = b.compute("T_multiply", p.shape, lambda *i: p[i] * const(0.35355339, F32), names=_ax(3))
    if causal:
        s = _masked_softmax(b, p)
    else:
        s = lower_into(b, "nn.softmax", [p], axis=-1)
    o = _bmm(b, s, vr, False, "T_batch_matmul_NN")
    o = lower_into(b, "reshape", [o], shape=[1, 2, 4, 8])
    return b.build([q, k, v], [lower_into(b, "permute_dims", [o], axes=[0, 2, 1, 3])])


def _masked_softmax(b, p):
    masked = _trilu_lower(b, p)
    mx = lower_into(b, "max", [masked], axis=[-1], keepdims=True)
    ex = b.compute("T_exp", p.shape, lambda *i: _exp(masked[i] - mx[i[0], i[1], const(0, I64)]), names=_ax(3))
    ex = _trilu_lower(b, ex)
    total = lower_into(b, "sum", [ex], axis=[-1], keepdims=True)
    return b.compute("T_divide", p.shape, lambda *i: ex[i] / total[i[0], i[1], const(0, I64)], names=_ax(3))


def cross_entropy() -> "PrimFunc":
    """``-sum(x * y) / batch`` as four blocks."""
    b = Builder()
    x, y = b.placeholder((4, 5), F32, "x"), b.placeholder((4, 5), F32, "y")
    prod = b.compute("T_multiply", (4, 5), lambda *i: x[i] * y[i], names=_ax(2))
    total = lower_into(b, "sum", [prod], axis=None, keepdims=False)
    neg = b.compute("T_negative", (), lambda: const(0.0, F32) - total[()])
    return b.build([x, y], [b.compute("T_divide", (), lambda: neg[()] / const(4.0, F32))])


def nll_loss(reduction: str) -> "PrimFunc":
    """``topi.nn.nll_loss`` with weights (ignore_index -100)."""
    b = Builder()
    pred, tgt, w = b.placeholder((4, 5), F32, "x"), b.placeholder((4,), I64, "x1"), b.placeholder((5,), F32, "x2")
    keep = lambda i: tgt[i] != const(-100, I64)  # noqa: E731
    zero = const(0.0, F32)
    loss = b.compute("nll_loss", (4,), lambda i: Select(keep(i), (zero - pred[i, tgt[i]]) * w[tgt[i]], zero),
                     names=["ax0"])
    if reduction == "none":
        return b.build([pred, tgt, w], [loss])
    total = lower_into(b, "sum", [loss], axis=None)
    if reduction == "sum":
        return b.build([pred, tgt, w], [total])
    wsum = b.compute("nll_loss_1", (4,), lambda i: Select(keep(i), w[tgt[i]], zero), names=["ax0"])
    wtotal = lower_into(b, "sum", [wsum], axis=None)
    return b.build([pred, tgt, w], [b.compute("T_divide", (), lambda: total[()] / wtotal[()])])


def instance_norm(shape=(2, 3, 4, 4), channel_axis=1, eps=1e-5) -> "PrimFunc":
    """``topi.nn.instance_norm``: a (sum, sum of squares) reduction over every axis but batch
    and channel, then the normalised output scaled and shifted per channel."""
    from tir.expr import BufferLoad, Var
    from tir.stmt import BufferStore, LetStmt, seq

    rank = len(shape)
    axes = [d for d in range(1, rank) if d != channel_axis]
    kept = [0, channel_axis]
    b = Builder()
    x = b.placeholder(shape, F32, "x")
    gamma = b.placeholder((shape[channel_axis],), F32, "x1")
    beta = b.placeholder((shape[channel_axis],), F32, "x2")
    red_shape = tuple(shape[d] for d in kept)
    s_buf, q_buf = b.alloc("x_red_temp_v0", red_shape), b.alloc("x_red_temp_v1", red_shape)
    ivars = [Var(f"v_ax{d}", dt.int64) for d in range(2)]
    ks = [b.reduce_axis(shape[d], f"k{d}") for d in axes]

    def make_body():
        o = tuple(ivars)
        idx = [None] * rank
        for d, v in zip(kept, ivars):
            idx[d] = v
        for d, k in zip(axes, ks):
            idx[d] = k.var
        val = x[tuple(idx)]
        ns, nq = Var("v_x_red_temp_v0", dt.dtype(F32)), Var("v_x_red_temp_v1", dt.dtype(F32))
        body = LetStmt(ns, BufferLoad(s_buf, o) + val, LetStmt(nq, BufferLoad(q_buf, o) + val * val, seq(
            BufferStore(s_buf, ns, o), BufferStore(q_buf, nq, o))))
        zero = const(0.0, F32)
        return body, seq(BufferStore(s_buf, zero, o), BufferStore(q_buf, zero, o)), (s_buf, q_buf)

    b.emit_block("x_red_temp", list(zip(_ax(2), ivars, red_shape)), ks, make_body)
    n = const(float(np.prod([shape[d] for d in axes])), F32)

    def out(*i):
        o = (i[0], i[channel_axis])
        mean = s_buf[o] / n
        var = q_buf[o] / n - mean * mean
        return ((x[i] - mean) * Call(dt.dtype(F32), "rsqrt", (var + const(eps, F32),)) * gamma[i[channel_axis]]
                + beta[i[channel_axis]])

    return b.build([x, gamma, beta], [b.compute("T_instance_norm", shape, out, names=_ax(rank))])


def lrn() -> "PrimFunc":
    """``topi.nn.lrn`` (size 3 across channels): pad, windowed sum of squares, pow, divide."""
    b = Builder()
    x = b.placeholder((1, 4, 3, 3), F32, "x")
    padded = lower_into(b, "nn.pad", [x], pad_width=[0, 0, 1, 1, 0, 0, 0, 0])
    r = b.reduce_axis(3, "rxs")
    sq = b.compute("tensor", x.shape, lambda i, l, j, k: sum_(
        padded[i, l + r.var, j, k] * padded[i, l + r.var, j, k], r), names=["i", "l", "j", "k"])
    up = b.compute("tensor", x.shape, lambda *i: Call(dt.dtype(F32), "pow", (
        const(2.0, F32) + const(1e-4, F32) * sq[i] / const(3.0, F32), const(0.75, F32))), names=_ax(4))
    return b.build([x], [b.compute("T_divide", x.shape, lambda *i: x[i] / up[i], names=_ax(4))])


def avg_pool_wrong_divisor() -> "PrimFunc":
    """A 3x3 window sum divided by 10: no pooling op's divisor."""
    b = Builder()
    x = b.placeholder((1, 2, 6, 6), F32, "x")
    ry, rx = b.reduce_axis(3, "rv0"), b.reduce_axis(3, "rv1")
    s = b.compute("pool_sum", (1, 2, 4, 4), lambda n, c_, h, w: sum_(
        x[n, c_, h + ry.var, w + rx.var], [ry, rx]), names=_ax(4))
    return b.build([x], [b.compute("pool_avg", s.shape, lambda *i: s[i] / const(10.0, F32), names=_ax(4))])


def adaptive_avg_pool(nd: int) -> "PrimFunc":
    """``topi.nn.adaptive_pool`` (1-d or 3-d, output half the input): a window sum over
    ``o * 2 + rv``, divided by the window size."""
    b = Builder()
    x = b.placeholder((1, 2) + (4,) * nd, F32, "x")
    rv = [b.reduce_axis(2, f"rv{d}") for d in range(nd)]
    s = b.compute("adaptive_pool_sum", (1, 2) + (2,) * nd, lambda n, c_, *o: sum_(
        x[(n, c_) + tuple(v * const(2, I64) + r.var for v, r in zip(o, rv))], rv), names=_ax(2 + nd))
    out = b.compute("adaptive_pool_avg", s.shape, lambda *i: s[i] / const(float(2 ** nd), F32), names=_ax(2 + nd))
    return b.build([x], [out])


def batch_norm_training() -> "PrimFunc":
    """Training batch_norm: batch mean and variance, normalised output, updated moving stats."""
    b = Builder()
    x = b.placeholder((2, 3, 4), F32, "x")
    params = [b.placeholder((3,), F32, f"x{k}") for k in range(1, 5)]
    mean = lower_into(b, "mean", [x], axis=[0, 2])
    var = lower_into(b, "variance", [x], axis=[0, 2])
    out = b.compute("T_batch_norm", x.shape, lambda n, c_, w: (x[n, c_, w] - mean[c_]) / Call(
        dt.dtype(F32), "sqrt", (var[c_] + const(1e-5, F32),)) * params[0][c_] + params[1][c_], names=_ax(3))
    m1 = b.compute("T_mean", (3,), lambda c_: params[2][c_] * const(0.9, F32) + mean[c_] * const(0.1, F32),
                   names=["ax0"])
    v1 = b.compute("T_var", (3,), lambda c_: params[3][c_] * const(0.9, F32) + var[c_] * const(0.1, F32),
                   names=["ax0"])
    return b.build([x] + params, [out, m1, v1])


def chain(*steps, shape=(4, 6), inputs=1) -> "PrimFunc":
    """Known ops one after another in one PrimFunc: ``(op, attrs)`` steps, each reading the
    previous result (a binary step also reads the next input)."""
    b = Builder()
    xs = [b.placeholder(shape, F32, f"x{k}" if k else "x") for k in range(inputs)]
    cur, extra = xs[0], iter(xs[1:])
    for op, attrs in steps:
        args = [cur] + ([next(extra)] if op in ("add", "multiply", "matmul") else [])
        cur = lower_into(b, op, args, **attrs)
    return b.build(xs, [cur])


def diamond() -> "PrimFunc":
    """exp feeding relu and sigmoid, added: one FuseOps group (relu after exp changes no value)."""
    b = Builder()
    x = b.placeholder((4, 6), F32, "x")
    e = lower_into(b, "exp", [x])
    out = lower_into(b, "add", [lower_into(b, "nn.relu", [e]), lower_into(b, "sigmoid", [e])])
    return b.build([x], [out])


def logsumexp() -> "PrimFunc":
    """``max``, subtract, exp, sum, log, add: a reduction feeding more work."""
    b = Builder()
    x = b.placeholder((4, 6), F32, "x")
    mx = lower_into(b, "max", [x], axis=[1], keepdims=True)
    ex = b.compute("T_exp", (4, 6), lambda i, j: _exp(x[i, j] - mx[i, const(0, I64)]), names=_ax(2))
    total = lower_into(b, "sum", [ex], axis=[1], keepdims=True)
    out = b.compute("T_log", (4, 1), lambda i, j: Call(dt.dtype(F32), "log", (total[i, j],)) + mx[i, j],
                    names=_ax(2))
    return b.build([x], [out])


def nn_cases() -> list:
    """The composite cases."""
    sm = ("nn.softmax", {"axis": 1})
    return [
        Case("nn.attention", lambda: attention(False),
             ((("nn.attention", {"scale": 0.35355339, "causal_mask": None, "window_size": None}),),)),
        # S == Skv: a TopLeft and a BottomRight mask are the same loops, so no answer
        Case("nn.attention(causal)", lambda: attention(True)),
        Case("nn.cross_entropy_with_logits", cross_entropy),
        Case("nn.nll_loss(mean)", lambda: nll_loss("mean")),
        Case("nn.nll_loss(sum)", lambda: nll_loss("sum")),
        Case("nn.nll_loss(none)", lambda: nll_loss("none")),
        Case("nn.instance_norm", instance_norm, ((("nn.instance_norm", {"channel_axis": 1, "axes": [2, 3], "epsilon": 1e-5}),),)),
        Case("nn.lrn", lrn),
        Case("avg pool / 10", avg_pool_wrong_divisor),
        Case("nn.adaptive_avg_pool1d", lambda: adaptive_avg_pool(1),
             ((("nn.adaptive_avg_pool1d", {"output_size": [2], "layout": "NCW"}),),)),
        Case("nn.adaptive_avg_pool3d", lambda: adaptive_avg_pool(3),
             ((("nn.adaptive_avg_pool3d", {"output_size": [2, 2, 2], "layout": "NCDHW"}),),)),
        Case("nn.batch_norm(training)", batch_norm_training),
        Case("mean(axis=[0,2])", lambda: lower("mean", [((3, 4, 5), F32)], axis=[0, 2]),
             ((("mean", {"axis": [0, 2], "keepdims": False}),),)),
        Case("avg_pool2d(ceil, no pad count)", lambda: lower(
            "nn.avg_pool2d", [((1, 2, 7, 7), F32)], pool_size=[3, 3], strides=[2, 2], padding=[1, 1, 1, 1],
            ceil_mode=True, count_include_pad=False),
             ((("nn.avg_pool2d", {"pool_size": [3, 3], "strides": [2, 2], "padding": [1, 1, 1, 1],
                                  "ceil_mode": True, "count_include_pad": False}),),)),
        Case("logsumexp chain", logsumexp),
        Case("exp -> softmax", lambda: chain(("exp", {}), sm)),
        Case("softmax -> matmul", lambda: chain(sm, ("matmul", {}), shape=(4, 4), inputs=2)),
        Case("matmul -> softmax", lambda: chain(("matmul", {}), sm, shape=(4, 4), inputs=2)),
        Case("matmul -> sum", lambda: chain(("matmul", {}), ("sum", {"axis": [1]}), shape=(4, 4), inputs=2)),
        Case("sum -> exp", lambda: chain(("sum", {"axis": [1]}), ("exp", {}))),
        Case("permute_dims -> sum", lambda: chain(("permute_dims", {"axes": [1, 0]}), ("sum", {"axis": [1]}))),
        Case("softmax -> relu -> sum", lambda: chain(sm, ("nn.relu", {}), ("sum", {"axis": [1]}))),
        Case("fused exp -> sum", lambda: chain(("exp", {}), ("sum", {"axis": [1]})),
             ((("exp", {}), ("sum", {"axis": [1], "keepdims": False})),)),
        Case("fused matmul -> add -> relu", lambda: chain(("matmul", {}), ("add", {}), ("nn.relu", {}),
                                                          shape=(4, 4), inputs=3),
             ((("matmul", {}), ("add", {}), ("nn.relu", {})),)),
        Case("fused permute_dims -> exp -> reshape", lambda: chain(
            ("permute_dims", {"axes": [1, 0]}), ("exp", {}), ("reshape", {"shape": [24]})),
             ((("permute_dims", {"axes": [1, 0]}), ("exp", {}), ("reshape", {"shape": [24]})),)),
        Case("fused softmax -> relu", lambda: chain(sm, ("nn.relu", {})),
             ((sm, ("nn.relu", {})),)),
        Case("fused exp -> permute_dims", lambda: chain(("exp", {}), ("permute_dims", {"axes": [1, 0]})),
             ((("exp", {}), ("permute_dims", {"axes": [1, 0]})),)),
        Case("fused reshape -> permute_dims", lambda: chain(
            ("reshape", {"shape": [6, 4]}), ("permute_dims", {"axes": [1, 0]})),
             ((("reshape", {"shape": [6, 4]}), ("permute_dims", {"axes": [1, 0]})),)),
        Case("fused softmax -> log", lambda: chain(sm, ("log", {})), ((sm, ("log", {})),)),
        Case("fused log_softmax -> exp", lambda: chain(("nn.log_softmax", {"axis": 1}), ("exp", {})),
             ((("nn.log_softmax", {"axis": 1}), ("exp", {})),)),
        Case("fused exp -> (relu, sigmoid) -> add", diamond,
             ((("exp", {}), ("nn.relu", {}), ("sigmoid", {}), ("add", {})),)),
        Case("permute_dims -> matmul", lambda: chain(("permute_dims", {"axes": [1, 0]}), ("matmul", {}),
                                                     shape=(4, 4), inputs=2)),
    ]

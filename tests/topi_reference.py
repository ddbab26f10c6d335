"""numpy reference implementations of the tir.topi ops, used by the tests (numpy only)."""
from __future__ import annotations

import itertools
import math

import numpy as np


def to_nc(x, layout):
    """Transpose a tensor in ``layout`` (e.g. NHWC) to N, C, spatial... order."""
    spatial = [c for c in layout if c not in "NC"]
    return np.transpose(x, [layout.index(c) for c in "NC" + "".join(spatial)])


def from_nc(x, layout):
    spatial = [c for c in layout if c not in "NC"]
    src = "NC" + "".join(spatial)
    return np.transpose(x, [src.index(c) for c in layout])


def kernel_to_oi(w, layout, spatial):
    return np.transpose(w, [layout.index(c) for c in "OI" + spatial])


def conv_nc(x, w, strides, before, after, dilation, groups):
    """N-d grouped convolution, data (N, C, *S), kernel (O, I/groups, *K)."""
    nd = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(before, after)))
    out_sp = [(xp.shape[2 + i] - (w.shape[2 + i] - 1) * dilation[i] - 1) // strides[i] + 1 for i in range(nd)]
    o, ig = w.shape[0], w.shape[1]
    og = o // groups
    out = np.zeros((x.shape[0], o, *out_sp), dtype=np.float64)
    for koff in itertools.product(*[range(k) for k in w.shape[2:]]):
        sl = tuple(slice(koff[i] * dilation[i], koff[i] * dilation[i] + (out_sp[i] - 1) * strides[i] + 1, strides[i])
                   for i in range(nd))
        for g in range(groups):
            patch = xp[(slice(None), slice(g * ig, (g + 1) * ig)) + sl]
            wk = w[(slice(g * og, (g + 1) * og), slice(None)) + koff]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, wk)
    return out


def pool_nc(x, kind, ks, st, dl, before, after, ceil_mode, count_include_pad):
    """Max/avg pooling of (N, C, *S) data with TVM's window counting."""
    nd = x.ndim - 2
    sizes = x.shape[2:]
    out_sp = [(sizes[i] + before[i] + after[i] - (ks[i] - 1) * dl[i] - 1 + (st[i] - 1 if ceil_mode else 0)) // st[i] + 1
              for i in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(out_sp), dtype=np.float64)
    for o in itertools.product(*[range(e) for e in out_sp]):
        vals = []
        starts = [o[i] * st[i] - before[i] for i in range(nd)]
        for koff in itertools.product(*[range(k) for k in ks]):
            pos = [starts[i] + koff[i] * dl[i] for i in range(nd)]
            if all(0 <= p < s for p, s in zip(pos, sizes)):
                vals.append(x[(slice(None), slice(None)) + tuple(pos)])
        if kind == "max":
            out[(slice(None), slice(None)) + o] = np.max(vals, axis=0) if vals else -np.finfo(np.float32).max
            continue
        total = np.sum(vals, axis=0) if vals else 0.0
        num = 1
        for i in range(nd):
            end = starts[i] + (ks[i] - 1) * dl[i]
            if count_include_pad:
                end = min(end, sizes[i] + after[i] - 1)
                num *= (end - starts[i]) // dl[i] + 1
            else:
                end = min(end, sizes[i] - 1)
                first = starts[i] + max(-(-(-starts[i]) // dl[i]), 0) * dl[i]  # first tap inside
                num *= int(math.trunc((end - first) / dl[i])) + 1
        with np.errstate(divide="ignore", invalid="ignore"):  # TVM divides by a zero count too
            out[(slice(None), slice(None)) + o] = np.divide(total, num if count_include_pad else max(num, 1))
    return out


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def erf(x):
    return np.vectorize(math.erf)(x).astype(x.dtype)


UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh, "erf": erf, "abs": np.abs,
    "negative": np.negative, "sin": np.sin, "cos": np.cos, "floor": np.floor, "ceil": np.ceil,
    "round": np.round, "square": np.square, "sign": np.sign,
    "nn.relu": lambda v: np.maximum(v, 0), "nn.silu": lambda v: v / (1 + np.exp(-v)),
    "nn.gelu": lambda v: 0.5 * v * (1 + erf(v / np.sqrt(2))),
    "nn.gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(np.sqrt(2 / np.pi) * (v + 0.044715 * v ** 3))),
    "nn.selu": lambda v: 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * (np.exp(v) - 1)),
}

BINARY = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "maximum": np.maximum, "minimum": np.minimum, "power": np.power, "floor_divide": np.floor_divide,
    "equal": np.equal, "less": np.less, "greater_equal": np.greater_equal, "greater": np.greater,
    "not_equal": np.not_equal, "less_equal": np.less_equal,
}


def layer_norm(x, gamma, beta, axes, epsilon, center, scale):
    """``(x - mean) / sqrt(var + eps) * gamma + beta`` over ``axes``; gamma/beta have the reduced shape."""
    axes = sorted(a % x.ndim for a in axes)
    out = (x - x.mean(axis=tuple(axes), keepdims=True)) / np.sqrt(x.var(axis=tuple(axes), keepdims=True) + epsilon)
    shape = [x.shape[d] if d in axes else 1 for d in range(x.ndim)]
    out = out * gamma.reshape(shape) if scale else out
    return out + beta.reshape(shape) if center else out


def rms_norm(x, weight, axes, epsilon):
    axes = sorted(a % x.ndim for a in axes)
    rms = np.sqrt((x * x).mean(axis=tuple(axes), keepdims=True) + epsilon)
    return x / rms * weight.reshape([x.shape[d] if d in axes else 1 for d in range(x.ndim)])


def group_norm(x, gamma, beta, groups, channel_axis, axes, epsilon, center, scale):
    """Group norm: channels split into ``groups``; statistics over a group's channels and ``axes``."""
    ca = channel_axis % x.ndim
    shape = list(x.shape)
    shape[ca:ca + 1] = [groups, x.shape[ca] // groups]
    xg = x.reshape(shape)
    red = tuple([ca + 1] + [a % x.ndim + (a % x.ndim > ca) for a in axes])
    out = (xg - xg.mean(axis=red, keepdims=True)) / np.sqrt(xg.var(axis=red, keepdims=True) + epsilon)
    pshape = [x.shape[ca] if d == ca else 1 for d in range(x.ndim)]
    out = out.reshape(x.shape)
    out = out * gamma.reshape(pshape) if scale else out
    return out + beta.reshape(pshape) if center else out


def _layout_axes(layout):
    """``"NCHW4c"`` -> ``[("N", 1), ("C", 1), ("H", 1), ("W", 1), ("c", 4)]`` (factor 1 for primal axes)."""
    out, digits = [], ""
    for ch in layout:
        if ch.isdigit():
            digits += ch
            continue
        out.append((ch, int(digits) if digits else 1))
        digits = ""
    return out


def layout_transform(x, src, dst, pad_value=0.0):
    """Re-lay ``x`` from layout ``src`` to ``dst`` elementwise: each destination index -> its
    primal coordinates -> the source index (``pad_value`` past a primal extent)."""
    sa, da = _layout_axes(src), _layout_axes(dst)
    primal = {a: e for (a, _), e in zip(sa, x.shape) if a.isupper()}
    for (a, f), e in zip(sa, x.shape):
        if a.islower():
            primal[a.upper()] *= e
    dsub = {a.upper(): f for a, f in da if a.islower()}
    ssub = {a.upper(): f for a, f in sa if a.islower()}
    shape = [f if a.islower() else -(-primal[a] // dsub[a]) if a in dsub else primal[a] for a, f in da]
    out = np.full(shape, pad_value, dtype=x.dtype)
    for o in itertools.product(*[range(e) for e in shape]):
        pos = dict(zip([a for a, _ in da], o))
        value = {a: pos[a] * dsub[a] + pos[a.lower()] if a in dsub else pos[a] for a in primal}
        if any(value[a] >= primal[a] for a in primal):
            continue
        idx = [value[a.upper()] % f if a.islower() else value[a] // ssub[a] if a in ssub else value[a]
               for a, f in sa]
        out[o] = x[tuple(idx)]
    return out


def adaptive_avg_pool2d(x_nc, out_hw):
    """Cell ``i`` averages rows ``[i*H//O, ceil((i+1)*H/O))`` (and the same for columns)."""
    h, w = x_nc.shape[2:]
    out = np.zeros(x_nc.shape[:2] + tuple(out_hw), dtype=np.float64)
    for i, j in itertools.product(range(out_hw[0]), range(out_hw[1])):
        h0, h1 = i * h // out_hw[0], -(-(i + 1) * h // out_hw[0])
        w0, w1 = j * w // out_hw[1], -(-(j + 1) * w // out_hw[1])
        out[:, :, i, j] = x_nc[:, :, h0:h1, w0:w1].mean(axis=(2, 3))
    return out


def conv_transpose_nc(x, w, strides, before, after, output_padding, dilation, groups):
    """Transposed convolution of (N, Cin, *S) data and an (Cin, Cout/groups, *K) kernel: every
    input pixel scatters itself times the kernel, then ``before``/``after`` are cropped."""
    nd = x.ndim - 2
    cin, og = w.shape[0], w.shape[1]
    ig = cin // groups
    ks = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * strides[i] + (ks[i] - 1) * dilation[i] + 1 + output_padding[i] for i in range(nd)]
    out = np.zeros((x.shape[0], og * groups, *full), dtype=np.float64)
    for pos in itertools.product(*[range(e) for e in x.shape[2:]]):
        for koff in itertools.product(*[range(k) for k in ks]):
            tgt = tuple(p * s + q * d for p, q, s, d in zip(pos, koff, strides, dilation))
            for g in range(groups):
                xv = x[(slice(None), slice(g * ig, (g + 1) * ig)) + pos]
                wv = w[(slice(g * ig, (g + 1) * ig), slice(None)) + koff]
                out[(slice(None), slice(g * og, (g + 1) * og)) + tgt] += xv @ wv
    crop = tuple(slice(b, f - a) for b, a, f in zip(before, after, full))
    return out[(slice(None), slice(None)) + crop]

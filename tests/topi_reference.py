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
        vals, counts = [], []
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
                num *= int(math.trunc((end - max(starts[i], 0)) / dl[i])) + 1
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

"""numpy references of the 2-d pooling gradients (:mod:`.pool_grad`), written from the
ops' definition: the output gradient of each window goes back to the window's elements
inside the data (after the before-padding ``pad``, window ``k``, stride ``s``).

Arrays hold the two pooled axes last (callers move them there); every other axis is a
batch axis. Results are float64.
"""
from __future__ import annotations

import numpy as np


def _windows(out: int, size: int, k: int, s: int, pad: int):
    """(window index, first, end) of every window along one axis, clipped to the data."""
    for o in range(out):
        start = o * s - pad
        yield o, start, max(start, 0), min(start + k, size)


def max_grad_ref(grad: np.ndarray, data: np.ndarray, k, s, pad) -> np.ndarray:
    """Max pooling: each window's gradient goes to the first maximum of the window's data
    elements in row-major order (the smaller flat index wins a tie); a window without data
    element passes nothing."""
    out = np.zeros(data.shape, dtype=np.float64)
    lead = data.shape[:-2]
    flat_out = out.reshape((-1,) + data.shape[-2:])
    flat_data = data.reshape((-1,) + data.shape[-2:])
    flat_grad = grad.reshape((-1,) + grad.shape[-2:]).astype(np.float64)
    rows = np.arange(flat_data.shape[0])
    for oh, _, h0, h1 in _windows(grad.shape[-2], data.shape[-2], k[0], s[0], pad[0]):
        for ow, _, w0, w1 in _windows(grad.shape[-1], data.shape[-1], k[1], s[1], pad[1]):
            if h1 <= h0 or w1 <= w0:
                continue
            win = flat_data[:, h0:h1, w0:w1].reshape(len(rows), -1)
            first = win.argmax(axis=1)  # the first occurrence of the maximum
            np.add.at(flat_out, (rows, h0 + first // (w1 - w0), w0 + first % (w1 - w0)), flat_grad[:, oh, ow])
    return flat_out.reshape(lead + data.shape[-2:])


def avg_grad_ref(grad: np.ndarray, size, k, s, pad, include_pad: bool) -> np.ndarray:
    """Average pooling: each window's gradient divided by the window size (``k_h * k_w``
    with ``include_pad``, else the number of its data elements, at least 1) is added to
    every data element of the window."""
    out = np.zeros(grad.shape[:-2] + tuple(size), dtype=np.float64)
    g = grad.astype(np.float64)
    for oh, _, h0, h1 in _windows(grad.shape[-2], size[0], k[0], s[0], pad[0]):
        for ow, _, w0, w1 in _windows(grad.shape[-1], size[1], k[1], s[1], pad[1]):
            if h1 <= h0 or w1 <= w0:
                continue
            div = k[0] * k[1] if include_pad else max((h1 - h0) * (w1 - w0), 1)
            out[..., h0:h1, w0:w1] += (g[..., oh, ow] / div)[..., None, None]
    return out


def _moved(a: np.ndarray, axes) -> np.ndarray:
    return np.moveaxis(a, axes, (-2, -1))


def pool_grad_ref(kind: str, cand, grad, data, axes) -> np.ndarray:
    """The gradient of ``kind`` for the candidate ``((s, before, k) of H, of W, include_pad)``
    with the pooled ``axes`` anywhere."""
    (s_h, b_h, k_h), (s_w, b_w, k_w), include = cand
    k, s, pad = (k_h, k_w), (s_h, s_w), (b_h, b_w)
    g = _moved(grad, axes)
    if kind == "max":
        ref = max_grad_ref(g, _moved(data, axes), k, s, pad)
    else:
        ref = avg_grad_ref(g, tuple(data.shape[a] for a in axes), k, s, pad, include)
    return np.moveaxis(ref, (-2, -1), axes)

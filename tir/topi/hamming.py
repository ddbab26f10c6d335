"""``hamming_window`` as ``topi.hamming_window`` writes it: arange, ``2 * pi * i / (N - 1)``,
cos, ``alpha - beta * cos`` in float64 cast back, and for a periodic window one more value
computed (``N = window_size + 1``) and sliced away."""
from __future__ import annotations

import math

from .. import dtype as dt
from ..builder import Builder
from ..expr import Call, cast, const
from .common import OpError


def hamming_window(b: Builder, *, window_size, periodic=True, alpha=0.54, beta=0.46, dtype="float32"):
    """The window of ``window_size`` values; one value is the constant 1 (as TVM)."""
    ty = dt.dtype(dtype)
    if not isinstance(window_size, int) or window_size < 1 or not ty.is_float:
        raise OpError("hamming_window", "window_size", f"needs an int >= 1 and a float dtype, got "
                      f"{window_size!r}, {ty}")
    if window_size == 1:
        return b.compute("T_full", [1], lambda i: const(1.0, ty))
    n = window_size + 1 if periodic else window_size
    f64 = dt.float64
    names = ["ax0"]
    ar = b.compute("T_arange", [n], lambda i: cast(i, ty), names=names)
    ang = b.compute("T_multiply", [n], lambda i: const(2 * math.pi, ty) * ar[i], names=names)
    # TVM folds the division by 1 (n == 2) and keeps the block as a copy
    div = b.compute("T_divide", [n], lambda i: ang[i] / const(float(n - 1), ty) if n > 2 else ang[i], names=names)
    cos = b.compute("compute", [n], lambda i: Call(ty, "cos", (div[i],)))
    scaled = b.compute("T_multiply", [n], lambda i: const(float(beta), f64) * cast(cos[i], f64), names=names)
    sub = b.compute("T_subtract", [n], lambda i: const(float(alpha), f64) - scaled[i], names=names)
    window = b.compute("compute", [n], lambda i: cast(sub[i], ty))
    if not periodic:
        return window
    return b.compute("T_strided_slice", [window_size], lambda i: window[i], names=names)

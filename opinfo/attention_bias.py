"""nn.attention with a bias (``nn.attention_bias``), recognised by what the whole PrimFunc
computes, as :mod:`.attention` recognises nn.attention.

TVM legalizes it like nn.attention with one more step after the scaling: the scores are
reshaped to (B, H, S, Skv), the bias tensor added, and reshaped back. So:

- the signature must be q (B, S, H, D), k (B, Skv, H, D), v (B, Skv, H, Dv),
  bias (B, H, S, Skv) -> (B, S, H, Dv) (a broadcast bias is not tried: abstain);
- the scaling is read from the IR as for nn.attention (one ``x / sqrt(D)`` or one ``x * c``);
- the function is run on random inputs and compared with numpy's
  ``softmax(q k^T * scale + bias)`` v, for each causal mask the IR allows; exactly one must
  agree (TopLeft and BottomRight coincide when S == Skv: abstain).
"""
from __future__ import annotations

import math

import numpy as np

from tir.function import PrimFunc

from .attention import attention_shapes, reference, run_tolerance, stored_scalings
from .info import OpInfo, Operand
from .recognize.running import poisoned, run


def _bias_fits(shapes) -> bool:
    """The bias (the fourth input) is (B, H, S, Skv)."""
    (b, s, h, _), (_, skv, _, _), bias = shapes[0], shapes[1], shapes[3]
    return list(bias) == [b, h, s, skv]


def _bias_fits_broadcast(shapes) -> bool:
    """The bias is (B, H, S, Skv), its batch the output's or 1 (see
    :func:`.attention._fits_broadcast`)."""
    (_, s, h, _), (_, skv, _, _), bias = shapes[0], shapes[1], shapes[3]
    return bias[0] in (shapes[-1][0], 1) and list(bias[1:]) == [h, s, skv]


def _scale(func: PrimFunc, d: int) -> "tuple | None":
    """(scale attribute, scale value) read from the IR, or None."""
    scalings, masked = stored_scalings(func)
    if len(scalings) != 1:
        return None
    form, c = scalings[0]
    if form == "sqrt":
        return (None, 1.0 / math.sqrt(d), masked) if c == d else None
    return c, c, masked


def _agreeing(func, bufs, shapes, scale, masks: list, runs: int = 2) -> list:
    rng = np.random.default_rng(11)
    for _ in range(runs):
        ins = [rng.standard_normal(sh).astype(str(bf.dtype)) for sh, bf in zip(shapes[:4], bufs[:4])]
        got = run(func, ins + [poisoned(shapes[4], str(bufs[4].dtype))])
        if got is None:
            return []
        tol = run_tolerance(bufs)
        masks = [m for m in masks
                 if np.allclose(got, reference(*ins[:3], scale, m, bias=ins[3]), rtol=tol, atol=tol)]
    return masks


def recognize_attention_bias(func: PrimFunc) -> "OpInfo | None":
    """The nn.attention_bias op ``func`` computes, or None (see the module doc)."""
    found = attention_shapes(func, 5, _bias_fits, _bias_fits_broadcast)
    if found is None:
        return None
    bufs, shapes, larger = found
    (b, s, h, d), (_, skv, _, _), (_, _, _, dv), bias, _ = shapes
    read = _scale(func, d)
    if read is None:
        return None
    scale_attr, scale, masked = read
    agree = _agreeing(func, bufs, shapes, scale, ["TopLeft", "BottomRight"] if masked else [None])
    for big in larger if len(agree) == 1 else ():
        agree = _agreeing(func, bufs, big, scale, agree, runs=1)
    if len(agree) != 1:
        return None
    names = [x.name for x in bufs]
    roles = ("query", "key", "value", "bias")
    return OpInfo("nn.attention_bias", {"scale": scale_attr, "causal_mask": agree[0], "window_size": None},
                  tuple(Operand(r, n, i) for i, (r, n) in enumerate(zip(roles, names))),
                  Operand("output", names[4], 4))

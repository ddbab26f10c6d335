"""nn.attention, recognised by what the whole PrimFunc computes.

Relax legalizes ``nn.attention(q, k, v, scale, causal_mask)`` into one PrimFunc of about
fifteen blocks: transposes and reshapes of q, k, v to (batch*heads, seq, dim), a batch
matmul q @ k^T, the scaling (``/ sqrt(head_dim)`` when ``scale`` is None, ``* scale``
otherwise), a softmax (or, with a causal mask, trilu-masked exp and sum), a second batch
matmul with v and the transpose back. Its parts are not ops of their own (the matmuls read
intermediates transposed), so the structural decomposition does not explain it. Instead:

- the signature must be q (B, S, H, D), k (B, Skv, H, D), v (B, Skv, H, Dv) -> (B, S, H, Dv);
- the scaling is read from the IR: exactly one ``x / sqrt(c)`` with c == D (scale None) or
  one ``x * c`` with a float constant c (scale c), stored or inside a stored value (the
  same one repeated where ``compute_inline`` copied it);
- the function is run by the interpreter on random inputs and compared with attention
  computed by numpy for each causal mask the IR allows: none without a masking Select
  (a full BottomRight mask computes the same numbers, so the Select decides), TopLeft or
  BottomRight with one. Exactly one mask must agree; when both do (they coincide when
  S == Skv, in identical IR), abstain.

Symbolic extents are bound to small values for the run, and the reading is checked once
more with them past every integer constant of the body (a mask ``i < 12`` on a symbolic
axis is invisible at 2). Functions whose run would be large are not tried (abstain).
"""
from __future__ import annotations

import math

import numpy as np

from tir.expr import Call, Cast, Div, FloatImm, Mul, Select
from tir.function import PrimFunc
from tir.functor import post_order_visit
from tir.stmt import BufferStore

from .affine import float_of
from .info import OpInfo, Operand
from .recognize.running import concrete_shapes, poisoned, run, shapes_beyond

MAX_WORK = 1 << 27
"""Largest B*H*S*Skv*(D+Dv) the interpreter is asked to run: BERT-base's (1, 128, 12, 64) and a
ViT's (1, 197, 12, 64) run in 1-2.5 s within 350 MB (4,000,000 refused both)."""
SYMBOLIC_VALUES = (2, 1)
"""Values tried for symbolic extents (1 when the other inputs fix a batch of 1)."""


def _fits(shapes: list) -> bool:
    """q, k, v (the first three) and the output (the last) fit attention; inputs between
    them are not checked."""
    (b, s, h, d), (bk, skv, hk, dk), (bv, skv2, hv, dv), out = shapes[:3] + shapes[-1:]
    return (bk, hk, dk) == (b, h, d) and (bv, skv2, hv) == (b, skv, h) and tuple(out) == (b, s, h, dv)


def _fits_broadcast(shapes: list) -> bool:
    """As :func:`_fits`, the batch of q, k and v each the output's or 1 (Relax broadcasts a
    batch of 1: with a symbolic query batch, keys of batch 1 serve every query; at the
    small binding both are 1)."""
    (b, s, h, d), (bk, skv, hk, dk), (bv, skv2, hv, dv), out = shapes[:3] + shapes[-1:]
    batch = out[0]
    return all(x in (batch, 1) for x in (b, bk, bv)) and (hk, dk) == (h, d) and (skv2, hv) == (skv, h) \
        and tuple(out) == (batch, s, h, dv)


def _shapes(bufs, value: int) -> "list | None":
    """The shapes with every symbolic extent bound to ``value``, if they fit attention."""
    shapes = concrete_shapes(bufs, value)
    return [list(sh) for sh in shapes] if shapes is not None and _fits(shapes) else None


def _work(shapes) -> int:
    (_, s, h, d), (_, skv, _, _), (_, _, _, dv) = shapes[:3]
    return shapes[-1][0] * h * s * skv * (d + dv)


def attention_shapes(func: PrimFunc, n_buffers: int, fits=lambda sh: True,
                     fits_larger=lambda sh: True) -> "tuple | None":
    """(buffers, concrete shapes, larger shapes) of a function of ``n_buffers`` float 4-D
    buffers laid out as attention's (q, k, v, ..., output) small enough to run, else None.
    The larger shapes (a list, :func:`.recognize.running.shapes_beyond`) bind symbolic
    extents past the body's constants, where a reading made on the small shapes must hold
    too; a function too large to run there is not tried either."""
    bufs = [func.buffer_map[p] for p in func.params if p in func.buffer_map]
    if len(bufs) != n_buffers or len(bufs) != len(func.params):
        return None
    if any(not str(b.dtype).startswith("float") or len(b.shape) != 4 for b in bufs):
        return None
    value = next((v for v in SYMBOLIC_VALUES if _shapes(bufs, v) is not None), None)
    if value is None:
        return None
    shapes = _shapes(bufs, value)
    if not fits(shapes) or _work(shapes) > MAX_WORK:
        return None
    larger = [[list(sh) for sh in big]
              for big in shapes_beyond(func, bufs, value, lambda sh: _fits_broadcast(sh) and fits_larger(sh))]
    if any(_work(big) > MAX_WORK for big in larger):
        return None
    return bufs, shapes, larger


def stored_scalings(func: PrimFunc) -> tuple:
    """(the distinct scalings of stored values: ('sqrt', c) for an ``x / sqrt(c)`` and
    ('mul', c) for an ``x * c`` of a float constant, whether a stored value holds a Select:
    the trilu blocks of a causal mask). Both are looked for inside stored values too:
    ``compute_inline`` of the scaling block moves it into the masked max and subtraction
    (``max(m, select(k <= i, s / sqrt(4), 0))``), once per consumer."""
    found, selects = [], []

    def visit(node):
        if isinstance(node, Select):
            selects.append(node)
        elif isinstance(node, Div) and isinstance(node.b, Call) and node.b.op == "sqrt" and len(node.b.args) == 1:
            c = float_of(node.b.args[0])
            if c is not None and ("sqrt", c) not in found:
                found.append(("sqrt", c))
        elif isinstance(node, Mul) and node.dtype.is_float:
            for side in (node.a, node.b):
                c = float_of(side)
                if c is not None and isinstance(side, (FloatImm, Cast)) and ("mul", c) not in found:
                    found.append(("mul", c))

    def store(node):
        if isinstance(node, BufferStore):
            post_order_visit(node.value, visit)
    post_order_visit(func.body, store)
    return found, bool(selects)


def run_tolerance(bufs) -> float:
    """How close a run must come to the float64 reference: float32 throughout, 1e-4; any
    buffer of lower precision (float16 inputs with a float32 output: TVM's batch matmuls are
    computed in float16 and cast), 2e-2. Masks and scalings the runs choose between differ
    by far more."""
    return 1e-4 if all(str(b.dtype) in ("float32", "float64") for b in bufs) else 2e-2


def reference(q, k, v, scale: float, causal: "str | None", bias=None):
    """Attention in float64, (B, S, H, Dv); ``bias`` (B, H, S, Skv) is added to the scaled
    scores (nn.attention_bias). A batch of 1 is broadcast."""
    qt, kt, vt = (a.astype(np.float64).transpose(0, 2, 1, 3) for a in (q, k, v))
    p = qt @ kt.transpose(0, 1, 3, 2) * scale
    if bias is not None:
        p = p + bias.astype(np.float64)
    s, skv = p.shape[-2], p.shape[-1]
    if causal is None:
        e = np.exp(p - p.max(axis=-1, keepdims=True))
    else:
        offset = 0 if causal == "TopLeft" else abs(s - skv)
        mask = np.arange(skv)[None, :] <= np.arange(s)[:, None] + offset
        pm = np.where(mask, p, 0.0)
        e = np.where(mask, np.exp(pm - pm.max(axis=-1, keepdims=True)), 0.0)
    w = e / e.sum(axis=-1, keepdims=True)
    return (w @ vt).transpose(0, 2, 1, 3)


def recognize_attention(func: PrimFunc) -> "OpInfo | None":
    """The nn.attention op ``func`` computes, or None (see the module doc)."""
    found = attention_shapes(func, 4)
    if found is None:
        return None
    bufs, shapes, larger = found
    (b, s, h, d), (_, skv, _, _), (_, _, _, dv), _ = shapes
    scalings, masked = stored_scalings(func)
    if len(scalings) != 1:
        return None
    form, c = scalings[0]
    if form == "sqrt":
        if c != d:
            return None
        scale_attr, scale = None, 1.0 / math.sqrt(d)
    else:
        scale_attr, scale = c, c
    masks = ["TopLeft", "BottomRight"] if masked else [None]
    agree = _agreeing_masks(func, bufs, shapes, scale, masks)
    for big in larger if agree and len(agree) == 1 else ():
        agree = _agreeing_masks(func, bufs, big, scale, agree, runs=1)
    if agree is None or len(agree) != 1:
        return None
    names = [x.name for x in bufs]
    return OpInfo("nn.attention", {"scale": scale_attr, "causal_mask": agree[0], "window_size": None},
                  (Operand("query", names[0], 0), Operand("key", names[1], 1), Operand("value", names[2], 2)),
                  Operand("output", names[3], 3))


def _agreeing_masks(func, bufs, shapes, scale, agree: list, runs: int = 2) -> "list | None":
    rng = np.random.default_rng(7)
    for _ in range(runs):
        ins = [rng.standard_normal(sh).astype(str(bf.dtype)) for sh, bf in zip(shapes[:3], bufs[:3])]
        got = run(func, ins + [poisoned(shapes[3], str(bufs[3].dtype))])
        if got is None:
            return None
        tol = run_tolerance(bufs)
        agree = [m for m in agree if np.allclose(got, reference(*ins, scale, m), rtol=tol, atol=tol)]
        if not agree:
            return agree
    return agree

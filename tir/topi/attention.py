"""``nn.attention`` and ``nn.attention_bias`` as TVM 0.27's legalization writes them: the
transposes and reshapes around the two matmuls folded into the reads, the softmax over the
keys with the causal mask and the bias where asked."""
from __future__ import annotations

from ..buffer import Buffer
from ..builder import Builder, index, max_, sum_
from ..dtype import dtype
from ..expr import LE, Cast, Max, PrimExpr, Select, as_int
from . import softmax as sm
from .common import OpError, ShapeError, add, cast_to, differ, mul, sub
from .nn_extra import _call, _f, _same_extent

OPS: dict = {}
"""Op name -> lowering function, merged into ``ops.op_table``."""


# ---------------------------------------------------------------- nn.attention(_bias)
_HALF = ("float16", "bfloat16")


def _batch_of(row, heads, batch, own_batch):
    """The batch a row ``b*H + h`` of the flattened scores reads from a tensor of batch
    ``own_batch`` (TVM's reshape wraps it: a batch of 1 serves every row)."""
    if as_int(own_batch) == 1:
        return index(0)
    whole = row // heads if as_int(heads) != 1 else row
    return whole if _same_extent(own_batch, batch) else whole % own_batch


def _check_attention(op: str, q: Buffer, k: Buffer, v: Buffer, window_size):
    if window_size is not None:
        raise OpError(op, "window_size", f"sliding windows are not lowered, got {window_size!r}")
    if q.ndim != 4 or k.ndim != 4 or v.ndim != 4:
        raise OpError(op, "query", "query, key and value must be 4-d (batch, seq, heads, dim)")
    for name, (a, bb) in (("key", (q.shape[3], k.shape[3])), ("key", (q.shape[2], k.shape[2])),
                          ("value", (k.shape[1], v.shape[1])), ("value", (q.shape[2], v.shape[2]))):
        if differ(a, bb):
            raise ShapeError(op, name, f"extents {a} and {bb} must agree")


def _masked_softmax(b: Builder, p: Buffer, offset: PrimExpr) -> Buffer:
    """TVM's causal softmax: trilu, max, exp of the difference, trilu again, sum, divide."""
    names = [f"i{d}" for d in range(3)]
    red_names = [f"ax{d}" for d in range(3)]
    keep = [p.shape[0], p.shape[1], index(1)]

    def lower_part(src):
        return b.compute("trilu", p.shape, lambda *i: Select(LE(i[2], add(i[1], offset)), src[i], _f(0.0, p.dtype)),
                         names=names)

    masked = lower_part(p)
    k1 = b.reduce_axis(p.shape[2], "k2")
    top = b.compute("trilu_red", keep, lambda i0, i1, i2: max_(masked[i0, i1, k1.var], k1), names=red_names)
    diff = b.compute("T_subtract", p.shape, lambda *i: masked[i] - top[i[0], i[1], index(0)], names=red_names)
    ex = b.compute("compute", p.shape, lambda *i: _call("exp", diff[i]), names=names)
    ex_masked = lower_part(ex)
    k2 = b.reduce_axis(p.shape[2], "k2")
    total = b.compute("trilu_red", keep, lambda i0, i1, i2: sum_(ex_masked[i0, i1, k2.var], k2), names=red_names)
    return b.compute("T_divide", p.shape, lambda *i: ex_masked[i] / total[i[0], i[1], index(0)], names=red_names)


def _causal_offset(op: str, causal_mask, s, skv) -> PrimExpr:
    if causal_mask == "TopLeft":
        return index(0)
    if causal_mask == "BottomRight":
        if as_int(s) is not None and as_int(skv) is not None:
            return index(abs(as_int(s) - as_int(skv)))
        return Max(sub(s, skv), sub(skv, s))
    raise OpError(op, "causal_mask", f"expected None, 'TopLeft' or 'BottomRight', got {causal_mask!r}")


def attention(b: Builder, q: Buffer, k: Buffer, v: Buffer, bias: "Buffer | None", *, op: str, scale=None,
              causal_mask=None, window_size=None) -> Buffer:
    """``softmax(q k^T * scale (+ bias), masked) v`` over (batch*heads) rows, as Relax
    legalizes ``nn.attention``: scores ``/ sqrt(head_dim)`` when ``scale`` is None."""
    _check_attention(op, q, k, v, window_size)
    batch, seq, heads, dim = q.shape
    seq_kv, dim_v = k.shape[1], v.shape[3]
    rows = mul(batch, heads)
    h_of = (lambda r: r % heads) if as_int(heads) != 1 else (lambda r: index(0))
    red = b.reduce_axis(dim, "k")
    scores = b.compute("T_batch_matmul_NT", [rows, seq, seq_kv], lambda r, i, j: sum_(
        q[_batch_of(r, heads, batch, batch), i, h_of(r), red.var]
        * k[_batch_of(r, heads, batch, k.shape[0]), j, h_of(r), red.var], red), names=["b", "i", "j"])
    names = [f"ax{d}" for d in range(3)]
    if scale is None:
        root = _call("sqrt", _f(as_int(dim), q.dtype) if as_int(dim) is not None else Cast(q.dtype, dim))
        p = b.compute("T_divide", scores.shape, lambda *i: scores[i] / root, names=names)
    else:
        # Relax multiplies by a float32 constant: half-precision scores are promoted there
        # and everything after them is float32 (the output too)
        wide = dtype("float32") if str(q.dtype) in _HALF else q.dtype
        p = b.compute("T_multiply", scores.shape, lambda *i: cast_to(scores[i], wide) * _f(scale, wide), names=names)
    if bias is not None:
        p = _add_bias(b, p, bias, op, heads, batch)
    if causal_mask is None:
        weights = sm.softmax(b, p, axis=-1)
    else:
        weights = _masked_softmax(b, p, _causal_offset(op, causal_mask, seq, seq_kv))
    red2 = b.reduce_axis(seq_kv, "k")
    out = b.compute("T_batch_matmul_NN", [rows, seq, dim_v], lambda r, i, j: sum_(
        weights[r, i, red2.var] * cast_to(v[_batch_of(r, heads, batch, v.shape[0]), red2.var, h_of(r), j],
                                      weights.dtype), red2),
        names=["b", "i", "j"])
    return b.compute("T_transpose", [batch, seq, heads, dim_v],
                     lambda n, s, h, d: out[add(mul(n, heads), h), s, d], names=[f"ax{d}" for d in range(4)])


def _add_bias(b: Builder, p: Buffer, bias: Buffer, op: str, heads, batch) -> Buffer:
    """Scores plus the bias, read as (B, H, S, Skv) (a 2-d bias is (B, Skv), a 3-d one
    (B, S, Skv)), extents of 1 broadcast."""
    if bias.ndim not in (2, 3, 4):
        raise OpError(op, "bias", f"must be 2-, 3- or 4-d, got rank {bias.ndim}")

    def at(r, i, j):
        full = [r // heads if as_int(heads) != 1 else r, r % heads if as_int(heads) != 1 else index(0), i, j]
        picked = {2: [0, 3], 3: [0, 2, 3], 4: [0, 1, 2, 3]}[bias.ndim]
        return tuple(index(0) if as_int(bias.shape[n]) == 1 else full[d] for n, d in enumerate(picked))

    return b.compute("T_add", p.shape, lambda r, i, j: p[r, i, j] + cast_to(bias[at(r, i, j)], p.dtype),
                     names=[f"ax{d}" for d in range(3)])


def nn_attention(b: Builder, query, key, value, *, scale=None, causal_mask=None, window_size=None):
    return attention(b, query, key, value, None, op="nn.attention", scale=scale, causal_mask=causal_mask,
                     window_size=window_size)


def nn_attention_bias(b: Builder, query, key, value, bias, *, scale=None, causal_mask=None, window_size=None):
    return attention(b, query, key, value, bias, op="nn.attention_bias", scale=scale, causal_mask=causal_mask,
                     window_size=window_size)


OPS["nn.attention"] = nn_attention
OPS["nn.attention_bias"] = nn_attention_bias
